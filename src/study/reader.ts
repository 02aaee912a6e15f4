/**
 * The read side of a study storage, as the dashboard needs it: list the studies, get one study
 * with its trials, and a per-study change signature to poll. Built on the storage interface
 * (src/study/storage.ts), so it reads a SQLite file or a PostgreSQL database alike, read-only.
 */
import {openStorage, redactStorage, type StudyStorage} from './storage.js'
import type {StudyRecord, TrialRow} from './store.js'

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
   * Per study, a string that changes whenever the study or any of its trials does: a trial asked
   * (count), finished (ok/failed/running counts, best loss), a state or option change (updated
   * time). One aggregate query over the storage's study list.
   */
  versions(): Promise<Record<string, string>>
  close(): Promise<void>
}

export class StorageStudyReader implements StudyReader {
  constructor(private readonly storage: StudyStorage, readonly location: string) {}

  async listStudies(): Promise<StudySummary[]> {
    return (await this.storage.listStudies()).map((s) => ({
      name: s.name, objective: s.objective, optimizer: s.optimizer, seed: s.seed, state: s.state,
      trials: s.trials, ok: s.ok, failed: s.failed, running: s.running, createdAt: s.createdAt, updatedAt: s.updatedAt,
    }))
  }

  async getStudy(name: string): Promise<{study: StudyRecord; trials: TrialRow[]} | undefined> {
    const study = await this.storage.getStudy(name)
    return study ? {study, trials: await this.storage.trials(name)} : undefined
  }

  async versions(): Promise<Record<string, string>> {
    const list = await this.storage.listStudies()
    return Object.fromEntries(list.map((s) => [s.name, [s.state, s.updatedAt, s.trials, s.ok, s.failed, s.running, s.bestLoss ?? ''].join('|')]))
  }

  async close(): Promise<void> {
    await this.storage.close()
  }
}

/** Opens a --storage value (SQLite file path or postgresql:// URL) read-only; a missing or foreign store is a one-line InputError. */
export async function openStudyReader(spec: string): Promise<StudyReader> {
  const storage = await openStorage(spec, {readonly: true, mustExist: true})
  return new StorageStudyReader(storage, redactStorage(spec))
}
