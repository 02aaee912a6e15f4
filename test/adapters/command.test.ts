import {spawn} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {commandObjective} from '../../src/adapters/command.js'
import {parseEngineFile, type EngineSpec} from '../../src/adapters/file.js'
import type {CommandEvaluate} from '../../src/adapters/file-schema.js'
import {TrialFailure} from '../../src/adapters/metrics.js'
import {readJson} from '../../src/util/fs.js'
import {packageRoot} from '../../src/util/paths.js'
import {SqliteStudyFile} from '../helpers/study-file.js'
import {kt} from '../cli/helpers.js'
import {alive, pidsIn, waitFor, waitGone} from './helpers.js'

const FIXTURES = join(packageRoot, 'test', 'adapters', 'fixtures')
const ENGINE = join(FIXTURES, 'engine.json')

/** The test engine with every mode allowed and a short timeout. */
function spec(timeoutS = 20): EngineSpec {
  const file = readJson(ENGINE) as Record<string, any>
  file.parameters[1].choices = ['ok', 'crash', 'garbage', 'nometric', 'hang', 'daemon']
  file.evaluate.timeout_s = timeoutS
  return parseEngineFile(file, ENGINE)
}

function objectiveOf(s: EngineSpec) {
  return commandObjective(s, s.evaluate as CommandEvaluate)
}

async function failureOf(promise: Promise<unknown>): Promise<TrialFailure> {
  try {
    await promise
  } catch (error) {
    expect(error).toBeInstanceOf(TrialFailure)
    return error as TrialFailure
  }
  throw new Error('the trial did not fail')
}

describe('command adapter', () => {
  it('passes the parameters in their env vars and KT_*; reads the last JSON object line; keeps stdout/stderr beside the study', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-cmd-'))
    const o = objectiveOf(spec())
    const r = await o.evaluate({x: 0.25, mode: 'ok'}, 3, {trialId: 7, configId: 'c', seed: 42, artifactsDir: dir})
    expect(r.loss).toBe(-0.75)
    expect(r.metrics).toMatchObject({score: 0.75, budget: 3, trial: 7, seed: 42})
    // strings in the metrics line are notes, not metrics
    expect(r.metrics).not.toHaveProperty('tier')
    expect(readFileSync(join(dir, '7.out'), 'utf8')).toMatch(/^starting\n\{.*\}\ndone\n$/)
    expect(existsSync(join(dir, '7.err'))).toBe(true)
  })

  it('a crash fails the trial with its exit status and the last 20 stderr lines', async () => {
    const f = await failureOf(
      Promise.resolve(objectiveOf(spec()).evaluate({x: 0.5, mode: 'crash'}, 1, {trialId: 1, configId: 'c', seed: 0})),
    )
    expect(f.message).toBe('exit status 3')
    const lines = f.detail!.split('\n')
    expect(lines).toHaveLength(20)
    expect(lines[0]).toBe('stderr line 11')
    expect(lines[19]).toBe('stderr line 30')
  })

  it('garbage on stdout (no JSON object line) fails the trial; so does a missing objective metric', async () => {
    const o = objectiveOf(spec())
    const g = await failureOf(
      Promise.resolve(o.evaluate({x: 0.5, mode: 'garbage'}, 1, {trialId: 1, configId: 'c', seed: 0})),
    )
    expect(g.message).toBe('no line of stdout parses as a JSON object (the metrics)')
    expect(g.detail).toContain('just noise')
    const m = await failureOf(
      Promise.resolve(o.evaluate({x: 0.5, mode: 'nometric'}, 1, {trialId: 1, configId: 'c', seed: 0})),
    )
    expect(m.message).toBe('the metrics have no "score" (objective); got other')
  })

  it('a hanging trial is killed at its timeout with the grandchild it started: no process is left', async () => {
    const pidDir = mkdtempSync(join(tmpdir(), 'kt-pids-'))
    process.env.TEST_PID_DIR = pidDir
    try {
      const t0 = Date.now()
      // 2 s, not less: the trial (python3 starting a grandchild, then printing) must have printed
      // before the kill, and under a loaded machine (load 13-16 on 2 cores) 0.8 s was not enough
      const f = await failureOf(
        Promise.resolve(objectiveOf(spec(2)).evaluate({x: 0.5, mode: 'hang'}, 1, {trialId: 3, configId: 'c', seed: 0})),
      )
      expect(f.message).toBe('timed out after 2 s (process group killed)')
      expect(f.detail).toContain('hanging')
      // killed at the timeout, not when the trial's 60 s sleep ends
      expect(Date.now() - t0).toBeLessThan(15_000)
      const pids = pidsIn(pidDir)
      expect(pids).toHaveLength(1)
      expect(await waitGone(pids)).toEqual([])
    } finally {
      delete process.env.TEST_PID_DIR
    }
  })

  it('a trial that exits 0 leaving a process behind succeeds, and what it left is killed', async () => {
    const pidDir = mkdtempSync(join(tmpdir(), 'kt-pids-'))
    process.env.TEST_PID_DIR = pidDir
    try {
      const r = await objectiveOf(spec()).evaluate({x: 0.5, mode: 'daemon'}, 1, {trialId: 4, configId: 'c', seed: 0})
      expect(r.loss).toBe(-1)
      expect(await waitGone(pidsIn(pidDir))).toEqual([])
    } finally {
      delete process.env.TEST_PID_DIR
    }
  })

  it('close() (kt interrupted) kills running trials and their grandchildren', async () => {
    const pidDir = mkdtempSync(join(tmpdir(), 'kt-pids-'))
    process.env.TEST_PID_DIR = pidDir
    try {
      const o = objectiveOf(spec())
      const running = [0, 1].map((i) =>
        Promise.resolve(o.evaluate({x: 0.5, mode: 'hang'}, 1, {trialId: i, configId: `c${i}`, seed: 0})).catch(
          (e: Error) => e.message,
        ),
      )
      await waitFor(() => pidsIn(pidDir).length === 2)
      await o.close!()
      expect(await Promise.all(running)).toEqual(['cancelled: kt was interrupted', 'cancelled: kt was interrupted'])
      expect(await waitGone(pidsIn(pidDir))).toEqual([])
    } finally {
      delete process.env.TEST_PID_DIR
    }
  })
})

describe('kt search --engine (command)', () => {
  it('a study with crashing and garbage-printing trials goes on; failures keep their reason and stderr tail', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-engine-study-'))
    const storage = join(dir, 'studies.sqlite')
    const r = kt([
      'search',
      '--engine',
      ENGINE,
      '--optimizer',
      'random',
      '--trials',
      '12',
      '--workers',
      '3',
      '--storage',
      storage,
      '--study',
      's',
      '--seed',
      '3',
      '--json',
    ])
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    const store = SqliteStudyFile.open(storage, {mustExist: true})
    const trials = store.trials('s')
    store.close()
    expect(trials).toHaveLength(12)
    const failed = trials.filter((t) => t.status === 'failed')
    expect(trials.some((t) => t.status === 'ok')).toBe(true)
    expect(failed.length).toBeGreaterThan(0)
    for (const t of failed) {
      const mode = t.config.mode
      if (mode === 'crash') expect(t.error).toMatch(/^exit status 3\nstderr line 11\n[^]*stderr line 30$/)
      else if (mode === 'garbage') expect(t.error).toMatch(/^no line of stdout parses as a JSON object/)
      else expect(mode).toBe('nometric')
      expect(existsSync(join(dir, 's', 'trials', `${t.id}.err`))).toBe(true)
    }
    // random search evaluates at the top tier's budget; the engine saw that tier
    expect(new Set(trials.map((t) => t.budget))).toEqual(new Set([3]))
    for (const t of trials.filter((x) => x.status === 'ok')) expect(t.metrics).toMatchObject({budget: 3})
  })

  it('SIGINT to kt search stops the study and kills the running trials and their grandchildren', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-engine-int-'))
    const pidDir = join(dir, 'pids')
    const {mkdirSync} = await import('node:fs')
    mkdirSync(pidDir)
    const file = readJson(ENGINE) as Record<string, any>
    file.parameters[1] = {name: 'mode', type: 'categorical', choices: ['hang'], default: 'hang', env: 'TEST_MODE'}
    file.evaluate.command = ['python3', join(FIXTURES, 'misbehave.py')]
    writeFileSync(join(dir, 'engine.json'), JSON.stringify(file))
    const env: NodeJS.ProcessEnv = {...process.env, KT_NO_PROGRESS: '1', TEST_PID_DIR: pidDir}
    delete env.NODE_ENV
    const child = spawn(
      process.execPath,
      [
        join(packageRoot, 'bin', 'kt.js'),
        'search',
        '--engine',
        join(dir, 'engine.json'),
        '--optimizer',
        'random',
        '--trials',
        '5',
        '--workers',
        '2',
        '--storage',
        join(dir, 's.sqlite'),
        '--study',
        's',
      ],
      {env, stdio: ['ignore', 'pipe', 'pipe']},
    )
    let stderr = ''
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    await waitFor(() => pidsIn(pidDir).length === 2)
    child.kill('SIGINT')
    const code = await exited
    expect(code).toBe(130)
    expect(stderr).toContain('kt: interrupted; continue with: kt search --resume s')
    const pids = pidsIn(pidDir)
    expect(pids).toHaveLength(2)
    expect(await waitGone(pids)).toEqual([])
    expect(pids.some(alive)).toBe(false)
  })

  it('a bad engine file is one line naming the file and field, exit 2', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-engine-bad-'))
    const file = readJson(ENGINE) as Record<string, any>
    file.parameters[0].default = 2
    writeFileSync(join(dir, 'engine.json'), JSON.stringify(file))
    const r = kt(['search', '--engine', join(dir, 'engine.json'), '--storage', join(dir, 's.sqlite')])
    expect(r.status).toBe(2)
    expect(r.stderr).toBe(
      `kt: ${join(dir, 'engine.json')}: parameters[0].default: expected a number in [0, 1], got 2\n`,
    )
    expect(existsSync(join(dir, 's.sqlite'))).toBe(false)
  })
})
