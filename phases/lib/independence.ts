import {realpathSync} from 'node:fs'
import {InputError} from '../../src/util/errors.js'
import type {LoadedPlan} from '../plan.js'
import type {StudyDataset} from './context.js'

/** What a plan must validate on, in the words of every refusal below. */
const EXPECTED = 'a dataset other than the tuning set (validating on training data proves nothing)'

/**
 * Held-out and imported data must not be the tuning set in disguise. Refused (InputError naming the
 * plan field): the same file through a link (realpath), a byte-identical copy (sha256), or a
 * dataset every turn of which is a turn of the tuning set (same time, text, surprise, query and
 * label, whatever the dataset's id or description). Returns warnings for partial overlaps: turns
 * whose text is also in the tuning set (turn ids alone are not compared: generators number
 * turns t001, t002, ... in every dataset).
 */
export function checkValidationData(plan: LoadedPlan, datasets: readonly StudyDataset[]): string[] {
  const tune = datasets.find((d) => d.role === 'tune')
  if (!tune) return []
  const tuneReal = realpathSync(tune.path)
  const tuneTurns = new Set(turnKeys(tune))
  const tuneTexts = new Set(tune.dataset.turns.map((t) => t.text.trim()).filter((t) => t !== ''))
  const warnings: string[] = []
  for (const d of datasets) {
    if (d.role === 'tune') continue
    const where = `${plan.file}: ${d.field}`
    const named = JSON.stringify(d.file)
    if (realpathSync(d.path) === tuneReal)
      throw new InputError(where, EXPECTED, `${named}, the same file as datasets.tune (through a link)`)
    if (d.sha256 === tune.sha256)
      throw new InputError(where, EXPECTED, `${named}, a copy of datasets.tune (same sha256 ${d.sha256.slice(0, 12)})`)
    const inTuning = turnKeys(d).filter((k) => tuneTurns.has(k)).length
    if (inTuning === d.dataset.turns.length)
      throw new InputError(where, EXPECTED, `${named}, whose ${inTuning} turns are all turns of datasets.tune`)
    const sharedTexts = d.dataset.turns.filter((t) => tuneTexts.has(t.text.trim())).length
    if (sharedTexts > 0)
      warnings.push(
        `${d.field} (${d.file}) shares ${sharedTexts} of ${d.dataset.turns.length} turn texts with the tuning set (datasets.tune): its validation is partly on data tuned on`,
      )
  }
  return warnings
}

/** Each turn as what the study sees of it: time, text, surprise, its query's text and the label. */
function turnKeys(d: StudyDataset): string[] {
  const queries = new Map(d.dataset.queries.map((q) => [q.id, q.text]))
  return d.dataset.turns.map((t) =>
    JSON.stringify([t.time, t.text, t.surprise, queries.get(t.query) ?? t.query, t.truth]),
  )
}
