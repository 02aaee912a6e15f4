import {existsSync, readFileSync} from 'node:fs'
import {dirname, join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'

/** The kt package root (where package.json, phases/ and fixtures/ live), from source or dist. */
export const packageRoot: string = findRoot(dirname(fileURLToPath(import.meta.url)))

function findRoot(start: string): string {
  let dir = start
  for (;;) {
    const manifest = join(dir, 'package.json')
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as {name?: string}).name === 'kt') return dir
      } catch {
        // not ours; keep walking up
      }
    }
    const parent = resolve(dir, '..')
    if (parent === dir) throw new Error(`kt: cannot find the kt package root above ${start}`)
    dir = parent
  }
}

export const fixturesDir = join(packageRoot, 'fixtures')
export const phasesDir = join(packageRoot, 'phases')

/** kt's version, from its package.json (reports and checkpoints record it). */
export const KT_VERSION: string = (
  JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as {version: string}
).version
