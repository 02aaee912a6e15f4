/**
 * A pool of worker threads evaluating trials in parallel on one machine. The main thread owns the
 * optimiser and the store and hands each trial to exactly one idle worker, so nothing is evaluated
 * twice. A worker that overruns the timeout is terminated and replaced; its trial fails.
 */
import {Worker} from 'node:worker_threads'
import type {ObjectiveSpec} from '../search/objectives.js'
import {errorLine, type EvalJob, type Outcome} from './evaluate.js'

interface Slot {
  worker: Worker
  busy?: {job: EvalJob; resolve: (o: Outcome) => void; timer?: NodeJS.Timeout; startedAt: string; t0: number}
}

/** The worker module next to this file: worker.js when built, worker.ts (through tsx) from source. */
function workerTarget(): {url: URL; execArgv: string[]} {
  const fromSource = import.meta.url.endsWith('.ts')
  return fromSource
    ? {url: new URL('./worker.ts', import.meta.url), execArgv: [...process.execArgv.filter((a) => a !== '--import' && a !== 'tsx'), '--import', 'tsx']}
    : {url: new URL('./worker.js', import.meta.url), execArgv: process.execArgv}
}

export class WorkerPool {
  private readonly slots: Slot[] = []
  private closed = false

  constructor(
    private readonly spec: ObjectiveSpec,
    size: number,
    private readonly timeoutMs: number | undefined,
    private readonly now: () => string,
  ) {
    for (let i = 0; i < size; i++) this.slots.push({worker: this.spawn()})
  }

  get size(): number {
    return this.slots.length
  }

  get idle(): number {
    return this.slots.filter((s) => !s.busy).length
  }

  private spawn(): Worker {
    const {url, execArgv} = workerTarget()
    const worker = new Worker(url, {workerData: {spec: this.spec}, execArgv})
    worker.on('message', (message: {trialId: number; outcome: Outcome}) => this.onMessage(worker, message))
    worker.on('error', (error) => this.onCrash(worker, error))
    worker.on('exit', (code) => {
      if (!this.closed && code !== 0) this.onCrash(worker, new Error(`worker exited with code ${code}`))
    })
    return worker
  }

  /** Evaluates a job on an idle worker (the caller never submits more jobs than workers). */
  evaluate(job: EvalJob): Promise<Outcome> {
    const slot = this.slots.find((s) => !s.busy)
    if (!slot) throw new Error('WorkerPool: no idle worker')
    return new Promise((resolve) => {
      slot.busy = {job, resolve, startedAt: this.now(), t0: performance.now()}
      if (this.timeoutMs) slot.busy.timer = setTimeout(() => this.onTimeout(slot), this.timeoutMs)
      slot.worker.postMessage(job)
    })
  }

  private onMessage(worker: Worker, message: {trialId: number; outcome: Outcome}): void {
    const slot = this.slots.find((s) => s.worker === worker)
    if (!slot?.busy || slot.busy.job.trialId !== message.trialId) return
    const {resolve, timer} = slot.busy
    if (timer) clearTimeout(timer)
    slot.busy = undefined
    resolve(message.outcome)
  }

  private fail(slot: Slot, error: string): void {
    const busy = slot.busy
    if (!busy) return
    if (busy.timer) clearTimeout(busy.timer)
    slot.busy = undefined
    busy.resolve({status: 'failed', error, startedAt: busy.startedAt, finishedAt: this.now(), durationMs: performance.now() - busy.t0})
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
    await Promise.all(this.slots.map((s) => s.worker.terminate()))
  }
}
