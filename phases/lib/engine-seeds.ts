import type {SeedRobustness} from '../../src/report/types.js'
import {createEngineContext, engineSearch, tunedOf, type EngineContext} from '../engine-run.js'
import {checkEngineInputs} from './engine-inputs.js'
import {checkTuned} from './engine-validation.js'
import {checkEachSeed} from './seeds.js'

/**
 * kt run --seeds for a format-2 plan, as for the importance study: the search (phase 4) and the
 * tuned profile's validation (phase 5) re-run with each seed's random choices (the split's share,
 * the optimizer, the bootstrap), the spread of the tuned numeric parameters, and whether the run's
 * verdict holds on each seed. The run's own seed reuses its results; the others' study stores go to
 * a scratch folder inside the run folder that is removed afterwards.
 */
export function checkEngineSeeds(main: EngineContext, seeds: readonly number[]): Promise<SeedRobustness> {
  const run = {outDir: main.outDir, seed: main.seed, verdict: main.results.validation?.verdict}
  return checkEachSeed(run, seeds, main.progress, async (seed, outDir) => {
    let ctx = main
    if (outDir) {
      const inputs = checkEngineInputs(main.loaded, seed, outDir)
      inputs.writeData()
      ctx = createEngineContext(main.loaded, inputs, {...main, seed, outDir, continueStore: false})
      ctx.results.search = await engineSearch(ctx)
    }
    const tuned = tunedOf(ctx)
    const check = outDir ? await checkTuned(ctx, tuned.config) : main.results.validation!.tuned
    return {
      seed,
      optimum: Object.fromEntries(
        Object.entries(tuned.config).filter((e): e is [string, number] => typeof e[1] === 'number'),
      ),
      objective: tuned.tuning_quality,
      validation_passed: check.passed,
      verdict: check.passed ? 'pass' : 'fail',
      failed: check.passed ? [] : ['holdout-acceptance on holdout'],
    }
  })
}
