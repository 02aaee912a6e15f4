import {createHash} from 'node:crypto'
import {dirname, resolve} from 'node:path'
import {resolveUserPath} from '../src/util/paths.js'
import {z} from 'zod'
import {InputError, describeValue} from '../src/util/errors.js'
import {parseWith} from '../src/util/zod.js'
import {readText, parseJson} from '../src/util/fs.js'
import {
  DEFAULT_PLAN_FILE,
  PLAN_FORMAT_VERSION,
  checkImportanceDatasets,
  parsePlan,
  type LoadedPlan,
  type Plan,
} from './plan.js'

/**
 * The plan format 2 (`kt_plan: 2`): one engine, its data, its metric, its acceptance criterion and
 * the search budget. Sections that do not apply to the engine are absent: only kt's importance
 * engine (`engine: "kt:importance"`) carries the importance study's fields, in `importance`.
 */
const ENGINE_PLAN_FORMAT_VERSION = 2

const split = z.union([
  z.string().regex(/^conversations:[0-9.]+$/, 'conversations:SHARE'),
  z.object({train: z.array(z.string().min(1)).min(1), holdout: z.array(z.string().min(1)).min(1)}).strict(),
])

const EnginePlanSchema = z
  .object({
    kt_plan: z.literal(ENGINE_PLAN_FORMAT_VERSION),
    name: z.string().min(1),
    description: z.string().default(''),
    /** An engine file (relative to the plan) or a built-in engine: kt:retrieval, kt:importance. */
    engine: z.string().min(1),
    /**
     * The conversations and which of them are tuned on and which held out (share or ids), or two
     * files: the tuning conversations and the held-out ones. Absent for a command or http engine
     * (it evaluates on its own data).
     */
    data: z
      .union([
        z.object({conversations: z.string().min(1), split}).strict(),
        z.object({tuning: z.string().min(1), holdout: z.string().min(1)}).strict(),
      ])
      .optional(),
    metric: z
      .string()
      .regex(/^(recall@\d+|hit@\d+|ndcg@10|mrr)$/, 'recall@k, hit@k, ndcg@10 or mrr')
      .optional(),
    search: z
      .object({
        optimizer: z.enum(['bohb', 'random', 'grid']).default('bohb'),
        budget: z.number().positive().max(100_000),
      })
      .strict()
      .optional(),
    /**
     * The tuned profile against the defaults (or a profile file of the same engine), on the held-out
     * data: non-inferior within `margin`, or better by at least `gain` (lower bound of the paired interval).
     */
    acceptance: z
      .object({
        against: z.string().min(1).default('defaults'),
        margin: z.number().min(0).lt(1).optional(),
        gain: z.number().gt(-1).lt(1).optional(),
      })
      .strict()
      .optional(),
    /**
     * The ablation: the minimal profile's non-inferiority margin against the ablated profile (default:
     * acceptance.margin), and `profile`, a profile file of this engine to ablate instead of the tuned one.
     */
    ablation: z
      .object({margin: z.number().min(0).lt(1).optional(), profile: z.string().min(1).optional()})
      .strict()
      .optional(),
    bootstrap: z
      .object({resamples: z.number().int().min(100).max(100_000), confidence: z.number().gt(0).lt(1)})
      .strict()
      .default({resamples: 1000, confidence: 0.95}),
    /** kt:importance only: the importance study's fields as a kt_plan 1 file has them. */
    importance: z.record(z.unknown()).optional(),
  })
  .strict()

type EnginePlan = z.infer<typeof EnginePlanSchema>

/** A format-2 plan for an engine with conversations (an engine file or kt:retrieval), read and checked. */
export interface LoadedEnginePlan {
  readonly plan: EnginePlan & Required<Pick<EnginePlan, 'metric' | 'search' | 'acceptance'>>
  readonly file: string
  /** sha256 of the plan text, first 12 hex digits: part of the run id. */
  readonly hash: string
  resolvePath(path: string): string
}

/** Any plan: the importance study's (format 1, or format 2 naming kt:importance) or an engine's. */
export type AnyPlan =
  | {readonly kind: 'importance'; readonly loaded: LoadedPlan; readonly note?: string}
  | {readonly kind: 'engine'; readonly loaded: LoadedEnginePlan}

/**
 * Reads a plan of either format. A format-1 file is read as it always was (kt's importance study,
 * with its retrieval section's engine), and says so in `note`; a format-2 file naming kt:importance
 * is converted to the format-1 plan its `importance` section spells out.
 */
export function loadAnyPlan(file: string = DEFAULT_PLAN_FILE): AnyPlan {
  const text = readText(file)
  const value = parseJson(file, text)
  const version = (value as {kt_plan?: unknown} | null)?.kt_plan
  const hash = createHash('sha256').update(text).digest('hex').slice(0, 12)
  const base = dirname(resolve(file))
  const resolvePath = (p: string) => resolveUserPath(base, p)
  if (version !== ENGINE_PLAN_FORMAT_VERSION) {
    const loaded = {plan: parsePlan(value, file), file, hash, resolvePath}
    checkImportanceDatasets(loaded)
    const engine = loaded.plan.retrieval?.engine ?? (loaded.plan.retrieval ? 'kt:retrieval' : undefined)
    return {
      kind: 'importance',
      loaded,
      ...(resolve(file) === DEFAULT_PLAN_FILE
        ? {}
        : {
            note: `${file} is a kt_plan ${PLAN_FORMAT_VERSION} plan: read as kt:importance${engine ? ` and ${engine} (its retrieval section)` : ''}; a kt_plan ${ENGINE_PLAN_FORMAT_VERSION} plan names one engine (README "Plans")`,
          }),
    }
  }
  const plan = parseWith<EnginePlan>(EnginePlanSchema as unknown as z.ZodType<EnginePlan>, value, file)
  if (plan.engine === 'kt:importance') {
    if (!plan.importance)
      throw new InputError(
        `${file}: importance`,
        "the importance study's fields (datasets, baseline, ... as in phases/plan.default.json) for engine kt:importance",
        'nothing',
      )
    for (const field of ['data', 'metric', 'search', 'acceptance', 'ablation'] as const)
      if (plan[field] !== undefined)
        throw new InputError(
          `${file}: ${field}`,
          'no such section for engine kt:importance (its settings are in importance)',
          describeValue(plan[field]),
        )
    const v1 = {kt_plan: PLAN_FORMAT_VERSION, name: plan.name, description: plan.description, ...plan.importance}
    const loaded = {plan: parsePlan(v1, file) as Plan, file, hash, resolvePath}
    checkImportanceDatasets(loaded)
    return {kind: 'importance', loaded}
  }
  if (plan.importance !== undefined)
    throw new InputError(
      `${file}: importance`,
      `no importance section for engine ${plan.engine} (it is kt:importance's)`,
      'a section',
    )
  for (const field of ['metric', 'search'] as const)
    if (plan[field] === undefined) throw new InputError(`${file}: ${field}`, `a ${field} section`, 'nothing')
  const data = plan.data
  if (data && 'split' in data && typeof data.split !== 'string') {
    const train = new Set(data.split.train)
    data.split.holdout.forEach((id, i) => {
      if (train.has(id))
        throw new InputError(
          `${file}: data.split.holdout[${i}]`,
          'a conversation not also tuned on (validating on tuning data proves nothing)',
          describeValue(id),
        )
    })
  }
  const acceptance = plan.acceptance ?? {against: 'defaults'}
  if (acceptance.margin !== undefined && acceptance.gain !== undefined)
    throw new InputError(`${file}: acceptance`, 'a margin or a gain, not both', 'both')
  return {
    kind: 'engine',
    loaded: {
      plan: {...plan, metric: plan.metric!, search: plan.search!, acceptance},
      file,
      hash,
      resolvePath,
    },
  }
}
