import {rmSync} from 'node:fs'
import {join} from 'node:path'
import {InputError} from '../../src/util/errors.js'
import {ensureDir} from '../../src/util/fs.js'
import {max, mean, min, sd} from '../../src/stats/summary.js'
import {createContext, type PhaseContext} from './context.js'
import type {LoadedPlan} from '../plan.js'
import type {SeedRobustness, ValidationResult} from '../../src/report/types.js'
import {searchPhase} from '../4-search.js'
import {runValidation} from '../5-validation.js'

/** Most seeds one run re-checks: each costs a search and a validation (about 2 s here). */
const MAX_CHECK_SEEDS = 20

/** Parses "1-5", "1,3,7" or "1-3,9" into distinct ascending seeds; InputError naming the flag otherwise. */
export function parseSeedList(text: string, flag = '--seeds'): number[] {
  const seeds = new Set<number>()
  for (const part of text.split(',')) {
    const m = /^\s*(\d{1,9})\s*(?:-\s*(\d{1,9})\s*)?$/.exec(part)
    if (!m) throw new InputError(flag, 'seeds as a range or list, e.g. 1-5 or 1,3,7', JSON.stringify(text))
    const [from, to] = [Number(m[1]), Number(m[2] ?? m[1])]
    if (to < from) throw new InputError(flag, `a range low-high with low <= high`, JSON.stringify(part.trim()))
    if (to - from + 1 > MAX_CHECK_SEEDS)
      throw new InputError(flag, `at most ${MAX_CHECK_SEEDS} seeds`, `${to - from + 1}`)
    for (let s = from; s <= to; s++) seeds.add(s)
  }
  if (seeds.size > MAX_CHECK_SEEDS) throw new InputError(flag, `at most ${MAX_CHECK_SEEDS} seeds`, `${seeds.size}`)
  return [...seeds].sort((a, b) => a - b)
}

/** The failed criteria of a validation, as "id on dataset". */
function failures(v: ValidationResult): string[] {
  return v.datasets.flatMap((d) => d.verdicts.filter((c) => !c.passed).map((c) => `${c.id} on ${d.dataset}`))
}

/**
 * Re-runs the search and the validation (phases 4 and 5, on the plan's datasets; every random
 * choice of them, search sampling, BOHB and bootstrap resamples, comes from the seed) for every
 * seed, and reports how far the optimum moves and whether the verdict holds on each (checkEachSeed).
 */
export function checkSeeds(
  plan: LoadedPlan,
  seeds: readonly number[],
  main: PhaseContext,
  progress: (t: string) => void,
): Promise<SeedRobustness> {
  const run = {outDir: main.outDir, seed: main.seed, verdict: main.results.validation?.verdict}
  return checkEachSeed(run, seeds, progress, async (seed, dir) => {
    let search = main.results.search!
    let validation = main.results.validation!
    if (dir) {
      const ctx = createContext(plan, seed, dir, () => {})
      search = await searchPhase(ctx)
      ;(ctx.results as Record<string, unknown>).search = search
      validation = runValidation(ctx)
    }
    return {
      seed,
      optimum: {...search.optimum.weights},
      objective: search.optimum.objective.estimate,
      validation_passed: validation.passed,
      verdict: validation.verdict,
      failed: failures(validation),
      ...(validation.note ? {note: validation.note} : {}),
    }
  })
}

type PerSeed = SeedRobustness['per_seed'][number]

/**
 * The seed check of any plan: `check` for each seed (without a folder for the run's own seed, which
 * reuses the run's results; the others in a scratch folder inside the run folder, removed
 * afterwards), then the spread and whether the run's verdict holds on each seed: a consistent FAIL
 * holds as much as a consistent PASS.
 */
export async function checkEachSeed(
  run: {readonly outDir: string; readonly seed: number; readonly verdict: ValidationResult['verdict'] | undefined},
  seeds: readonly number[],
  progress: (t: string) => void,
  check: (seed: number, dir?: string) => Promise<PerSeed>,
): Promise<SeedRobustness> {
  if (run.verdict === undefined) throw new Error("the seed check needs the run's own validation (phase 5) first")
  const scratch = join(run.outDir, '.seeds')
  const perSeed: PerSeed[] = []
  try {
    for (const seed of seeds) {
      if (seed === run.seed) {
        perSeed.push(await check(seed))
        continue
      }
      progress(`seed check: seed ${seed} (${perSeed.length + 1} of ${seeds.length})`)
      const dir = join(scratch, `seed${seed}`)
      ensureDir(dir)
      perSeed.push(await check(seed, dir))
    }
  } finally {
    rmSync(scratch, {recursive: true, force: true})
  }
  return seedRobustness(seeds, run.verdict, perSeed)
}

/** The seed check's record: per seed, the spread of each optimum value over the seeds, and whether the verdict holds on each. */
function seedRobustness(
  seeds: readonly number[],
  runVerdict: ValidationResult['verdict'],
  perSeed: SeedRobustness['per_seed'],
): SeedRobustness {
  // a value every seed's optimum has (an engine's numeric parameters; kt's importance weights)
  const names = Object.keys(perSeed[0].optimum).filter((name) => perSeed.every((s) => name in s.optimum))
  const spread = Object.fromEntries(
    names.map((name) => {
      const values = perSeed.map((s) => s.optimum[name])
      // the sample sd of one value is undefined (null), not a spread of 0
      return [
        name,
        {
          min: min(values),
          max: max(values),
          range: max(values) - min(values),
          mean: mean(values),
          sd: values.length > 1 ? sd(values) : null,
        },
      ]
    }),
  )
  const held = seedsAgreeing(runVerdict, perSeed)
  return {
    seeds: [...seeds],
    run_verdict: runVerdict,
    per_seed: perSeed,
    spread,
    verdict_held: held,
    verdict_holds_on_every_seed: held === perSeed.length,
  }
}

/** How many seeds reach the run's own verdict: the verdict "holds" on a seed when they agree, a FAIL as much as a PASS. */
export function seedsAgreeing(
  runVerdict: ValidationResult['verdict'],
  perSeed: ReadonlyArray<{verdict: ValidationResult['verdict']}>,
): number {
  return perSeed.filter((s) => s.verdict === runVerdict).length
}
