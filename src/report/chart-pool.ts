import {existsSync} from 'node:fs'
import {availableParallelism} from 'node:os'
import {fileURLToPath} from 'node:url'
import {Worker} from 'node:worker_threads'
import {renderChart, type RenderedChart, type VegaLiteSpec} from './render.js'

/** Chart rendering on worker threads: the libraries load while the phases compute. */
export interface ChartRenderer {
  render(spec: VegaLiteSpec): Promise<RenderedChart>
  close(): Promise<void>
}

/** Render workers: one, because loading vega costs about 0.4 s of CPU per worker and the runner already overlaps rendering with the phases (two cores on CI). */
const MAX_CHART_WORKERS = 1

const workerFile = fileURLToPath(new URL('./render-worker.js', import.meta.url))

/**
 * A pool of render workers, started now so that vega and resvg load in the background. Running
 * from TypeScript sources (tests) there is no compiled worker file: render in this thread instead.
 */
export function startChartRenderer(): ChartRenderer {
  if (!existsSync(workerFile) || !import.meta.url.endsWith('.js')) return {render: renderChart, close: async () => {}}
  const workers = Array.from(
    {length: Math.min(MAX_CHART_WORKERS, availableParallelism())},
    () => new Worker(workerFile),
  )
  const pending = new Map<number, {resolve(r: RenderedChart): void; reject(e: Error): void}>()
  for (const w of workers) {
    w.on('message', (msg: {id: number; svg?: string; png?: Uint8Array; error?: string}) => {
      const p = pending.get(msg.id)
      pending.delete(msg.id)
      if (!p) return
      if (msg.error !== undefined) p.reject(new Error(`chart rendering failed: ${msg.error}`))
      else p.resolve({svg: msg.svg!, png: new Uint8Array(msg.png!)})
    })
    w.on('error', (e) => {
      for (const p of pending.values()) p.reject(e)
      pending.clear()
    })
  }
  let next = 0
  return {
    render(spec) {
      const id = next++
      return new Promise((resolve, reject) => {
        pending.set(id, {resolve, reject})
        workers[id % workers.length].postMessage({id, spec})
      })
    },
    async close() {
      await Promise.all(workers.map((w) => w.terminate()))
    },
  }
}

/**
 * A renderer that renders each distinct spec once: the runner asks for every chart whose data is
 * ready as soon as its phase ends, so rendering overlaps the later phases, and Phase 7 then gets
 * the same promises back.
 */
export function memoizedRenderer(base: ChartRenderer): ChartRenderer & {prefetch(spec: VegaLiteSpec): void} {
  const cache = new Map<string, Promise<RenderedChart>>()
  const render = (spec: VegaLiteSpec): Promise<RenderedChart> => {
    const key = JSON.stringify(spec)
    let p = cache.get(key)
    if (!p) {
      p = base.render(spec)
      cache.set(key, p)
    }
    return p
  }
  return {
    render,
    // errors surface when Phase 7 awaits the same promise
    prefetch: (spec) => void render(spec).catch(() => {}),
    close: () => base.close(),
  }
}
