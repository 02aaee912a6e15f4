/**
 * The study model, outside any backend: a study's fixed description (StudyRecord), its trials
 * (TrialRow), a finished trial's result, the schema's format marker and version, and the row
 * codec both storages (storage-sqlite.ts, storage-postgres.ts) share: columns in, records out.
 */
import {InputError} from '../util/errors.js'
import type {Outcome} from './evaluate.js'

/** The `--storage` every command uses unless told otherwise: a SQLite file in the working directory. */
export const DEFAULT_STORAGE = 'kt-studies.sqlite'

/** Marker and version of kt's study schema, kept in the kt_meta table. */
export const STUDY_FORMAT = 'kt-study'
/**
 * 2 added leases (owner, heartbeat_ms, attempts) for workers in many processes; 3 added ask_hint
 * (the optimiser's replay hint of each trial, nullable: older rows replay by re-running the ask).
 * An older file or database is read as it is and upgraded in place the first time it is opened
 * for writing.
 */
export const STUDY_FORMAT_VERSION = '3'
/** Versions this kt reads; anything else is another kt version's schema. */
export const READABLE_FORMAT_VERSIONS: readonly string[] = ['1', '2', '3']

type StoredStatus = 'running' | 'ok' | 'failed'

/** A study's fixed description: enough to rebuild the objective and the optimiser on resume. */
export interface StudyRecord {
  readonly name: string
  /** Serializable objective description (see src/study/objectives.ts). */
  readonly objective: unknown
  readonly optimizer: string
  /** Optimiser options, stopping rule, timeout: whatever the runner needs to continue. */
  readonly options: Record<string, unknown>
  readonly seed: number
  /** The ParamSpace searched (after --fix / --range overrides), as JSON. */
  readonly space: unknown
  readonly createdAt: string
  readonly updatedAt: string
  readonly state: string
}

export interface TrialRow {
  readonly study: string
  readonly id: number
  readonly configId: string
  readonly config: Record<string, string | number | boolean>
  readonly budget: number
  readonly continues: number | null
  readonly info: Record<string, unknown> | null
  readonly status: StoredStatus
  readonly loss: number | null
  readonly values: number[] | null
  readonly metrics: Record<string, number> | null
  readonly checkpoint: unknown
  readonly error: string | null
  readonly tellSeq: number | null
  readonly asksBefore: number | null
  readonly startedAt: string | null
  readonly finishedAt: string | null
  readonly durationMs: number | null
  readonly worker: number | null
  /**
   * The worker (`host/pid/token`) holding a running trial (null when released); for a finished
   * trial, the worker that finished it (kept at the tell: exports show it as `worker`, host/pid),
   * null for trials finished before kt kept it.
   */
  readonly owner?: string | null
  /** How many times the trial was started (2 or more: taken over after its worker stopped). */
  readonly attempts?: number
  /** The asking optimiser's replay hint (Optimizer.askHint), JSON; null when it had none or the row predates version 3. */
  readonly askHint?: unknown
}

/** A finished evaluation as the store records it: the outcome plus its place in the tell order. */
export interface FinishedTrial extends Outcome {
  readonly tellSeq: number
  readonly asksBefore: number
}

/** Parses a JSON column kt wrote; unparseable text is a one-line error naming the storage and field. */
export function parseJsonField<T = unknown>(label: string, text: string, field: string): T {
  try {
    return JSON.parse(text) as T
  } catch {
    throw new InputError(`${label}: ${field}`, 'JSON written by kt', 'unparseable text (damaged study storage)')
  }
}

/** A studies row (either backend) as a StudyRecord. */
export function studyFromRow(label: string, r: Record<string, unknown>): StudyRecord {
  const name = String(r.name)
  return {
    name,
    objective: parseJsonField(label, String(r.objective), `study ${name} objective`),
    optimizer: String(r.optimizer),
    options: parseJsonField(label, String(r.options), `study ${name} options`),
    seed: Number(r.seed),
    space: parseJsonField(label, String(r.space), `study ${name} space`),
    createdAt: String(r.created_at),
    updatedAt: String(r.updated_at),
    state: String(r.state),
  }
}

/** A trials row (either backend) as a TrialRow. */
export function trialFromRow(label: string, r: Record<string, unknown>): TrialRow {
  const where = `study ${String(r.study)} trial ${Number(r.id)}`
  const json = <T>(v: unknown, field: string): T | null =>
    v === null || v === undefined ? null : parseJsonField<T>(label, String(v), `${where} ${field}`)
  const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v))
  return {
    study: String(r.study),
    id: Number(r.id),
    configId: String(r.config_id),
    config: parseJsonField(label, String(r.config), `${where} config`),
    budget: Number(r.budget),
    continues: num(r.continues),
    info: json(r.info, 'info'),
    status: r.status as StoredStatus,
    loss: num(r.loss),
    values: json(r.objective_values, 'values'),
    metrics: json(r.metrics, 'metrics'),
    checkpoint: json(r.checkpoint, 'checkpoint'),
    error: r.error === null || r.error === undefined ? null : String(r.error),
    tellSeq: num(r.tell_seq),
    asksBefore: num(r.asks_before),
    startedAt: r.started_at === null || r.started_at === undefined ? null : String(r.started_at),
    finishedAt: r.finished_at === null || r.finished_at === undefined ? null : String(r.finished_at),
    durationMs: num(r.duration_ms),
    worker: num(r.worker),
    owner: r.owner === null || r.owner === undefined ? null : String(r.owner),
    attempts: r.attempts === null || r.attempts === undefined ? 1 : Number(r.attempts),
    askHint: hintOf(r.ask_hint),
  }
}

/** A stored replay hint; unreadable text counts as none (the hint only saves work: the trial then replays in full). */
function hintOf(v: unknown): unknown {
  if (v === null || v === undefined) return null
  try {
    return JSON.parse(String(v))
  } catch {
    return null
  }
}

/** A replay hint as stored: JSON text, or NULL without one. */
export function hintJson(hint: unknown): string | null {
  return hint === null || hint === undefined ? null : JSON.stringify(hint)
}

/** Every trial column but the checkpoint (which can be large and is read only when continued). */
export const TRIAL_COLUMNS_NO_CHECKPOINT =
  'study, id, config_id, config, budget, continues, info, status, loss, objective_values, metrics, error, tell_seq, asks_before, started_at, finished_at, duration_ms, worker, owner, attempts, ask_hint'

/** TRIAL_COLUMNS_NO_CHECKPOINT as a schema version has them (a viewer reads older files without upgrading them). */
export function trialColumnsOf(version: string): string {
  const missing = version === '1' ? ['owner', 'attempts', 'ask_hint'] : version === '2' ? ['ask_hint'] : []
  return TRIAL_COLUMNS_NO_CHECKPOINT.split(', ')
    .filter((c) => !missing.includes(c))
    .join(', ')
}

/** The result columns of a finished trial, in the order of finishParams. */
export function finishParams(r: FinishedTrial): unknown[] {
  return [
    r.status,
    r.status === 'ok' ? (r.loss ?? null) : null,
    r.values ? JSON.stringify(r.values) : null,
    r.metrics ? JSON.stringify(r.metrics) : null,
    r.checkpoint === undefined ? null : JSON.stringify(r.checkpoint),
    r.error ?? null,
    r.tellSeq,
    r.asksBefore,
    r.startedAt,
    r.finishedAt,
    r.durationMs,
    r.worker ?? null,
  ]
}

/** Columns kt study copy writes, in the order of importParams. */
export const IMPORT_COLUMNS = [
  'study',
  'id',
  'config_id',
  'config',
  'budget',
  'continues',
  'info',
  'status',
  'loss',
  'objective_values',
  'metrics',
  'checkpoint',
  'error',
  'tell_seq',
  'asks_before',
  'started_at',
  'finished_at',
  'duration_ms',
  'worker',
  'owner',
  'heartbeat_ms',
  'attempts',
  'ask_hint',
] as const

export function importParams(study: string, t: TrialRow): unknown[] {
  const json = (v: unknown): string | null => (v === null || v === undefined ? null : JSON.stringify(v))
  return [
    study,
    t.id,
    t.configId,
    JSON.stringify(t.config),
    t.budget,
    t.continues,
    json(t.info),
    t.status,
    t.loss,
    json(t.values),
    json(t.metrics),
    json(t.checkpoint),
    t.error,
    // a finished trial keeps who finished it; a running one arrives released (no lease, no heartbeat)
    t.tellSeq,
    t.asksBefore,
    t.startedAt,
    t.finishedAt,
    t.durationMs,
    t.worker,
    t.status === 'running' ? null : (t.owner ?? null),
    null,
    t.attempts ?? 1,
    hintJson(t.askHint),
  ]
}
