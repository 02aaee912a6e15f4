import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {writeFileAtomic} from '../../util/fs.js'
import {serializeDataset} from './dataset.js'
import {FIXTURE_SPECS, generateImportanceDataset} from './synthetic.js'

export interface FixtureStatus {
  id: string
  turns: number
  status: 'written' | 'unchanged' | 'identical' | 'differs' | 'missing'
}

/** Writes (or with `check`, verifies) the committed importance fixtures. */
export function generateImportanceFixtures(dir: string, check: boolean): FixtureStatus[] {
  return FIXTURE_SPECS.map((spec) => {
    const text = serializeDataset(generateImportanceDataset(spec))
    const file = join(dir, `${spec.id}.json`)
    const current = existsSync(file) ? readFileSync(file, 'utf8') : undefined
    if (check)
      return {
        id: spec.id,
        turns: spec.n,
        status: current === undefined ? 'missing' : current === text ? 'identical' : 'differs',
      }
    if (current === text) return {id: spec.id, turns: spec.n, status: 'unchanged'}
    writeFileAtomic(file, text)
    return {id: spec.id, turns: spec.n, status: 'written'}
  })
}
