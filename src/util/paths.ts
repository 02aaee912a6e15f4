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

/** kt's version, from its package.json. */
export const KT_VERSION: string = (
  JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as {version: string}
).version

/** The prefix of a path inside the kt package (e.g. `kt:fixtures/realistic_100.json` in a plan). */
const PACKAGE_PATH_PREFIX = 'kt:'

/** A path from a user's file: `kt:...` inside the kt package, anything else against `base` (the file's folder). */
export function resolveUserPath(base: string, path: string): string {
  return path.startsWith(PACKAGE_PATH_PREFIX)
    ? join(packageRoot, path.slice(PACKAGE_PATH_PREFIX.length))
    : resolve(base, path)
}
