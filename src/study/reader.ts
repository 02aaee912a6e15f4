/**
 * The read side of a study storage, as the dashboard needs it: list the studies, get one study
 * with its trials, and a per-study change signature to poll. Built on the storage interface
 * (src/study/storage.ts), so it reads a SQLite file or a PostgreSQL database alike, read-only.
 */
import {existsSync, readdirSync, statSync} from 'node:fs'
import {join} from 'node:path'
import {InputError} from '../util/errors.js'
import {isPostgresUrl, openStorage, redactStorage, type StudyStorage} from './storage.js'
import type {StudyRecord, TrialRow} from './model.js'

export interface StudySummary {
  readonly name: string
  readonly objective: unknown
  readonly optimizer: string
  readonly seed: number
  readonly state: string
  readonly trials: number
  readonly ok: number
  readonly failed: number
  readonly running: number
  readonly createdAt: string
  readonly updatedAt: string
}

export interface StudyReader {
  /** Where the studies are (a file path or a URL without its password). */
  readonly location: string
  listStudies(): Promise<StudySummary[]>
  getStudy(name: string): Promise<{study: StudyRecord; trials: TrialRow[]} | undefined>
  /**
   * The study with only the trials asked since askCount, finished since tellSeq, or in `ids` (the
   * ones the caller holds as running), without checkpoints, and the study's trial count: what a
   * cache that holds the study up to then needs to catch up (or to see that it cannot).
   */
  getStudySince(
    name: string,
    askCount: number,
    tellSeq: number,
    ids: readonly number[],
  ): Promise<{study: StudyRecord; trials: TrialRow[]; total: number} | undefined>
  /**
   * A string that differs whenever anything was committed to the store since the last call
   * (SQLite's data_version), or undefined where the store has no such counter (PostgreSQL).
   * The same string twice means nothing changed: cached views stand without a query.
   */
  changeCounter(): Promise<string | undefined>
  /**
   * Per study, a string that changes whenever the study or any of its trials does: a trial asked
   * (count), finished (ok/failed/running counts, best loss), a state or option change (updated
   * time). One aggregate query over the storage's study list.
   */
  versions(): Promise<Record<string, string>>
  close(): Promise<void>
}

/** A study's change signature from its summary: the dashboard's caches build the same string from their trials. */
export function studyVersion(s: {
  state: string
  updatedAt: string
  trials: number
  ok: number
  failed: number
  running: number
  bestLoss: number | null
}): string {
  return [s.state, s.updatedAt, s.trials, s.ok, s.failed, s.running, s.bestLoss ?? ''].join('|')
}

class StorageStudyReader implements StudyReader {
  /** versions() as of the change counter it was read at: polls that find no commit cost no query. */
  private versionsAt: {counter: number; versions: Record<string, string>} | undefined

  constructor(
    private readonly storage: StudyStorage,
    readonly location: string,
  ) {}

  async listStudies(): Promise<StudySummary[]> {
    // what a viewer lists: not the settings, the space or the best loss
    return (await this.storage.listStudies()).map(({options: _o, space: _s, bestLoss: _b, ...summary}) => summary)
  }

  async getStudy(name: string): Promise<{study: StudyRecord; trials: TrialRow[]} | undefined> {
    const study = await this.storage.getStudy(name)
    return study ? {study, trials: await this.storage.trials(name)} : undefined
  }

  async getStudySince(
    name: string,
    askCount: number,
    tellSeq: number,
    ids: readonly number[],
  ): Promise<{study: StudyRecord; trials: TrialRow[]; total: number} | undefined> {
    const study = await this.storage.getStudy(name)
    return study ? {study, ...(await this.storage.trialsSince(name, askCount, tellSeq, ids))} : undefined
  }

  async changeCounter(): Promise<string | undefined> {
    const c = await this.storage.changeCounter()
    return c === undefined ? undefined : String(c)
  }

  async versions(): Promise<Record<string, string>> {
    // read the counter first: a commit landing during the query then shows as a change next time
    const counter = await this.storage.changeCounter()
    if (counter !== undefined && this.versionsAt?.counter === counter) return {...this.versionsAt.versions}
    const list = await this.storage.listStudies()
    const versions = Object.fromEntries(list.map((s) => [s.name, studyVersion(s)]))
    this.versionsAt = counter === undefined ? undefined : {counter, versions}
    return {...versions}
  }

  async close(): Promise<void> {
    await this.storage.close()
  }
}

/**
 * Several stores read as one (a run folder: `studies.sqlite` and `retrieval-studies.sqlite`).
 * A study name found in two stores is listed from the first only, so names stay unique.
 */
class CompositeStudyReader implements StudyReader {
  constructor(
    private readonly readers: readonly StudyReader[],
    readonly location: string,
  ) {}

  /** Which store holds each study, as of the change counter it was read at (no commit since: no query). */
  private ownersAt: {counter: string; owner: Map<string, StudyReader>} | undefined

  private async owners(): Promise<Map<string, StudyReader>> {
    const counter = await this.changeCounter()
    if (counter !== undefined && this.ownersAt?.counter === counter) return this.ownersAt.owner
    const owner = new Map<string, StudyReader>()
    for (const r of this.readers) for (const s of Object.keys(await r.versions())) if (!owner.has(s)) owner.set(s, r)
    this.ownersAt = counter === undefined ? undefined : {counter, owner}
    return owner
  }

  async listStudies(): Promise<StudySummary[]> {
    const seen = new Set<string>()
    const out: StudySummary[] = []
    for (const r of this.readers)
      for (const s of await r.listStudies())
        if (!seen.has(s.name)) {
          seen.add(s.name)
          out.push(s)
        }
    return out
  }

  async getStudy(name: string): Promise<{study: StudyRecord; trials: TrialRow[]} | undefined> {
    return (await this.owners()).get(name)?.getStudy(name)
  }

  async getStudySince(
    name: string,
    askCount: number,
    tellSeq: number,
    ids: readonly number[],
  ): Promise<{study: StudyRecord; trials: TrialRow[]; total: number} | undefined> {
    return (await this.owners()).get(name)?.getStudySince(name, askCount, tellSeq, ids)
  }

  async changeCounter(): Promise<string | undefined> {
    const parts: string[] = []
    for (const r of this.readers) {
      const c = await r.changeCounter()
      if (c === undefined) return undefined
      parts.push(c)
    }
    return parts.join('/')
  }

  async versions(): Promise<Record<string, string>> {
    const out: Record<string, string> = {}
    for (const r of this.readers) for (const [k, v] of Object.entries(await r.versions())) if (!(k in out)) out[k] = v
    return out
  }

  async close(): Promise<void> {
    for (const r of this.readers) await r.close()
  }
}

/** Study files a run folder holds (kt run writes studies.sqlite and retrieval-studies.sqlite). */
const STUDY_FILE = /\.sqlite$/

/**
 * Opens a --storage value read-only: a SQLite file, a postgresql:// URL, or a folder (a run's
 * folder), whose *.sqlite study files are read together. A missing or foreign store is a one-line
 * InputError.
 */
export async function openStudyReader(spec: string): Promise<StudyReader> {
  if (!isPostgresUrl(spec) && existsSync(spec) && statSync(spec).isDirectory()) {
    const files = readdirSync(spec)
      .filter((f) => STUDY_FILE.test(f))
      .sort()
    if (files.length === 0)
      throw new InputError(
        spec,
        'a study file, a postgresql:// URL, or a folder holding *.sqlite study files',
        'a folder without any',
      )
    const readers: StudyReader[] = []
    try {
      for (const f of files) readers.push(await openStudyReader(join(spec, f)))
    } catch (error) {
      for (const r of readers) await r.close()
      throw error
    }
    return new CompositeStudyReader(readers, spec)
  }
  const storage = await openStorage(spec, {readonly: true, mustExist: true})
  return new StorageStudyReader(storage, redactStorage(spec))
}
