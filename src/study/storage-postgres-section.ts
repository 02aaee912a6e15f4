/**
 * A locked section of a PostgreSQL study in two round trips (StudyStorage.withStudyLock): BEGIN
 * with the study row's lock, the prelude's finish (its tell_seq and asks_before computed under the
 * lock, its NOTIFY in the same statement) and the unseen trials with the running ones (the
 * leases), in one message; then the section's writes, buffered, sent with COMMIT. Without a
 * prelude, tx.changes and tx.finish are a round trip each. Statements are SQL with escaped
 * literals (client.escapeLiteral), since one message cannot carry several parameterised
 * statements: the plain design (one parameterised statement per round trip, about ten a section,
 * storage-sql.ts) ran several times fewer trials a second (docs/measurements.md).
 */
import type pg from 'pg'
import {finishParams, hintJson, trialFromRow, TRIAL_COLUMNS_NO_CHECKPOINT, type FinishedTrial} from './model.js'
import type {Lease, NewTrial, SectionPrelude, StudyTx} from './storage.js'

/** NOTIFY channel of every kt study; the payload is the study name. */
export const CHANNEL = 'kt_study'

/**
 * The statements of a locked section, prepared once per connection (SQL PREPARE, so that they
 * can share one simple-protocol message with BEGIN and COMMIT) and run with EXECUTE. Their plans
 * do not depend on the values (lookups and range scans by index), so the connection uses the
 * generic plans from the start instead of planning each execution with its values first.
 */
export const SECTION_STATEMENTS = `
SET plan_cache_mode = force_generic_plan;
PREPARE kt_lock(text) AS SELECT state FROM kt_studies WHERE name = $1 FOR UPDATE;
PREPARE kt_granted AS SELECT extract(epoch from clock_timestamp()) * 1000 AS now_ms;
PREPARE kt_changes(text, integer, integer) AS SELECT ${TRIAL_COLUMNS_NO_CHECKPOINT} FROM kt_trials
  WHERE study = $1 AND (id >= $2 OR tell_seq >= $3) ORDER BY id;
PREPARE kt_leases(text) AS SELECT id, owner, heartbeat_ms, attempts FROM kt_trials WHERE study = $1 AND status = 'running' ORDER BY id;
PREPARE kt_finish(text, integer, text, text, double precision, text, text, text, text, text, text, double precision, integer) AS
  WITH u AS (UPDATE kt_trials SET status = $4, loss = $5, objective_values = $6, metrics = $7, checkpoint = $8, error = $9,
      tell_seq = (SELECT COALESCE(MAX(tell_seq), -1) + 1 FROM kt_trials WHERE study = $1),
      asks_before = (SELECT COALESCE(MAX(id), -1) + 1 FROM kt_trials WHERE study = $1),
      started_at = $10, finished_at = $11, duration_ms = $12, worker = $13, heartbeat_ms = NULL
    WHERE study = $1 AND id = $2 AND status = 'running' AND owner = $3 RETURNING id)
  SELECT id, pg_notify('${CHANNEL}', $1) FROM u;
PREPARE kt_insert(text, integer, text, text, double precision, integer, text, text, text, double precision, text) AS
  INSERT INTO kt_trials (study, id, config_id, config, budget, continues, info, status, started_at, owner, heartbeat_ms, attempts, ask_hint)
  VALUES ($1, $2, $3, $4, $5, $6, $7, 'running', $8, $9, $10, 1, $11);
PREPARE kt_claim(text, integer, text, text, double precision) AS
  UPDATE kt_trials SET owner = $3, heartbeat_ms = $5, attempts = attempts + 1, started_at = $4 WHERE study = $1 AND id = $2 AND status = 'running';
PREPARE kt_barrier(text, integer) AS
  UPDATE kt_trials SET heartbeat_ms = heartbeat_ms WHERE study = $1 AND id = $2 RETURNING extract(epoch from clock_timestamp()) * 1000 AS now_ms;
`

/*
 * DURABILITY_BARRIER (kt_barrier). A section that wrote commits with synchronous_commit = off for
 * its transaction only, so the server releases the study lock as soon as the commit record is in
 * the WAL buffer: the WAL flush (an fsync, about as long as the rest of the section) leaves the
 * serialized path that every worker queues on. kt_barrier follows in the same message, after the
 * COMMIT: a transaction of its own (so at the session's synchronous_commit level) whose commit
 * waits for the WAL up to its own commit record, which lies after the section's; concurrent
 * barriers share one flush (group commit). It must change a row: PostgreSQL commits a transaction
 * that wrote no WAL but its commit record asynchronously (a bare `SELECT txid_current()` is no
 * barrier). The row is one no other worker writes (the trial the section handed out, else the one
 * it finished), so barriers never wait for each other's locks; a section with neither commits
 * synchronously instead.
 *
 * Why nothing is weakened: the message's result, and so anything a worker records, reports or
 * hands on, arrives only after the barrier. Others may read a section before it is durable, but
 * the WAL is one sequence: a section that read ours committed after ours, so whatever makes it
 * durable makes ours durable first, and a server crash leaves a prefix of the sections' order. A
 * crash also ends every connection, so a worker whose replica read sections that were lost finds
 * out (a failed statement, or a new connection: SessionCheck) and rebuilds it.
 */

/** A number as an SQL literal that reads back as the same double (non-finite ones as float8 strings). */
function numberLiteral(v: number): string {
  if (Number.isFinite(v)) return String(v)
  return Number.isNaN(v) ? "'NaN'" : v > 0 ? "'Infinity'" : "'-Infinity'"
}

type Result = {rows: Array<Record<string, unknown>>; rowCount: number | null}

const leaseOf = (r: Record<string, unknown>): Lease => ({
  id: Number(r.id),
  owner: (r.owner as string | null) ?? null,
  heartbeatMs: r.heartbeat_ms === null || r.heartbeat_ms === undefined ? null : Number(r.heartbeat_ms),
  attempts: Number(r.attempts ?? 1),
})

/** One section's state: what it sent, what it buffered for its commit, and what it changed. */
export class PostgresSection {
  private readonly pending: string[] = []
  private readonly readAfter: Array<{index: number; resolve: (v: unknown) => void; reject: (e: unknown) => void}> = []
  private readonly finished = new Set<number>()
  /** Whether the section changed anything, and the row its durability barrier may stamp (see DURABILITY_BARRIER). */
  private wrote = false
  private stamp: number | undefined
  /** Whether the section notified the study's waiters (delivered at COMMIT). */
  notified = false
  private nowMs = 0

  constructor(
    private readonly c: pg.Client,
    private readonly study: string,
    private readonly label: string,
    private readonly counters: {lockWaitMs: number; lockHeldMs: number; durableMs: number},
  ) {}

  private lit(v: unknown): string {
    return v === null || v === undefined
      ? 'NULL'
      : typeof v === 'number'
        ? numberLiteral(v)
        : this.c.escapeLiteral(String(v))
  }

  private execute(name: string, args: unknown[]): string {
    return `EXECUTE ${name}(${args.map((a) => this.lit(a)).join(', ')})`
  }

  /** The first round trip: the lock, the clock once it is granted, the prelude's finish and reads. */
  async begin(prelude: SectionPrelude | undefined, changeMark: number): Promise<StudyTx> {
    const {study, c} = this
    const statements = [`BEGIN; EXECUTE kt_lock(${this.lit(study)}); EXECUTE kt_granted`]
    const finish = prelude?.finish
    if (finish) {
      // the next tell in the study's order, and every trial asked so far (ids 0, 1, 2, ... under the lock)
      const [status, loss, values, metrics, checkpoint, error, , , startedAt, finishedAt, durationMs, worker] =
        finishParams({...finish.result, tellSeq: -1, asksBefore: -1})
      const args = [study, finish.trialId, finish.owner, status, loss, values, metrics, checkpoint, error]
      statements.push(this.execute('kt_finish', [...args, startedAt, finishedAt, durationMs, worker]))
    }
    const since = prelude?.since
    if (since)
      statements.push(
        this.execute('kt_changes', [study, since.askCount, since.tellSeq]),
        this.execute('kt_leases', [study]),
      )
    const t0 = performance.now()
    const results = (await c.query(statements.join('; '))) as unknown as Result[]
    this.counters.lockWaitMs += performance.now() - t0
    // the server's clock once the lock is granted (a FOR UPDATE row's columns may be computed before its wait)
    this.nowMs = Number(results[2].rows[0].now_ms)
    const recorded = finish ? results[3].rowCount === 1 : undefined
    if (finish && recorded) this.wroteTell(finish.trialId)
    const prefetched = since ? results[results.length - 2].rows : undefined
    let running = since ? results[results.length - 1].rows.map(leaseOf) : undefined
    const locked = results[1].rows[0] as {state: string} | undefined
    return {
      nowMs: this.nowMs,
      changeMark,
      recorded,
      state: locked?.state ?? 'missing',
      changes: async (askCount, tellSeq) => {
        const same = since && since.askCount === askCount && since.tellSeq === tellSeq
        const rows = same ? prefetched! : (await c.query(this.execute('kt_changes', [study, askCount, tellSeq]))).rows
        return rows.map((r) => trialFromRow(this.label, r))
      },
      leases: async () => {
        running ??= (await c.query(this.execute('kt_leases', [study]))).rows.map(leaseOf)
        return running.filter((l) => !this.finished.has(l.id))
      },
      insertTrial: async (t: NewTrial, owner, startedAt) => {
        const head = [study, t.id, t.configId, JSON.stringify(t.config), t.budget, t.continues?.trialId ?? null]
        const info = t.info ? JSON.stringify(t.info) : null
        this.write(this.execute('kt_insert', [...head, info, startedAt, owner, this.nowMs, hintJson(t.askHint)]), t.id)
      },
      claim: async (trialId, owner, startedAt) =>
        this.write(this.execute('kt_claim', [study, trialId, owner, startedAt, this.nowMs]), trialId),
      finish: (trialId, owner, r) => this.finish(trialId, owner, r),
      checkpointAfterCommit: (trialId) => this.checkpointAfterCommit(trialId),
      setState: async (state, now) =>
        this.write(
          `UPDATE kt_studies SET state = ${this.lit(state)}, updated_at = ${this.lit(now)} WHERE name = ${this.lit(study)}`,
        ),
      notify: async () => {
        if (this.notified) return
        this.notified = true
        this.write(`SELECT pg_notify(${this.lit(CHANNEL)}, ${this.lit(study)})`)
      },
    }
  }

  /** A write buffered for the commit; `stamp` a row the section changed that no other worker writes. */
  private write(sql: string, stamp?: number): void {
    this.pending.push(sql)
    this.wrote = true
    if (stamp !== undefined) this.stamp = stamp
  }

  private wroteTell(trialId: number): void {
    this.notified = true
    this.wrote = true
    this.stamp ??= trialId
    this.finished.add(trialId)
  }

  /** The tell and its notification in one statement (NOTIFY is delivered at COMMIT). */
  private async finish(trialId: number, owner: string, r: FinishedTrial): Promise<boolean> {
    const res = await this.c.query(
      `WITH u AS (UPDATE kt_trials SET status = $1, loss = $2, objective_values = $3, metrics = $4, checkpoint = $5, error = $6,
         tell_seq = $7, asks_before = $8, started_at = $9, finished_at = $10, duration_ms = $11, worker = $12, heartbeat_ms = NULL
       WHERE study = $13 AND id = $14 AND status = 'running' AND owner = $15 RETURNING id)
       SELECT id, pg_notify($16, $13) FROM u`,
      [...finishParams(r), this.study, trialId, owner, CHANNEL],
    )
    if (res.rowCount === 1) this.wroteTell(trialId)
    return res.rowCount === 1
  }

  /** The checkpoint, read with the commit's message: settles after the section commits (never awaited inside it). */
  private checkpointAfterCommit(trialId: number): Promise<unknown> {
    const read = new Promise<unknown>((resolve, reject) => {
      this.readAfter.push({index: this.pending.length, resolve, reject})
      this.pending.push(
        `SELECT checkpoint FROM kt_trials WHERE study = ${this.lit(this.study)} AND id = ${this.lit(trialId)} AND status = 'ok'`,
      )
    })
    // a section that fails rejects it; the caller then never sees it
    read.catch(() => undefined)
    return read
  }

  /**
   * The second round trip: the buffered writes and COMMIT. A section that wrote commits
   * asynchronously and is made durable by the barrier that follows in the same message (see
   * DURABILITY_BARRIER); any other reads the clock after its (synchronous) commit. `committing`
   * is called once the message is sent.
   */
  async commit<T>(result: T, committing?: (value: T) => void): Promise<void> {
    const studyLit = this.lit(this.study)
    const barrier = this.wrote && this.stamp !== undefined
    const tail = barrier
      ? ['SET LOCAL synchronous_commit = off', 'COMMIT', `EXECUTE kt_barrier(${studyLit}, ${this.lit(this.stamp)})`]
      : ['COMMIT', 'EXECUTE kt_granted']
    try {
      const sent = performance.now()
      const commit = this.c.query([...this.pending, ...tail].join('; '))
      // the caller may go on (start the trial it was handed) while the server makes this durable
      committing?.(result)
      const done = await commit
      // one result per statement when several were sent
      const parts = (Array.isArray(done) ? done : [done]) as Result[]
      const last = parts[parts.length - 1].rows
      // a barrier that changed no row wrote no WAL: the section would not be known durable
      if (last.length !== 1)
        throw new Error(
          `${this.label}: study ${this.study}: trial ${this.stamp} vanished before its section was made durable`,
        )
      this.counters.durableMs += performance.now() - sent
      // held from the grant to the commit's end, both on the server's clock
      this.counters.lockHeldMs += Math.max(0, Number(last[0].now_ms) - this.nowMs)
      for (const r of this.readAfter) {
        const text = parts[r.index]?.rows[0]?.checkpoint as string | null | undefined
        r.resolve(text ? JSON.parse(text) : undefined)
      }
    } catch (error) {
      for (const r of this.readAfter) r.reject(error)
      throw error
    }
  }
}
