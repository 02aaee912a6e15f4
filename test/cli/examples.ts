/**
 * Runs every `--help` example of the built CLI (read from oclif.manifest.json, so a new command's
 * examples are picked up without touching the test) as a user would after a fresh clone: in a
 * temporary folder holding the repository's tracked files (not src/ or test/), through `sh -c`
 * (examples may redirect), with `kt` being bin/kt.js.
 */
import {spawn, spawnSync} from 'node:child_process'
import {cpSync, mkdirSync, mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {packageRoot} from '../../src/util/paths.js'

export interface Example {
  readonly command: string
  /** The example as a shell command line with `kt` spelled out. */
  readonly line: string
  readonly index: number
  /** Exit code the example's description announces ("... refuses it (exit 1)"), else 0. */
  readonly expectedStatus: number
}

export interface ExampleRun extends Example {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
  readonly ms: number
}

/**
 * Commands whose examples make what later examples read (a run's reports and profiles, a study,
 * LTR files and models, a tenant), in the order they must run. Every other command runs after
 * these, in manifest order; commands that read nothing another example writes run concurrently
 * (INDEPENDENT).
 */
export const PRODUCERS_FIRST = [
  'data:generate', 'data:import', 'run', 'phase', 'search', 'study:list', 'study:show', 'study:export',
  'rerank:generate', 'rerank:log', 'rerank:train', 'rerank:deploy', 'rerank:list', 'rerank:rollback',
  'online:init', 'online:choose', 'online:feedback', 'online:status', 'eval', 'deploy', 'rollback', 'report',
]
/** Prefixes of commands that read only what they make themselves, run beside the sequence. */
export const INDEPENDENT = [/^bench:/, /^online:simulate$/, /^online:workload$/]

export function manifestExamples(): Example[] {
  const manifest = JSON.parse(readFileSync(join(packageRoot, 'oclif.manifest.json'), 'utf8')) as {commands: Record<string, {examples?: Array<string | {command: string; description?: string}>}>}
  const bin = `node ${JSON.stringify(join(packageRoot, 'bin', 'kt.js'))}`
  const ids = Object.keys(manifest.commands)
  const rank = (id: string): number => {
    const i = PRODUCERS_FIRST.indexOf(id)
    return i >= 0 ? i : PRODUCERS_FIRST.length + ids.indexOf(id)
  }
  return ids
    .sort((a, b) => rank(a) - rank(b))
    .flatMap((id) =>
      (manifest.commands[id].examples ?? []).map((e, index) => {
        const text = typeof e === 'string' ? e : e.command
        const announced = typeof e === 'string' ? null : /\(exit (\d+)\)/.exec(e.description ?? '')
        return {command: id, index, line: text.replaceAll('<%= config.bin %>', bin), expectedStatus: announced ? Number(announced[1]) : 0}
      }),
    )
}

/** A folder like a fresh clone: every tracked file outside src/ and test/ (git ls-files). */
export function freshClone(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kt-examples-'))
  const files = spawnSync('git', ['ls-files'], {cwd: packageRoot, encoding: 'utf8'}).stdout.split('\n').filter((f) => f && !/^(src|test)\//.test(f))
  for (const f of files) {
    mkdirSync(dirname(join(dir, f)), {recursive: true})
    try {
      cpSync(join(packageRoot, f), join(dir, f))
    } catch {
      // a tracked file deleted in the working tree
    }
  }
  return dir
}

/**
 * Runs one example. A server example (serverGraceMs given) passes when it is still running
 * after that long: it is then stopped and its status reported as 0.
 */
export function runExample(example: Example, cwd: string, timeoutMs: number, serverGraceMs?: number): Promise<ExampleRun> {
  const started = Date.now()
  return new Promise((resolve) => {
    const env: NodeJS.ProcessEnv = {...process.env, KT_NO_PROGRESS: '1'}
    delete env.NODE_ENV
    const child = spawn('sh', ['-c', example.line], {cwd, env, detached: true})
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    let served = false
    const timer = setTimeout(
      () => {
        if (serverGraceMs !== undefined) served = true
        else stderr += `\n(killed after ${timeoutMs} ms)`
        try {
          process.kill(-child.pid!, serverGraceMs !== undefined ? 'SIGTERM' : 'SIGKILL') // the shell and kt under it
        } catch {
          // already gone
        }
      },
      serverGraceMs ?? timeoutMs,
    )
    child.on('close', (status) => {
      clearTimeout(timer)
      resolve({...example, status: served ? 0 : status, stdout, stderr, ms: Date.now() - started})
    })
  })
}

/** Runs the sequence in order and the independent examples beside it, `lanes` at a time in all. */
export async function runAllExamples(cwd: string, options: {timeoutMs: number; lanes: number; servers?: readonly string[]; serverGraceMs?: number}): Promise<ExampleRun[]> {
  // examples that are not kt commands (curl against a server an earlier example started) document, they do not run
  const all = manifestExamples().filter((e) => e.line.startsWith('node '))
  const independent = all.filter((e) => INDEPENDENT.some((p) => p.test(e.command)))
  const sequence = all.filter((e) => !independent.includes(e))
  const results: ExampleRun[] = []
  const runQueue = async (queue: Example[]): Promise<void> => {
    for (let e = queue.shift(); e; e = queue.shift()) results.push(await runExample(e, cwd, options.timeoutMs, options.servers?.includes(e.command) ? options.serverGraceMs : undefined))
  }
  const side = [...independent]
  await Promise.all([runQueue([...sequence]), ...Array.from({length: Math.max(1, options.lanes - 1)}, () => runQueue(side))])
  return results
}
