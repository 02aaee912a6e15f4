/**
 * `kt study copy`: a study with every trial (checkpoints, tell order, timings) from one storage to
 * another, e.g. a local SQLite file to the team's PostgreSQL server, in one transaction on the
 * target. Running trials arrive released, so the first worker on the target takes them over.
 */
import {InputError} from '../util/errors.js'
import {openStorage} from './storage.js'

export interface CopyResult {
  readonly study: string
  readonly from: string
  readonly to: string
  readonly trials: number
  readonly running: number
}

export async function copyStudy(from: string, to: string, study: string, rename?: string): Promise<CopyResult> {
  const source = await openStorage(from, {readonly: true})
  try {
    const record = await source.getStudy(study)
    if (!record)
      throw new InputError(
        `${source.label}: study ${study}`,
        `an existing study (${(await source.listStudies()).map((s) => s.name).join(', ') || 'none stored'})`,
        'no such study',
      )
    const trials = await source.trials(study)
    const target = await openStorage(to)
    try {
      const name = rename ?? study
      await target.importStudy(
        {...record, name},
        trials.map((t) => ({...t, study: name})),
      )
      return {
        study: name,
        from: source.label,
        to: target.label,
        trials: trials.length,
        running: trials.filter((t) => t.status === 'running').length,
      }
    } finally {
      await target.close()
    }
  } finally {
    await source.close()
  }
}
