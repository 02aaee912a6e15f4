import {existsSync, readFileSync, readdirSync} from 'node:fs'
import {join} from 'node:path'

/** True if the process exists and is not a zombie (a killed, unreaped process counts as gone). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'))
  } catch {
    return false
  }
}

/** Waits until none of the pids is alive (or the deadline passes); returns those still alive. */
export async function waitGone(pids: readonly number[], ms = 4000): Promise<number[]> {
  const deadline = Date.now() + ms
  for (;;) {
    const left = pids.filter(alive)
    if (left.length === 0 || Date.now() > deadline) return left
    await new Promise((r) => setTimeout(r, 25))
  }
}

/** The pids the test engine wrote (one file per trial). */
export function pidsIn(dir: string): number[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir)
    .filter((f) => f.endsWith('.pid'))
    .map((f) => Number(readFileSync(join(dir, f), 'utf8')))
    .filter((p) => p > 0)
}

export async function waitFor(check: () => boolean, ms = 10000): Promise<void> {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting')
    await new Promise((r) => setTimeout(r, 25))
  }
}
