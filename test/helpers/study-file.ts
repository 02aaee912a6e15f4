// A SQLite study file read and written below the storage interface, synchronously: what a test
// needs to look at a study file, or to change it the way another process (or an older kt) would.
import Database from 'better-sqlite3'
import {
  finishParams,
  hintJson,
  studyFromRow,
  trialFromRow,
  type FinishedTrial,
  type StudyRecord,
  type TrialRow,
} from '../../src/study/model.js'
import type {NewTrial} from '../../src/study/storage.js'

export class SqliteStudyFile {
  private constructor(private readonly db: Database.Database) {}

  static open(path: string, options: {mustExist?: boolean; readonly?: boolean} = {}): SqliteStudyFile {
    return new SqliteStudyFile(new Database(path, {readonly: options.readonly ?? false, fileMustExist: true}))
  }

  getStudy(name: string): StudyRecord | undefined {
    const row = this.db.prepare('SELECT * FROM studies WHERE name = ?').get(name) as Record<string, unknown> | undefined
    return row ? studyFromRow('test', row) : undefined
  }

  trials(study: string): TrialRow[] {
    const rows = this.db.prepare('SELECT * FROM trials WHERE study = ? ORDER BY id').all(study)
    return (rows as Record<string, unknown>[]).map((r) => trialFromRow('test', r))
  }

  createStudy(record: Omit<StudyRecord, 'createdAt' | 'updatedAt' | 'state'>, now: string): void {
    const {name, objective, optimizer, options, seed, space} = record
    this.db
      .prepare(`INSERT INTO studies VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'running')`)
      .run(name, JSON.stringify(objective), optimizer, JSON.stringify(options), seed, JSON.stringify(space), now, now)
  }

  setStudyState(name: string, state: string, now: string): void {
    this.db.prepare('UPDATE studies SET state = ?, updated_at = ? WHERE name = ?').run(state, now, name)
  }

  insertTrial(study: string, t: NewTrial, owner: string, startedAt: string, nowMs: number): void {
    this.db
      .prepare(
        `INSERT INTO trials (study, id, config_id, config, budget, continues, info, status, started_at, owner, heartbeat_ms, attempts, ask_hint)
         VALUES (?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, 1, ?)`,
      )
      .run(
        study,
        t.id,
        t.configId,
        JSON.stringify(t.config),
        t.budget,
        t.continues?.trialId ?? null,
        ...[t.info ? JSON.stringify(t.info) : null, startedAt, owner, nowMs, hintJson(t.askHint)],
      )
  }

  claim(study: string, id: number, owner: string, startedAt: string, nowMs: number): void {
    this.db
      .prepare(
        "UPDATE trials SET owner = ?, heartbeat_ms = ?, attempts = attempts + 1, started_at = ? WHERE study = ? AND id = ? AND status = 'running'",
      )
      .run(owner, nowMs, startedAt, study, id)
  }

  finish(study: string, id: number, owner: string, r: FinishedTrial): boolean {
    const sql = `UPDATE trials SET status = ?, loss = ?, objective_values = ?, metrics = ?, checkpoint = ?, error = ?,
        tell_seq = ?, asks_before = ?, started_at = ?, finished_at = ?, duration_ms = ?, worker = ?, heartbeat_ms = NULL
      WHERE study = ? AND id = ? AND status = 'running' AND owner = ?`
    return this.db.prepare(sql).run(...finishParams(r), study, id, owner).changes === 1
  }

  heartbeat(study: string, owner: string, nowMs: number): void {
    this.db
      .prepare("UPDATE trials SET heartbeat_ms = ? WHERE study = ? AND owner = ? AND status = 'running'")
      .run(nowMs, study, owner)
  }

  close(): void {
    this.db.close()
  }
}
