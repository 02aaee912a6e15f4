import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {spawn, type ChildProcess} from 'node:child_process'
import {runSearch} from '../../src/study/search.js'
import {runRoutedSweeps} from '../../src/study/sweeps.js'
import {packageRoot} from '../../src/util/paths.js'

/**
 * A study store like the ones kt run writes: a routed retrieval study on the committed memory
 * fixture (PREFIX-all plus one study per query type; bi-objective, multi-fidelity) and two
 * single-objective branin studies (random and BOHB) to compare side by side.
 */
export async function makeStore(): Promise<{dir: string; storage: string}> {
  const dir = mkdtempSync(join(tmpdir(), 'kt-dash-'))
  const storage = join(dir, 'studies.sqlite')
  await runRoutedSweeps({
    data: join(packageRoot, 'fixtures', 'memory_small.json'),
    storage,
    studyPrefix: 'retrieval',
    optimizer: 'bohb',
    seed: 1,
    maxBudget: 3,
  })
  await runSearch({
    storage,
    study: 'branin-random',
    objective: {name: 'branin'},
    optimizer: 'random',
    seed: 1,
    maxTrials: 30,
  })
  await runSearch({
    storage,
    study: 'branin-bohb',
    objective: {name: 'branin'},
    optimizer: 'bohb',
    seed: 1,
    maxTrials: 30,
  })
  return {dir, storage}
}

/** `kt dashboard` as a user starts it (the built CLI), on a free port; resolves with its URL. */
export function startDashboardProcess(
  storage: string,
): Promise<{url: string; child: ChildProcess; stop(): Promise<void>}> {
  const env: NodeJS.ProcessEnv = {...process.env, KT_NO_PROGRESS: '1'}
  delete env.NODE_ENV
  const child = spawn(
    process.execPath,
    [join(packageRoot, 'bin', 'kt.js'), 'dashboard', '--storage', storage, '--port', '0', '--json'],
    {env, stdio: ['ignore', 'pipe', 'pipe']},
  )
  let out = ''
  let err = ''
  const stop = (): Promise<void> =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve()
      child.once('exit', () => resolve())
      child.kill('SIGTERM')
    })
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString()
      const line = out.split('\n').find((l) => l.startsWith('{'))
      if (line) resolve({url: (JSON.parse(line) as {url: string}).url, child, stop})
    })
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()))
    child.once('exit', (code) => reject(new Error(`kt dashboard exited with ${code}: ${err}`)))
  })
}
