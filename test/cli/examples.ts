/**
 * Runs every `--help` example of the built CLI (read from oclif.manifest.json, so a new command's
 * examples are picked up without touching the test) as a user would after a fresh clone: in a
 * temporary folder holding the repository's tracked files (not src/ or test/), through `sh -c`
 * (examples may redirect), with `kt` being bin/kt.js.
 */
import {spawn, spawnSync} from 'node:child_process'
import {cpSync, mkdirSync, mkdtempSync, readFileSync} from 'node:fs'
import {createServer} from 'node:net'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {DEFAULT_DB_PORT} from '../../src/util/net.js'
import {acquireDirLock, releaseDirLock} from '../../src/util/lock.js'
import {packageRoot} from '../../src/util/paths.js'

export interface Example {
  readonly command: string
  /** The example as a shell command line with `kt` spelled out. */
  readonly line: string
  readonly index: number
  /** The example's description ('' when it has none). */
  readonly description: string
  /** Exit code the example's description announces ("... refuses it (exit 1)"), else 0. */
  readonly expectedStatus: number
}

export interface ExampleRun extends Example {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
  readonly ms: number
}

/** The place of POSTGRES_BLOCK in PRODUCERS_FIRST. */
const POSTGRES = '(postgres block)'

/**
 * Commands whose examples make what later examples read (a run's reports and profiles, a study,
 * LTR files and models, a tenant), in the order they must run. Every other command runs after
 * these, in manifest order; commands that read nothing another example writes run concurrently
 * (INDEPENDENT).
 */
const PRODUCERS_FIRST = [
  'data:generate',
  'data:import',
  'run',
  'phase',
  'search',
  'study:list',
  'study:show',
  'study:export',
  POSTGRES,
  'rerank:generate',
  'rerank:log',
  'rerank:train',
  'rerank:deploy',
  'rerank:list',
  'rerank:rollback',
  'online:init',
  'online:choose',
  'online:feedback',
  'online:status',
  'eval',
  'deploy',
  'rollback',
  'report',
]
/** Prefixes of commands that read only what they make themselves, run beside the sequence (unless in POSTGRES_BLOCK). */
const INDEPENDENT = [/^bench:/, /^online:simulate$/, /^online:workload$/]

/**
 * The examples that use the PostgreSQL server of `kt db start` (127.0.0.1:5433, as the examples
 * are written), in the order they run, at the POSTGRES place of the sequence (after the study
 * examples that make co-1 in studies.sqlite): the server starts first, every example that uses it
 * runs, the server stops, and the other `kt db start` examples (a second data folder on the same
 * port, then a refusal) run last. Keys are `command#index`.
 */
const POSTGRES_BLOCK = [
  'db:start#0',
  'worker#0',
  'worker#1',
  'study:copy#0',
  'study:copy#1',
  'bench:workers#2',
  'db:stop#0',
  'db:start#1',
  'db:stop#1',
  'db:start#2',
]
/** The data folders those examples start servers in (stopped again however the run ends). */
const POSTGRES_DIRS = ['.kt/postgres', '.kt/pg']
/**
 * Port 5433 is the machine's, not this test's: every other PostgreSQL a test starts takes a free
 * port from the ephemeral range (freePort, which never returns DEFAULT_DB_PORT), and examples test
 * runs of other clones on the same machine take turns through this lock. Something else holding
 * the port fails the run with one line saying so, instead of the examples using its server.
 */
const POSTGRES_LOCK_DIR = join(tmpdir(), `kt-examples-port-${DEFAULT_DB_PORT}`)
const POSTGRES_LOCK_WAIT_MS = 300_000

export function manifestExamples(): Example[] {
  const manifest = JSON.parse(readFileSync(join(packageRoot, 'oclif.manifest.json'), 'utf8')) as {
    commands: Record<string, {examples?: Array<string | {command: string; description?: string}>}>
  }
  const bin = `node ${JSON.stringify(join(packageRoot, 'bin', 'kt.js'))}`
  const ids = Object.keys(manifest.commands)
  const rank = (id: string): number => {
    const i = PRODUCERS_FIRST.indexOf(id)
    return i >= 0 ? i : PRODUCERS_FIRST.length + ids.indexOf(id)
  }
  // [place in the sequence, place within it]: a POSTGRES_BLOCK example runs at the block's place
  const order = (e: Example): [number, number] => {
    const inBlock = POSTGRES_BLOCK.indexOf(`${e.command}#${e.index}`)
    return inBlock >= 0 ? [rank(POSTGRES), inBlock] : [rank(e.command), e.index]
  }
  return ids
    .flatMap((id) =>
      (manifest.commands[id].examples ?? []).map((e, index) => {
        const text = typeof e === 'string' ? e : e.command
        const announced = typeof e === 'string' ? null : /\(.*\bexit (\d+)\b.*\)/.exec(e.description ?? '')
        return {
          command: id,
          index,
          description: typeof e === 'string' ? '' : (e.description ?? ''),
          line: text.replaceAll('<%= config.bin %>', bin),
          expectedStatus: announced ? Number(announced[1]) : 0,
        }
      }),
    )
    .sort((a, b) => {
      const [x, y] = [order(a), order(b)]
      return x[0] - y[0] || x[1] - y[1]
    })
}

/** Waits (without blocking the event loop) for the machine-wide turn at port 5433, then checks that nothing holds it. */
async function takePostgresPort(): Promise<void> {
  mkdirSync(POSTGRES_LOCK_DIR, {recursive: true})
  const deadline = Date.now() + POSTGRES_LOCK_WAIT_MS
  for (;;) {
    try {
      acquireDirLock(POSTGRES_LOCK_DIR, {
        waitMs: 0,
        expected: `port ${DEFAULT_DB_PORT} for this run's PostgreSQL examples`,
        subject: `port ${DEFAULT_DB_PORT}`,
      })
      break
    } catch (error) {
      if (Date.now() >= deadline) throw error
      await new Promise((r) => setTimeout(r, 500))
    }
  }
  const free = await new Promise<boolean>((resolve) => {
    const probe = createServer()
    probe.once('error', () => resolve(false))
    probe.listen(DEFAULT_DB_PORT, '127.0.0.1', () => probe.close(() => resolve(true)))
  })
  if (!free) {
    releaseDirLock(POSTGRES_LOCK_DIR)
    throw new Error(
      `port ${DEFAULT_DB_PORT} is taken by a process outside this test (ss -ltnp 'sport = :${DEFAULT_DB_PORT}' names it): the kt db start examples need it`,
    )
  }
}

/** Stops what the PostgreSQL examples may have left running (a failed or timed-out example) and gives the port back. */
function releasePostgresPort(cwd: string): void {
  for (const dir of POSTGRES_DIRS)
    spawnSync(process.execPath, [join(packageRoot, 'bin', 'kt.js'), 'db', 'stop', '--dir', dir], {
      cwd,
      stdio: 'ignore',
      env: exampleEnv(),
    })
  releaseDirLock(POSTGRES_LOCK_DIR)
}

/** The environment examples run in: a user's, without test settings or a database password. */
function exampleEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {...process.env, KT_NO_PROGRESS: '1'}
  for (const name of ['NODE_ENV', 'KT_DB_PASSWORD', 'PGPASSWORD']) delete env[name]
  return env
}

/** A folder like a fresh clone: every tracked file outside src/ and test/ (git ls-files). */
export function freshClone(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kt-examples-'))
  const files = spawnSync('git', ['ls-files'], {cwd: packageRoot, encoding: 'utf8'})
    .stdout.split('\n')
    .filter((f) => f && !/^(src|test)\//.test(f))
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
function runExample(example: Example, cwd: string, timeoutMs: number, serverGraceMs?: number): Promise<ExampleRun> {
  const started = Date.now()
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', example.line], {cwd, env: exampleEnv(), detached: true})
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    let served = false
    const timer = setTimeout(() => {
      if (serverGraceMs !== undefined) served = true
      else stderr += `\n(killed after ${timeoutMs} ms)`
      try {
        process.kill(-child.pid!, serverGraceMs !== undefined ? 'SIGTERM' : 'SIGKILL') // the shell and kt under it
      } catch {
        // already gone
      }
    }, serverGraceMs ?? timeoutMs)
    child.on('close', (status) => {
      clearTimeout(timer)
      resolve({...example, status: served ? 0 : status, stdout, stderr, ms: Date.now() - started})
    })
  })
}

/** Runs the sequence in order and the independent examples beside it, `lanes` at a time in all. */
export async function runAllExamples(
  cwd: string,
  options: {timeoutMs: number; lanes: number; servers?: readonly string[]; serverGraceMs?: number},
): Promise<ExampleRun[]> {
  // examples that are not kt commands (curl against a server an earlier example started) document, they do not run
  const all = manifestExamples().filter((e) => e.line.startsWith('node '))
  const inBlock = (e: Example): boolean => POSTGRES_BLOCK.includes(`${e.command}#${e.index}`)
  const independent = all.filter((e) => INDEPENDENT.some((p) => p.test(e.command)) && !inBlock(e))
  const sequence = all.filter((e) => !independent.includes(e))
  const results: ExampleRun[] = []
  let portTaken = false
  const runQueue = async (queue: Example[]): Promise<void> => {
    for (let e = queue.shift(); e; e = queue.shift()) {
      if (inBlock(e) && !portTaken) {
        await takePostgresPort()
        portTaken = true
      }
      results.push(
        await runExample(
          e,
          cwd,
          options.timeoutMs,
          options.servers?.includes(e.command) ? options.serverGraceMs : undefined,
        ),
      )
      if (portTaken && `${e.command}#${e.index}` === POSTGRES_BLOCK.at(-1)) {
        releasePostgresPort(cwd)
        portTaken = false
      }
    }
  }
  const side = [...independent]
  try {
    await Promise.all([
      runQueue([...sequence]),
      ...Array.from({length: Math.max(1, options.lanes - 1)}, () => runQueue(side)),
    ])
  } finally {
    if (portTaken) releasePostgresPort(cwd)
  }
  return results
}
