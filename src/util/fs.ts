import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  renameSync,
  writeFileSync,
  rmSync,
  rmdirSync,
  readFileSync,
  existsSync,
  statSync,
} from 'node:fs'
import {dirname, basename, join, resolve} from 'node:path'
import {InputError} from './errors.js'
import {stripBom} from './json.js'

/**
 * Writes a file whole or not at all, also across a power loss: the bytes go to a temporary
 * sibling, flushed to disk before it is renamed over the target, and the folder is flushed after,
 * so the new name is durable too (without the first flush, ext4/xfs may commit the rename before
 * the data). `durable: false` stays atomic against a killed process but skips both flushes: for
 * files rebuilt when a power loss damages them (a checksummed snapshot of a synced log).
 */
export function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  mode?: number,
  options: {durable?: boolean} = {},
): void {
  const durable = options.durable ?? true
  const {dir, tmp} = atomicTemp(path)
  try {
    const fd = openSync(tmp, 'w', mode)
    try {
      writeFileSync(fd, data)
      if (durable) fsyncSync(fd) // observable (test/util/atomic-write.test.ts), unlike writeFileSync's flush
    } finally {
      closeSync(fd)
    }
    renameSync(tmp, path)
  } catch (error) {
    throw atomicFailure(path, tmp, error)
  }
  if (durable) fsyncDirIfSupported(dir)
}

/**
 * writeFileAtomic for text made piece by piece (a study exported page by page), so memory holds
 * one piece at a time; a failure leaves no half file.
 */
export async function writeFileAtomicFrom(path: string, chunks: AsyncIterable<string>): Promise<void> {
  const {dir, tmp} = atomicTemp(path)
  try {
    const fd = openSync(tmp, 'w')
    try {
      for await (const chunk of chunks) writeFileSync(fd, chunk)
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    renameSync(tmp, path)
  } catch (error) {
    throw atomicFailure(path, tmp, error)
  }
  fsyncDirIfSupported(dir)
}

/** The folder of `path` (created) and the temporary file an atomic write goes through. */
function atomicTemp(path: string): {dir: string; tmp: string} {
  const dir = dirname(path)
  ensureDir(dir)
  return {dir, tmp: join(dir, `.${basename(path)}.${process.pid}.tmp`)}
}

/** Removes the temporary file; a user's error passes through, any other becomes one naming the path. */
function atomicFailure(path: string, tmp: string, error: unknown): Error {
  rmSync(tmp, {force: true})
  if (error instanceof InputError) return error
  return new InputError(path, 'a writable location', (error as Error).message.split('\n')[0])
}

/** fsyncDir, except on file systems that cannot flush a folder (the rename is then as durable as they make it). */
function fsyncDirIfSupported(dir: string): void {
  try {
    fsyncDir(dir)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'EINVAL' && code !== 'ENOTSUP' && code !== 'EISDIR' && code !== 'EPERM' && code !== 'EACCES')
      throw new InputError(dir, 'a folder whose entries can be flushed to disk', code ?? 'an error')
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

/**
 * Refuses an output folder that names an existing file or other non-folder, in one line (exit 2):
 * every `--out` is a folder, never a file (README "Output folders").
 */
export function refuseNonFolder(path: string, flag = '--out'): void {
  let isFolder: boolean
  try {
    isFolder = statSync(path).isDirectory()
  } catch {
    return // missing (or unreadable): creating or writing it says what went wrong
  }
  if (!isFolder) throw new InputError(`${flag} ${path}`, 'a folder (kt writes its files inside it)', 'an existing file')
}

/** A command's output folder (`--out`): refused if it names a file, else created with its parents. */
export function outFolder(path: string, flag = '--out'): string {
  refuseNonFolder(path, flag)
  ensureDir(path)
  return path
}

/**
 * outFolder, for a command that can still refuse its input after making the folder (kt search
 * loads the data inside the study): returns an undo that removes the folders it created, deepest
 * first, as long as they are still empty, so bad input leaves no empty --out behind.
 */
export function outFolderWithUndo(path: string, flag = '--out'): () => void {
  const created: string[] = []
  for (let d = resolve(path); !existsSync(d); d = dirname(d)) {
    created.push(d)
    if (dirname(d) === d) break
  }
  outFolder(path, flag)
  return () => {
    for (const d of created) {
      try {
        rmdirSync(d)
      } catch {
        return // no longer empty (or gone): keep it and its parents
      }
    }
  }
}

/** A text file without its UTF-8 byte-order mark; a missing or unreadable file is a one-line InputError. */
export function readText(path: string): string {
  if (!existsSync(path)) throw new InputError(path, 'an existing file', 'no such file')
  try {
    if (statSync(path).isDirectory()) throw new InputError(path, 'a file', 'a folder')
    return stripBom(readFileSync(path, 'utf8'))
  } catch (error) {
    if (error instanceof InputError) throw error
    throw new InputError(path, 'a readable file', (error as NodeJS.ErrnoException).code ?? 'an error')
  }
}

/** The JSON readers under the names most callers use: parseJsonText and readJsonFile (src/util/json.ts). */
export {parseJsonText as parseJson, readJsonFile as readJson} from './json.js'

/** Makes a rename or a new file in `dir` durable (POSIX: the entry lives in the folder's own data). */
export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}
