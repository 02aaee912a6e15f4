/**
 * The browser builds of vega, vega-lite and vega-embed, read from the installed packages: the HTML
 * report inlines them and the dashboard serves them, so no page ever loads a script from a CDN.
 */
import {existsSync, readFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const require = createRequire(import.meta.url)

/** Script name -> [package, file inside it], in load order (vega-embed needs the other two). */
export const VENDOR_SCRIPTS = {
  'vega.min.js': ['vega', 'build/vega.min.js'],
  'vega-lite.min.js': ['vega-lite', 'build/vega-lite.min.js'],
  'vega-embed.min.js': ['vega-embed', 'build/vega-embed.min.js'],
} as const

export type VendorScript = keyof typeof VENDOR_SCRIPTS

/** A package's folder: its entry point resolved, then up to the folder holding its package.json (the packages do not export package.json). */
function packageDir(pkg: string): string {
  let dir = dirname(require.resolve(pkg))
  while (
    !existsSync(join(dir, 'package.json')) ||
    JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name !== pkg
  ) {
    const up = dirname(dir)
    if (up === dir) throw new Error(`cannot find the folder of the installed package ${pkg}`)
    dir = up
  }
  return dir
}

export function vendorScriptPath(name: VendorScript): string {
  const [pkg, file] = VENDOR_SCRIPTS[name]
  return join(packageDir(pkg), file)
}

/** kt's own page scripts and styles (assets/web/), shipped with the package. */
export const WEB_ASSETS_DIR =
  [new URL('../../assets/web/', import.meta.url), new URL('../../../assets/web/', import.meta.url)]
    .map((u) => fileURLToPath(u))
    .find((d) => existsSync(join(d, 'charts.js'))) ?? fileURLToPath(new URL('../../../assets/web/', import.meta.url))
