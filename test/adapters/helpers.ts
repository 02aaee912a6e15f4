import {existsSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {packageRoot} from '../../src/util/paths.js'

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

/** A tiny command engine (node): score = TEST_X, plus the metrics in TEST_EXTRA_METRICS. */
export const TINY = join(packageRoot, 'test', 'adapters', 'fixtures', 'tiny.mjs')

/** A command engine file around tiny.mjs (score = x), with overrides of its fields. */
export function tinyEngine(dir: string, extra: Record<string, unknown> = {}, file = 'engine.json'): string {
  const engine = {
    kt_engine: 1,
    name: 'tiny',
    parameters: [
      {name: 'x', type: 'float', low: 0, high: 1, default: 0.5, env: 'TEST_X'},
      {name: 'mode', type: 'categorical', choices: ['a', 'b'], default: 'a', env: 'TEST_MODE'},
    ],
    evaluate: {kind: 'command', command: [process.execPath, TINY], timeout_s: 20},
    objectives: [{metric: 'score', direction: 'maximize'}],
    profiles: [{name: 'best', order_by: 'score'}],
    ...extra,
  }
  const path = join(dir, file)
  writeFileSync(path, JSON.stringify(engine))
  return path
}
