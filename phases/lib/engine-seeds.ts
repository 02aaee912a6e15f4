import {rmSync} from 'node:fs'
import {join} from 'node:path'
import type {SeedRobustness} from '../../src/report/types.js'
import {ensureDir} from '../../src/util/fs.js'
import {createEngineContext, engineSearch, tunedOf, type EngineContext} from '../engine-run.js'
import {checkEngineInputs} from './engine-inputs.js'
import {checkTuned} from './engine-validation.js'
import {seedRobustness} from './seeds.js'

/**
 * kt run --seeds for a format-2 plan, as for the importance study: the search (phase 4) and the
 * tuned profile's validation (phase 5) re-run with each seed's random choices (the split's share,
 * the optimizer, the bootstrap), the spread of the tuned numeric parameters, and whether the run's
 * verdict holds on each seed. The run's own seed reuses its results; the others' study stores go to
 * a scratch folder inside the run folder that is removed afterwards.
 */
export async function checkEngineSeeds(main: EngineContext, seeds: readonly number[]): Promise<SeedRobustness> {
  const runVerdict = main.results.validation?.verdict
  if (runVerdict === undefined) throw new Error("the seed check needs the run's own validation (phase 5) first")
  const scratch = join(main.outDir, '.seeds')
  const perSeed: SeedRobustness['per_seed'] = []
  try {
    for (const seed of seeds) {
      let ctx = main
      if (seed !== main.seed) {
        main.progress(`seed check: seed ${seed} (${perSeed.length + 1} of ${seeds.length})`)
        const outDir = join(scratch, `seed${seed}`)
        ensureDir(outDir)
        const inputs = checkEngineInputs(main.loaded, seed, outDir)
        inputs.writeData()
        ctx = createEngineContext(main.loaded, inputs, {...main, seed, outDir, continueStore: false})
        ctx.results.search = await engineSearch(ctx)
      }
      const tuned = tunedOf(ctx)
      const check = ctx === main ? main.results.validation!.tuned : await checkTuned(ctx, tuned.config)
      perSeed.push({
        seed,
        optimum: Object.fromEntries(
          Object.entries(tuned.config).filter((e): e is [string, number] => typeof e[1] === 'number'),
        ),
        objective: tuned.tuning_quality,
        validation_passed: check.passed,
        verdict: check.passed ? 'pass' : 'fail',
        failed: check.passed ? [] : ['holdout-acceptance on holdout'],
      })
    }
  } finally {
    rmSync(scratch, {recursive: true, force: true})
  }
  return seedRobustness(seeds, runVerdict, perSeed)
}
