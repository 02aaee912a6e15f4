import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {packageRoot} from '../../src/util/paths.js'

/**
 * The default importance plan (kt_plan 1) at fast settings with absolute dataset paths (tuned on
 * realistic_100, held out recency_bias_75, the token-budget criterion only) and no retrieval
 * section: the base of tests that write a format-1 plan anywhere.
 */
export function fastImportancePlan(): Record<string, unknown> & {retrieval?: unknown} {
  const plan = JSON.parse(readFileSync(join(packageRoot, 'phases', 'plan.default.json'), 'utf8'))
  const fixture = (f: string) => join(packageRoot, 'fixtures', f)
  delete plan.retrieval
  return {
    ...plan,
    datasets: {tune: fixture('realistic_100.json'), holdout: [fixture('recency_bias_75.json')], imported: []},
    properties: {runs: 50},
    bootstrap: {resamples: 200, confidence: 0.95},
    search: {grid_step: 0.1, refine_step: 0.02, refine_radius: 0.04, random_samples: 100, bohb_budget: 6, top: 5},
    acceptance: plan.acceptance.filter((c: {id: string}) => c.id === 'token-budget'),
  }
}
