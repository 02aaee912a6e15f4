import {dirname, resolve} from 'node:path'
import {createHash} from 'node:crypto'
import {z} from 'zod'
import {InputError} from '../src/util/errors.js'
import {parseWith} from '../src/util/zod.js'
import {readText, parseJson} from '../src/util/fs.js'
import {phasesDir, resolveUserPath} from '../src/util/paths.js'
import {SIMPLEX_SUM_TOLERANCE} from '../src/space/types.js'
import {NAME_MESSAGE, NAME_PATTERN} from '../src/space/names.js'

/** Version of the study-plan format (`kt_plan` field). */
export const PLAN_FORMAT_VERSION = 1
export const DEFAULT_PLAN_FILE = resolve(phasesDir, 'plan.default.json')

const unit = z.number().finite().min(0).max(1)
const positive = z.number().finite().positive()

const AcceptanceSchema = z
  .object({
    // the id names the criterion in the deployed profiles (phase 6): the profiles' name rule, checked when the plan is read
    id: z.string().regex(NAME_PATTERN, NAME_MESSAGE),
    description: z.string(),
    metric: z.enum([
      'token_budget_change_rel',
      'spearman_delta_abs',
      'spearman_delta_abs_ci_low',
      'pearson_delta_abs',
      'share_positive',
    ]),
    op: z.enum(['<', '<=', '>', '>=']),
    value: z.number().finite(),
  })
  .strict()

const PlanSchema = z
  .object({
    kt_plan: z.literal(PLAN_FORMAT_VERSION),
    name: z.string().min(1),
    description: z.string(),
    datasets: z
      .object({
        tune: z.string().min(1),
        holdout: z.array(z.string().min(1)),
        imported: z.array(z.string().min(1)),
      })
      .strict(),
    baseline: z.object({decay: unit, surprise: unit, relevance: unit, habituation: unit}).strict(),
    time_scale_hours: positive,
    objective: z.enum(['spearman', 'pearson']),
    properties: z.object({runs: z.number().int().min(1).max(100_000)}).strict(),
    bootstrap: z
      .object({resamples: z.number().int().min(100).max(100_000), confidence: z.number().gt(0).lt(1)})
      .strict(),
    search: z
      .object({
        grid_step: z.number().gt(0).lt(1),
        refine_step: z.number().gt(0).lt(1),
        refine_radius: z.number().gt(0).lt(1),
        random_samples: z.number().int().min(1).max(1_000_000),
        bohb_budget: z.number().positive().max(100_000),
        top: z.number().int().min(1).max(1000),
      })
      .strict(),
    detail_levels: z.object({FULL: unit, CHUNKS: unit, SUMMARY: unit}).strict(),
    token_cost: z.object({FULL: unit, CHUNKS: unit, SUMMARY: unit, DROPPED: unit}).strict(),
    acceptance: z.array(AcceptanceSchema),
    retrieval: z
      .object({
        data: z.string().min(1),
        metric: z.string().regex(/^(recall@\d+|hit@\d+|ndcg@10|mrr)$/, 'recall@k, hit@k, ndcg@10 or mrr'),
        optimizer: z.enum(['bohb', 'random', 'grid']),
        budget: z.number().positive().max(100_000),
        /**
         * An engine file (kt_engine: 1, retrieval-service) to tune instead of kt's own retrieval engine,
         * relative to the plan; `data` is then the conversations kt drives through it.
         */
        engine: z.string().min(1).optional(),
        /**
         * Held-out conversations: "conversations:SHARE" (share tuned on, shuffled with the run's seed) or
         * explicit ids. Every profile is then validated against the engine's defaults on them; without
         * a split the profiles are not validated and the deploy gate refuses them.
         */
        split: z
          .union([
            z.string().regex(/^conversations:[0-9.]+$/, 'conversations:SHARE'),
            z.object({train: z.array(z.string().min(1)).min(1), holdout: z.array(z.string().min(1)).min(1)}).strict(),
          ])
          .optional(),
        /**
         * kt's own engine: the non-inferiority margin of the held-out validation (absolute, on `metric`):
         * a profile passes when the lower bound of the interval of (profile - defaults) is >= -margin.
         * Default NONINFERIORITY_MARGIN (src/eval/holdout-validation.ts).
         */
        margin: z.number().min(0).lt(1).optional(),
      })
      .strict()
      .optional(),
  })
  .strict()

/**
 * A study plan: which datasets to tune and validate on, the baseline, search settings, detail
 * levels and token costs, and the acceptance criteria. Paths are relative to the plan file.
 */
export type Plan = z.infer<typeof PlanSchema>
export type AcceptanceCriterion = z.infer<typeof AcceptanceSchema>

export interface LoadedPlan {
  readonly plan: Plan
  readonly file: string
  /** sha256 of the plan text, first 12 hex digits: part of the run id. */
  readonly hash: string
  resolvePath(path: string): string
}

export function loadPlan(file: string = DEFAULT_PLAN_FILE): LoadedPlan {
  const text = readText(file)
  const plan = parsePlan(parseJson(file, text), file)
  const base = dirname(resolve(file))
  const loaded: LoadedPlan = {
    plan,
    file,
    hash: createHash('sha256').update(text).digest('hex').slice(0, 12),
    resolvePath: (p) => resolveUserPath(base, p),
  }
  checkImportanceDatasets(loaded)
  return loaded
}

/** A held-out or imported dataset that is the tuning set itself is refused (it would validate on training data). */
export function checkImportanceDatasets(loaded: LoadedPlan): void {
  const {datasets} = loaded.plan
  const tune = loaded.resolvePath(datasets.tune)
  for (const [field, list] of [
    ['holdout', datasets.holdout],
    ['imported', datasets.imported],
  ] as const)
    list.forEach((path, i) => {
      if (loaded.resolvePath(path) === tune)
        throw new InputError(
          `${loaded.file}: datasets.${field}[${i}]`,
          'a dataset other than the tuning set (validating on training data proves nothing)',
          JSON.stringify(path),
        )
    })
}

export function parsePlan(value: unknown, file: string): Plan {
  const plan = parseWith(PlanSchema, value, file)
  const sum = plan.baseline.decay + plan.baseline.surprise + plan.baseline.relevance + plan.baseline.habituation
  if (Math.abs(sum - 1) > SIMPLEX_SUM_TOLERANCE)
    throw new InputError(`${file}: baseline`, `weights summing to 1 within ${SIMPLEX_SUM_TOLERANCE}`, String(sum))
  const t = plan.detail_levels
  if (!(t.FULL > t.CHUNKS && t.CHUNKS > t.SUMMARY))
    throw new InputError(`${file}: detail_levels`, 'thresholds with FULL > CHUNKS > SUMMARY', JSON.stringify(t))
  if (plan.retrieval?.margin !== undefined && plan.retrieval.split === undefined)
    throw new InputError(
      `${file}: retrieval.margin`,
      "a margin only with retrieval.split (it is the held-out validation's)",
      String(plan.retrieval.margin),
    )
  if (!isLatticeStep(plan.search.grid_step))
    throw new InputError(
      `${file}: search.grid_step`,
      'a step that divides 1 into a whole number of parts (e.g. 0.05)',
      String(plan.search.grid_step),
    )
  return plan
}

/** True when 1/step is (within rounding) a whole number, so the grid lands exactly on the simplex. */
function isLatticeStep(step: number): boolean {
  const parts = 1 / step
  return Math.abs(parts - Math.round(parts)) < 1e-9
}
