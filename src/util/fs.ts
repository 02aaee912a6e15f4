import {mkdirSync, renameSync, writeFileSync, rmSync, readFileSync, existsSync, statSync} from 'node:fs'
import {dirname, basename, join, resolve} from 'node:path'
import {InputError} from './errors.js'

/**
 * Writes a file whole or not at all: the bytes go to a temporary sibling, which is then renamed
 * over the target (rename is atomic within one file system).
 */
export function writeFileAtomic(path: string, data: string | Uint8Array, mode?: number): void {
  const dir = dirname(path)
  ensureDir(dir)
  const tmp = join(dir, `.${basename(path)}.${process.pid}.tmp`)
  try {
    writeFileSync(tmp, data, mode === undefined ? undefined : {mode})
    renameSync(tmp, path)
  } catch (error) {
    rmSync(tmp, {force: true})
    throw new InputError(path, 'a writable location', (error as Error).message.split('\n')[0])
  }
}

/**
 * Creates a folder and its missing parents one level at a time (Node's recursive mkdir can spin
 * forever on special file systems such as /proc); any failure is a one-line InputError.
 */
export function ensureDir(dir: string): void {
  const missing: string[] = []
  let d = resolve(dir)
  while (!existsSync(d)) {
    missing.push(d)
    const parent = dirname(d)
    if (parent === d) break
    d = parent
  }
  if (existsSync(d) && !statSync(d).isDirectory()) throw new InputError(dir, 'a writable folder', `${d} is a file`)
  for (const m of missing.reverse()) {
    try {
      mkdirSync(m)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code !== 'EEXIST') throw new InputError(dir, 'a writable folder', code ?? 'an error')
    }
  }
}

/** Reads a text file, turning a missing or unreadable file into a one-line InputError. */
export function readText(path: string): string {
  if (!existsSync(path)) throw new InputError(path, 'an existing file', 'no such file')
  try {
    return readFileSync(path, 'utf8')
  } catch (error) {
    throw new InputError(path, 'a readable file', (error as NodeJS.ErrnoException).code ?? 'an error')
  }
}

/** Parses JSON text, reporting the file and (where Node says it) the line of a syntax error. */
export function parseJson(path: string, text: string): unknown {
  try {
    return JSON.parse(text)
  } catch (error) {
    const message = (error as Error).message
    const pos = /position (\d+)/.exec(message)
    const line = pos ? text.slice(0, Number(pos[1])).split('\n').length : undefined
    throw new InputError(line === undefined ? path : `${path}:${line}`, 'valid JSON', message.replace(/\s+/g, ' '))
  }
}

export function readJson(path: string): unknown {
  return parseJson(path, readText(path))
}
