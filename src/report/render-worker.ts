import {parentPort} from 'node:worker_threads'
import {renderChart, preloadChartLibraries, type VegaLiteSpec} from './render.js'

/** Worker side of the chart pool: loads vega, vega-lite and resvg once, then renders on request. */
const port = parentPort
if (!port) throw new Error('render-worker must run in a worker thread')
void preloadChartLibraries()
port.on('message', async (msg: {id: number; spec: VegaLiteSpec}) => {
  try {
    const {svg, png} = await renderChart(msg.spec)
    port.postMessage({id: msg.id, svg, png}, [png.buffer as ArrayBuffer])
  } catch (error) {
    port.postMessage({id: msg.id, error: (error as Error).message})
  }
})
