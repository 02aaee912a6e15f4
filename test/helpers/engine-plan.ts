import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {packageRoot} from '../../src/util/paths.js'

/** kt's synthetic memory fixture: two conversations. */
export const MEMORY_FIXTURE = join(packageRoot, 'fixtures', 'memory_small.json')

/**
 * Writes `dir/name`: a format-2 plan for kt's retrieval engine (in-process: no service to start)
 * on the memory fixture at fast settings, with `edit`'s sections instead. Returns its path.
 */
export function writeRetrievalPlan(dir: string, name: string, edit: Record<string, unknown> = {}): string {
  const file = join(dir, name)
  writeFileSync(
    file,
    JSON.stringify({
      kt_plan: 2,
      name: 'kt-retrieval',
      engine: 'kt:retrieval',
      data: {conversations: MEMORY_FIXTURE, split: 'conversations:0.5'},
      metric: 'recall@10',
      search: {optimizer: 'random', budget: 2},
      acceptance: {against: 'defaults', margin: 0.05},
      bootstrap: {resamples: 200, confidence: 0.95},
      ...edit,
    }),
  )
  return file
}
