/**
 * One study as the dashboard holds it between requests: its trials, its columns and its page
 * data, kept up to date incrementally. A refresh reads only what changed since the last one (the
 * trials asked or finished since, and the running ones: StudyReader.getStudySince), patches the
 * changed trials' columns and recomputes what follows the finish order; the front and profiles
 * are recomputed only when the trials at the largest budget changed. On SQLite a refresh with no
 * commit since the last one reads nothing at all (the store's data_version).
 *
 * Anything the incremental path cannot account for (a study recreated under the same name, a
 * running trial that vanished, a trial count other than the cache's, a new trial id below the
 * ones already seen) reloads the whole study.
 */
import type {StudyReader} from '../study/reader.js'
import {studyVersion} from '../study/reader.js'
import type {StudyRecord, TrialRow} from '../study/model.js'
import {
  appendFinished,
  assembleView,
  emptyColumns,
  finishOrder,
  grownBasis,
  sameBasis,
  viewBasis,
  writeTrial,
  type FinishState,
  type FrontMemo,
  type Siblings,
  type StudyView,
  type TrialColumns,
  type ViewBasis,
} from './views.js'

/** Largest 32-bit integer: no trial's tell_seq reaches it, so a full load reads the id range (every trial) once. */
const TELL_SEQ_NEVER = 2 ** 31 - 1

export type RefreshResult = 'unchanged' | 'changed' | 'missing'

/** What a refresh did (kt bench dashboard and the tests read it). */
export interface RefreshStats {
  /** 'full': the whole study was read; 'incremental': only the trials since the last refresh; 'none': no commit since. */
  readonly read: 'full' | 'incremental' | 'none'
  /** Trials read from the store. */
  readonly rows: number
  /** Trials whose columns were (re)written. */
  readonly patched: number
}

/** A trial's fields that can change after it is asked (status, result, restart); config and budget are fixed at the ask. */
function rowSignature(t: TrialRow): string {
  return `${t.status}|${t.tellSeq}|${t.finishedAt}|${t.startedAt}|${t.attempts ?? 1}`
}

/** The study's description without its state and update time (a change in it rebuilds everything). */
function fixedPart(s: StudyRecord): string {
  return JSON.stringify([s.objective, s.optimizer, s.seed, s.space, s.createdAt])
}

export class StudyCache {
  private study: StudyRecord | undefined
  private rows: TrialRow[] = []
  private readonly position = new Map<number, number>()
  private askCount = 0
  private tellSeq = 0
  private basis: ViewBasis | undefined
  private col: TrialColumns | undefined
  private finish: FinishState | undefined
  private readonly memo: {current?: FrontMemo} = {}
  private counter: string | undefined
  private queue: Promise<unknown> = Promise.resolve()
  /** The study's change signature, built from the cached trials the way StudyReader.versions() builds it from the store. */
  version: string | undefined
  lastRefresh: RefreshStats = {read: 'none', rows: 0, patched: 0}
  /** Smallest column position changed since takeChangedFrom() was last called (Infinity: none). */
  private changedFrom = 0

  constructor(
    private readonly reader: StudyReader,
    readonly name: string,
  ) {}

  get trials(): readonly TrialRow[] {
    return this.rows
  }

  get record(): StudyRecord | undefined {
    return this.study
  }

  /**
   * Brings the cache up to date with the store. `counter` is the reader's change counter read
   * before this refresh (undefined: always read). Refreshes of one cache run one at a time.
   */
  refresh(counter: string | undefined): Promise<RefreshResult> {
    const run = this.queue.then(() => this.doRefresh(counter))
    this.queue = run.catch(() => undefined)
    return run
  }

  /**
   * Column positions before this one are unchanged since the last call: the body serialiser
   * reuses their blocks' text without comparing values. Resets the mark.
   */
  takeChangedFrom(): number {
    const from = this.changedFrom
    this.changedFrom = Infinity
    return from
  }

  /** The page data, with the sibling studies of a routed study (their per-type results). */
  view(siblings: Siblings = []): StudyView {
    if (!this.study || !this.basis || !this.col) throw new Error(`study ${this.name} is not loaded`)
    return assembleView(this.study, this.rows, this.basis, this.col, siblings, this.memo)
  }

  private async doRefresh(counter: string | undefined): Promise<RefreshResult> {
    if (this.study && counter !== undefined && counter === this.counter) {
      this.lastRefresh = {read: 'none', rows: 0, patched: 0}
      return 'unchanged'
    }
    if (!this.study) return this.fullLoad(counter)
    const running = this.rows.filter((t) => t.status === 'running').map((t) => t.id)
    const got = await this.reader.getStudySince(this.name, this.askCount, this.tellSeq, running)
    if (!got) return this.forget()
    if (fixedPart(got.study) !== fixedPart(this.study)) return this.fullLoad(counter)
    const seen = new Set<number>()
    const changed: number[] = []
    const appended: TrialRow[] = []
    let refinished = false
    for (const t of got.trials) {
      seen.add(t.id)
      const at = this.position.get(t.id)
      if (at === undefined) {
        // ids are asked in increasing order: a new one below those seen is not a plain append
        if (t.id < this.askCount) return this.fullLoad(counter)
        appended.push(t)
      } else if (rowSignature(t) !== rowSignature(this.rows[at])) {
        // a finished trial does not change again; if one did, the finish order is recomputed whole
        if (this.rows[at].status !== 'running') refinished = true
        this.rows[at] = t
        changed.push(at)
      }
    }
    // every running trial comes back (running, or finished since): one that did not changed unseen;
    // and a trial count other than the cache's means trials came or went where the cursor does not look
    for (const id of running) if (!seen.has(id)) return this.fullLoad(counter)
    if (this.rows.length + appended.length !== got.total) return this.fullLoad(counter)
    const studyChanged = got.study.state !== this.study.state || got.study.updatedAt !== this.study.updatedAt
    this.study = got.study
    this.counter = counter
    if (changed.length === 0 && appended.length === 0) {
      this.lastRefresh = {read: 'incremental', rows: got.trials.length, patched: 0}
      if (studyChanged) this.version = this.computeVersion()
      return studyChanged ? 'changed' : 'unchanged'
    }
    for (const t of appended) {
      this.position.set(t.id, this.rows.length)
      this.rows.push(t)
      changed.push(this.rows.length - 1)
    }
    this.advanceCursor(changed.map((i) => this.rows[i]))
    const basis = grownBasis(
      this.basis!,
      got.study,
      this.rows,
      changed.map((i) => this.rows[i]),
    )
    if (!sameBasis(basis, this.basis!)) {
      this.rebuildColumns()
    } else {
      const col = this.col!
      const grow = (a: unknown[]) => {
        while (a.length < this.rows.length) a.push(null)
      }
      for (const a of [
        col.id,
        col.budget,
        col.status,
        col.value,
        col.order,
        col.best_so_far,
        col.budget_so_far,
        ...Object.values(col.config),
        ...Object.values(col.metric),
      ])
        grow(a)
      for (const i of changed) writeTrial(col, i, this.rows[i], basis)
      const finished = changed.filter((i) => this.rows[i].status !== 'running')
      const lookup = (id: number) => {
        const at = this.position.get(id)
        return at === undefined ? undefined : this.rows[at]
      }
      if (refinished || !appendFinished(col, this.finish!, this.rows, finished, basis.def, lookup)) {
        this.finish = finishOrder(col, this.rows, basis.def)
        this.changedFrom = 0
      }
      this.changedFrom = Math.min(this.changedFrom, ...changed)
    }
    this.version = this.computeVersion()
    this.lastRefresh = {read: 'incremental', rows: got.trials.length, patched: changed.length}
    return 'changed'
  }

  private async fullLoad(counter: string | undefined): Promise<RefreshResult> {
    // every trial, without checkpoints (they can be large and the page never shows them)
    const got = await this.reader.getStudySince(this.name, 0, TELL_SEQ_NEVER, [])
    if (!got) return this.forget()
    this.study = got.study
    this.rows = got.trials
    this.position.clear()
    this.rows.forEach((t, i) => this.position.set(t.id, i))
    this.askCount = 0
    this.tellSeq = 0
    this.advanceCursor(this.rows)
    this.memo.current = undefined
    this.rebuildColumns()
    this.counter = counter
    this.version = this.computeVersion()
    this.lastRefresh = {read: 'full', rows: this.rows.length, patched: this.rows.length}
    return 'changed'
  }

  private forget(): RefreshResult {
    this.study = undefined
    this.rows = []
    this.position.clear()
    this.basis = undefined
    this.col = undefined
    this.memo.current = undefined
    this.version = undefined
    this.counter = undefined
    return 'missing'
  }

  private rebuildColumns(): void {
    this.changedFrom = 0
    const basis = viewBasis(this.study!, this.rows)
    const col = emptyColumns(basis, this.rows.length)
    this.rows.forEach((t, i) => writeTrial(col, i, t, basis))
    this.finish = finishOrder(col, this.rows, basis.def)
    this.basis = basis
    this.col = col
  }

  private advanceCursor(trials: readonly TrialRow[]): void {
    for (const t of trials) {
      if (t.id + 1 > this.askCount) this.askCount = t.id + 1
      if (t.tellSeq !== null && t.tellSeq + 1 > this.tellSeq) this.tellSeq = t.tellSeq + 1
    }
  }

  private computeVersion(): string {
    let ok = 0
    let failed = 0
    let running = 0
    let bestLoss: number | null = null
    for (const t of this.rows) {
      if (t.status === 'ok') {
        ok++
        if (t.loss !== null && (bestLoss === null || t.loss < bestLoss)) bestLoss = t.loss
      } else if (t.status === 'failed') failed++
      else running++
    }
    const s = this.study!
    return studyVersion({
      state: s.state,
      updatedAt: s.updatedAt,
      trials: this.rows.length,
      ok,
      failed,
      running,
      bestLoss,
    })
  }
}
