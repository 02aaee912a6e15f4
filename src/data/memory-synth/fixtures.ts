import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {writeFileAtomic} from '../../util/fs.js'
import {generateMemoryDataset, memoryDatasetJson, type MemorySynthOptions} from './generate.js'

/** The committed memory fixtures: file id and generator options (seed pinned). */
export const MEMORY_FIXTURES: ReadonlyArray<{readonly id: string; readonly options: MemorySynthOptions}> = [
  {id: 'memory_small', options: {seed: 7, conversations: 2, sessions: 10, turnsPerSession: 12}},
]

export interface MemoryFixtureStatus {
  id: string
  turns: number
  questions: number
  status: 'written' | 'unchanged' | 'identical' | 'differs' | 'missing'
}

/** Writes (or with `check`, verifies byte for byte) the committed memory fixtures in `dir`. */
export function generateMemoryFixtures(dir: string, check: boolean): MemoryFixtureStatus[] {
  return MEMORY_FIXTURES.map(({id, options}) => {
    const samples = generateMemoryDataset(options)
    const text = memoryDatasetJson(samples)
    const turns = samples.reduce(
      (n, s) =>
        n +
        Object.values(s.conversation)
          .filter(Array.isArray)
          .reduce((m, list) => m + list.length, 0),
      0,
    )
    const questions = samples.reduce((n, s) => n + s.qa.length, 0)
    const file = join(dir, `${id}.json`)
    const current = existsSync(file) ? readFileSync(file, 'utf8') : undefined
    const base = {id, turns, questions}
    if (check) return {...base, status: current === undefined ? 'missing' : current === text ? 'identical' : 'differs'}
    if (current === text) return {...base, status: 'unchanged'}
    writeFileAtomic(file, text)
    return {...base, status: 'written'}
  })
}
