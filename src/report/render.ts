import {createRequire} from 'node:module'
import {dirname, join} from 'node:path'

/**
 * Renders vega-lite specs to SVG (vega, headless) and PNG (resvg). Text needs a font that every
 * machine has: we ship DejaVu Sans through the dejavu-fonts-ttf package and hand resvg that file
 * alone, because resvg silently drops text when it finds no font.
 */
export const CHART_FONT_FAMILY = 'DejaVu Sans'
const require = createRequire(import.meta.url)
export const CHART_FONT_FILE = join(dirname(require.resolve('dejavu-fonts-ttf/package.json')), 'ttf', 'DejaVuSans.ttf')
/** PNG scale relative to the SVG CSS pixels: 1x renders readable text at a third of the rasterising cost of 2x; the SVG beside each PNG is the sharp version. */
export const PNG_SCALE = 1

export type VegaLiteSpec = Record<string, unknown>

export interface RenderedChart {
  readonly svg: string
  readonly png: Uint8Array
}

/** Chart defaults: the shipped font everywhere, a white background, no tooltips. */
export function withChartDefaults(spec: VegaLiteSpec): VegaLiteSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    background: 'white',
    ...spec,
    config: {
      font: CHART_FONT_FAMILY,
      axis: {labelFont: CHART_FONT_FAMILY, titleFont: CHART_FONT_FAMILY},
      legend: {labelFont: CHART_FONT_FAMILY, titleFont: CHART_FONT_FAMILY},
      title: {font: CHART_FONT_FAMILY},
      ...(spec.config as object | undefined),
    },
  }
}

let libs:
  | Promise<{
      vega: typeof import('vega')
      vegaLite: typeof import('vega-lite')
      Resvg: typeof import('@resvg/resvg-js').Resvg
    }>
  | undefined

/** Starts loading the chart libraries (vega alone takes about 0.3 s to import). */
export function preloadChartLibraries(): Promise<unknown> {
  return load()
}

function load() {
  libs ??= Promise.all([import('vega'), import('vega-lite'), import('@resvg/resvg-js')]).then(
    ([vega, vegaLite, resvg]) => ({vega, vegaLite, Resvg: resvg.Resvg}),
  )
  return libs
}

export async function renderChart(spec: VegaLiteSpec): Promise<RenderedChart> {
  const {vega, vegaLite, Resvg} = await load()
  const compiled = vegaLite.compile(spec as never).spec
  const view = new vega.View(vega.parse(compiled), {renderer: 'none'})
  const svg = await view.toSVG()
  view.finalize()
  const png = new Resvg(svg, {
    font: {fontFiles: [CHART_FONT_FILE], loadSystemFonts: false, defaultFontFamily: CHART_FONT_FAMILY},
    fitTo: {mode: 'zoom', value: PNG_SCALE},
  })
    .render()
    .asPng()
  return {svg, png}
}
