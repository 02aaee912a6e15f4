/**
 * A pool of worker threads evaluating trials in parallel on one machine. The main thread owns the
 * optimiser and the store and hands each trial to exactly one idle worker, so nothing is evaluated
 * twice. A worker that overruns the timeout is terminated and replaced; its trial fails.
 */
import {createRequire} from 'node:module'
import {pathToFileURL} from 'node:url'
import {Worker} from 'node:worker_threads'
import type {ObjectiveSpec} from './objectives.js'
import {InputError} from '../util/errors.js'
import {errorLine, type EvalJob, type Outcome} from './evaluate.js'

interface Slot {
  worker: Worker
  busy?: {
    job: EvalJob
    resolve: (o: Outcome) => void
    reject: (e: Error) => void
    timer?: NodeJS.Timeout
    startedAt: string
    t0: number
  }
}

/**
 * Starts the worker module next to this file: worker.js when built; from TypeScript sources
 * (tests) worker.ts, through a tiny bootstrap that registers tsx in the new thread first (Node 20
 * workers do not inherit the parent's module hooks).
 */
function startWorker(workerData: unknown): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./worker.js', import.meta.url), {workerData})
  const tsxApi = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api')).href
  const target = new URL('./worker.ts', import.meta.url).href
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then((api) => { api.register(); return import(${JSON.stringify(target)}) })`
  return new Worker(bootstrap, {eval: true, workerData})
}

/** How long an idle worker may take to release its objective when the pool closes. */
const WORKER_CLOSE_GRACE_MS = 2000

/**
 * Most trials one process evaluates at once (--workers). Each slot is a worker thread, a whole
 * V8 instance with its own copy of the objective: measured here, 64 threads took 654 MB and 5 s
 * to start, so a mistyped count (1000) would exhaust memory before doing any work. More
 * concurrency than this comes from more worker processes (kt worker, on any number of machines).
 */
export const MAX_WORKERS_PER_PROCESS = 64

/**
 * Threads start as trials arrive, one more whenever every started one is busy, up to `size`: a
 * study that is already complete (or a slot that waits for a rung) starts none.
 */
export class WorkerPool {
  private readonly slots: Slot[] = []
  private closed = false

  constructor(
    private readonly spec: ObjectiveSpec,
    readonly size: number,
    private readonly timeoutMs: number | undefined,
    private readonly now: () => string,
  ) {}

  /** Threads started so far. */
  get started(): number {
    return this.slots.length
  }

  get idle(): number {
    return this.size - this.slots.filter((s) => s.busy).length
  }

  private spawn(): Worker {
    const worker = startWorker({spec: this.spec})
    worker.on('message', (message: {trialId: number; outcome?: Outcome; fatal?: string}) =>
      this.onMessage(worker, message),
    )
    worker.on('error', (error) => this.onCrash(worker, error))
    worker.on('exit', (code) => {
      if (!this.closed && code !== 0) this.onCrash(worker, new Error(`worker exited with code ${code}`))
    })
    return worker
  }

  /** Evaluates a job on an idle worker (the caller never submits more jobs than workers). */
  evaluate(job: EvalJob): Promise<Outcome> {
    let slot = this.slots.find((s) => !s.busy)
    if (!slot && this.slots.length < this.size && !this.closed) this.slots.push((slot = {worker: this.spawn()}))
    if (!slot) throw new Error('WorkerPool: no idle worker')
    return new Promise((resolve, reject) => {
      slot.busy = {job, resolve, reject, startedAt: this.now(), t0: performance.now()}
      if (this.timeoutMs) slot.busy.timer = setTimeout(() => this.onTimeout(slot), this.timeoutMs)
      slot.worker.postMessage(job)
    })
  }

  private onMessage(worker: Worker, message: {trialId: number; outcome?: Outcome; fatal?: string}): void {
    const slot = this.slots.find((s) => s.worker === worker)
    if (!slot?.busy || slot.busy.job.trialId !== message.trialId) return
    const {resolve, reject, timer} = slot.busy
    if (timer) clearTimeout(timer)
    slot.busy = undefined
    if (message.fatal !== undefined)
      reject(new InputError('objective (in a worker thread)', 'an objective that builds', message.fatal))
    else resolve(message.outcome!)
  }

  private fail(slot: Slot, error: string): void {
    const busy = slot.busy
    if (!busy) return
    if (busy.timer) clearTimeout(busy.timer)
    slot.busy = undefined
    busy.resolve({
      status: 'failed',
      error,
      startedAt: busy.startedAt,
      finishedAt: this.now(),
      durationMs: performance.now() - busy.t0,
    })
  }

  private onTimeout(slot: Slot): void {
    const old = slot.worker
    slot.worker = this.spawn()
    this.fail(slot, `timed out after ${this.timeoutMs} ms`)
    void old.terminate()
  }

  private onCrash(worker: Worker, error: unknown): void {
    const slot = this.slots.find((s) => s.worker === worker)
    if (!slot || this.closed) return
    slot.worker = this.spawn()
    this.fail(slot, `worker crashed: ${errorLine(error)}`)
  }

  async close(): Promise<void> {
    this.closed = true
    for (const slot of this.slots) if (slot.busy?.timer) clearTimeout(slot.busy.timer)
    // idle workers release their objective (a service process, a connection) before they stop
    await Promise.all(
      this.slots.map(async (s) => {
        if (!s.busy) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, WORKER_CLOSE_GRACE_MS)
            s.worker.on('message', (m: {closed?: boolean}) => {
              if (m.closed) {
                clearTimeout(timer)
                resolve()
              }
            })
            s.worker.postMessage({close: true})
          })
        }
        await s.worker.terminate()
      }),
    )
  }
}
