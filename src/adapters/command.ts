/**
 * The `command` adapter: one process per trial, started without a shell in its own process group,
 * the configuration in the engine's own environment variables plus KT_CONFIG_JSON, KT_BUDGET,
 * KT_TIER, KT_TRIAL_ID and KT_SEED. The metrics are the last stdout line that parses as a JSON
 * object; exit status 0 is required. Anything else fails the trial with the reason and the last
 * lines of stderr, and the study goes on.
 *
 * No orphans: the trial's whole process group is signalled on timeout (SIGTERM, then SIGKILL after
 * KILL_GRACE_MS), after the trial's main process exits (whatever it left running in its group is
 * killed), when the objective is closed (kt interrupted), at process exit as a last resort, and
 * by the watchdog (process-groups.ts) when kt itself is killed (kill -9), which no code in kt survives.
 */
import {closeSync, openSync, writeSync} from 'node:fs'
import {join} from 'node:path'
import {activeConfig, configToEnv, type Config} from '../space/index.js'
import type {EvalContext, EvalResult, Objective} from '../space/objective.js'
import {ensureDir} from '../util/fs.js'
import {engineTierForBudget, type EngineSpec} from './file.js'
import type {CommandEvaluate} from './file-schema.js'
import {TrialFailure, lastJsonObjectLine, resultFromMetrics, tailLines, engineObjectiveHeader} from './metrics.js'
import {isLiveGroup, releaseGroup, signalGroup, spawnGroup} from './process-groups.js'
import {inheritedEnv} from './inherited-env.js'

/** Time a process group gets between SIGTERM and SIGKILL. */
const KILL_GRACE_MS = 1000
/**
 * Bytes of stdout (and of stderr) kept in memory per trial for parsing and the failure message;
 * the files beside the study keep everything.
 */
const MAX_CAPTURE_BYTES = 4 * 1024 * 1024

interface CommandTrial {
  readonly argv: readonly string[]
  readonly cwd: string
  readonly env: NodeJS.ProcessEnv
  readonly timeoutMs: number
  /** Files that receive the trial's stdout and stderr (kept beside the study). */
  readonly outFile?: string
  readonly errFile?: string
}

interface CommandRun {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly timedOut: boolean
  readonly cancelled: boolean
  readonly stdout: string
  readonly stderr: string
  readonly spawnError?: string
}

/** A running trial that can be cancelled (kt interrupted). */
interface Running {
  readonly pgid: number
  cancel(): void
}

/** Collects a stream's bytes up to a cap, keeping the newest (the JSON line comes last). */
class Capture {
  private chunks: Buffer[] = []
  private bytes = 0
  add(chunk: Buffer): void {
    this.chunks.push(chunk)
    this.bytes += chunk.length
    while (this.bytes > MAX_CAPTURE_BYTES && this.chunks.length > 1) this.bytes -= this.chunks.shift()!.length
  }
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8')
  }
}

/** Runs one command trial to its end (or its timeout, or cancellation). */
function runCommandTrial(trial: CommandTrial, track?: (r: Running | undefined) => void): Promise<CommandRun> {
  return new Promise((resolvePromise) => {
    const stdout = new Capture()
    const stderr = new Capture()
    // plain synchronous descriptors: a trial's output is small, and a stream's asynchronous open,
    // writes and close cost more than the writes themselves (kt bench adapters)
    const out = trial.outFile ? openSync(trial.outFile, 'w') : undefined
    const err = trial.errFile ? openSync(trial.errFile, 'w') : undefined
    let timedOut = false
    let cancelled = false
    let exited: {code: number | null; signal: NodeJS.Signals | null} | undefined
    let spawnError: string | undefined
    let killTimer: NodeJS.Timeout | undefined
    const child = spawnGroup(trial.argv, {cwd: trial.cwd, env: trial.env, stdio: ['ignore', 'pipe', 'pipe']})
    const pgid = child.pid
    const stop = (): void => {
      if (pgid === undefined) return
      signalGroup(pgid, 'SIGTERM')
      killTimer ??= setTimeout(() => signalGroup(pgid, 'SIGKILL'), KILL_GRACE_MS)
    }
    if (pgid !== undefined)
      track?.({
        pgid,
        cancel() {
          cancelled = true
          stop()
        },
      })
    const termTimer = setTimeout(() => {
      timedOut = true
      stop()
    }, trial.timeoutMs)
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout.add(chunk)
      if (out !== undefined) writeSync(out, chunk)
    })
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr.add(chunk)
      if (err !== undefined) writeSync(err, chunk)
    })
    child.on('error', (error) => {
      spawnError = error.message
    })
    child.on('exit', (code, signal) => {
      exited = {code, signal}
      // whatever the trial left running in its group would outlive it: end it now
      if (pgid !== undefined) signalGroup(pgid, 'SIGKILL')
    })
    child.on('close', (code, signal) => {
      clearTimeout(termTimer)
      clearTimeout(killTimer)
      if (pgid !== undefined) {
        signalGroup(pgid, 'SIGKILL')
        releaseGroup(pgid)
      }
      track?.(undefined)
      if (out !== undefined) closeSync(out)
      if (err !== undefined) closeSync(err)
      resolvePromise({
        code: exited?.code ?? code,
        signal: exited?.signal ?? signal,
        timedOut,
        cancelled,
        stdout: stdout.text(),
        stderr: stderr.text(),
        spawnError,
      })
    })
  })
}

/** Why a finished command run failed, or undefined if it succeeded. */
function commandFailure(run: CommandRun, timeoutMs: number): string | undefined {
  if (run.spawnError) return `could not start the command: ${run.spawnError}`
  if (run.cancelled) return 'cancelled: kt was interrupted'
  if (run.timedOut) return `timed out after ${timeoutMs / 1000} s (process group killed)`
  if (run.signal) return `killed by ${run.signal}`
  if (run.code !== 0) return `exit status ${run.code}`
  return undefined
}

/** The environment of one trial: kt's, the engine file's fixed variables, the parameters and KT_*. */
function trialEnv(
  spec: EngineSpec,
  evaluate: CommandEvaluate,
  config: Config,
  budget: number,
  ctx: EvalContext,
): NodeJS.ProcessEnv {
  const active = activeConfig(spec.space, config)
  const tier = engineTierForBudget(spec.tiers, budget)
  const env: NodeJS.ProcessEnv = {...inheritedEnv(), ...evaluate.env}
  for (const [name, value] of configToEnv(spec.space, active)) env[name] = value
  env.KT_CONFIG_JSON = JSON.stringify(active)
  env.KT_BUDGET = String(tier?.budget ?? budget)
  env.KT_TIER = tier?.name ?? ''
  env.KT_TRIAL_ID = String(ctx.trialId)
  env.KT_SEED = String(ctx.seed)
  return env
}

/**
 * The command objective of an engine file. Trials run as processes, so many can be in flight in
 * this thread (`concurrent`): `kt search --workers N` keeps N processes running.
 */
export function commandObjective(spec: EngineSpec, evaluate: CommandEvaluate): Objective {
  const running = new Map<number, Running>()
  const ensured = new Set<string>()
  const timeoutMs = evaluate.timeout_s * 1000
  return {
    ...engineObjectiveHeader(spec),
    async evaluate(config, budget, ctx): Promise<EvalResult> {
      let outFile: string | undefined
      let errFile: string | undefined
      if (ctx.artifactsDir) {
        if (!ensured.has(ctx.artifactsDir)) {
          ensureDir(ctx.artifactsDir)
          ensured.add(ctx.artifactsDir)
        }
        outFile = join(ctx.artifactsDir, `${ctx.trialId}.out`)
        errFile = join(ctx.artifactsDir, `${ctx.trialId}.err`)
      }
      const run = await runCommandTrial(
        {
          argv: evaluate.command,
          cwd: evaluate.cwd,
          env: trialEnv(spec, evaluate, config, budget, ctx),
          timeoutMs,
          outFile,
          errFile,
        },
        (r) => {
          if (r) running.set(ctx.trialId, r)
          else running.delete(ctx.trialId)
        },
      )
      const failure = commandFailure(run, timeoutMs)
      if (failure) throw new TrialFailure(failure, tailLines(run.stderr))
      const metrics = lastJsonObjectLine(run.stdout)
      if (!metrics)
        throw new TrialFailure('no line of stdout parses as a JSON object (the metrics)', tailLines(run.stderr))
      try {
        return resultFromMetrics(spec.objectives, metrics)
      } catch (error) {
        throw new TrialFailure((error as Error).message, tailLines(run.stderr))
      }
    },
    async close() {
      const waits = [...running.values()].map((r) => {
        r.cancel()
        return r.pgid
      })
      // wait until every cancelled group is gone (SIGKILL follows SIGTERM after the grace period)
      const deadline = Date.now() + KILL_GRACE_MS * 3
      while (waits.some(isLiveGroup) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    },
  }
}
