/**
 * A node:fs that records fsync and rename calls in order, each with the path it names (an fd's
 * file for fsync), for tests of what survives a power loss. Used as a vi.mock factory:
 *   vi.mock('node:fs', async (importOriginal) => (await import('../helpers/fs-calls.js')).recordingFs(await importOriginal()))
 * This module must not import node:fs itself (it would get the mock).
 */
import type * as Fs from 'node:fs'

/** "fsync PATH" and "rename FROM -> TO", in call order; tests empty it between cases. */
export const fsCalls: string[] = []

export function recordingFs(real: typeof Fs): typeof Fs {
  const names = new Map<number, string>()
  return {
    ...real,
    openSync: (path: Fs.PathLike, ...rest: never[]) => {
      const fd = (real.openSync as (...a: unknown[]) => number)(path, ...rest)
      names.set(fd, String(path))
      return fd
    },
    fsyncSync: (fd: number) => {
      fsCalls.push(`fsync ${names.get(fd) ?? '?'}`)
      return real.fsyncSync(fd)
    },
    renameSync: (from: Fs.PathLike, to: Fs.PathLike) => {
      fsCalls.push(`rename ${String(from)} -> ${String(to)}`)
      return real.renameSync(from, to)
    },
  } as typeof Fs
}
