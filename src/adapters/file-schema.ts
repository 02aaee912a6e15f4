/**
 * The engine file's schema (`kt_engine: 1`), in named parts: names, parameters, simplex groups,
 * the three evaluation kinds, tiers, objectives, profile rules. Checks that span fields (and name
 * the field in error) are the loader's (file.ts). Documented field by field in src/adapters/README.md.
 */
import {z} from 'zod'
import {checkEnvName} from '../space/env.js'
import {
  KEY_MESSAGE,
  KEY_PATTERN,
  NAME_MESSAGE,
  NAME_PATTERN,
  SAFE_VALUE_MESSAGE,
  SAFE_VALUE_PATTERN,
  SPACE_ID_PATTERN,
} from '../space/names.js'
import {declaredProperty} from './declared-properties.js'
import {GroupSchema} from './groups.js'

/** Version of the engine file format (`kt_engine`). */
const ENGINE_FORMAT_VERSION = 1

/** Variables kt sets for a command trial itself; an engine parameter may not claim them. */
export const RESERVED_ENV = ['KT_CONFIG_JSON', 'KT_BUDGET', 'KT_TIER', 'KT_TRIAL_ID', 'KT_SEED'] as const

/** Default per-trial timeout of command and HTTP evaluations (seconds). */
const DEFAULT_TIMEOUT_S = 600
/** Default time a retrieval service kt starts may take to listen (seconds). */
const DEFAULT_STARTUP_TIMEOUT_S = 15
/** Default retries of an HTTP evaluation after a connection error. */
const DEFAULT_HTTP_RETRIES = 3

/** Names of tiers and simplex groups (they reach no profile). */
const NAME = /^[A-Za-z0-9._-]{1,64}$/
const LOCAL_NAME_MESSAGE = 'a name of letters, digits, dot, dash or underscore (at most 64)'
/**
 * What becomes part of a deployable profile is held to the profile schema's alphabets here, on
 * load (src/space/names.ts), so a study never runs to its end to be refused then: the engine and
 * profile-rule names (profile names), parameter and metric names (profile keys), categorical
 * strings (exported values) and env names (checkEnvName).
 */
export const SPACE_ID_PREFIX = 'engine:'
/** Longest engine name: its space id `engine:<name>` must fit SPACE_ID_PATTERN. */
const MAX_ENGINE_NAME = 64 - SPACE_ID_PREFIX.length
const profileName = z.string().regex(NAME_PATTERN, NAME_MESSAGE)
const engineName = profileName.refine(
  (n) => n.length <= MAX_ENGINE_NAME && SPACE_ID_PATTERN.test(`${SPACE_ID_PREFIX}${n}`),
  `a name of at most ${MAX_ENGINE_NAME} characters (its space id ${SPACE_ID_PREFIX}<name> is at most 64)`,
)
/** Parameter names are profile config keys: letters, digits, _ . - (at most 64), not starting with . or -. */
const parameterName = z
  .string()
  .regex(
    /^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$/,
    'a name of letters, digits, dot, dash or underscore, not starting with a dot or dash (at most 64)',
  )
const metricKey = z
  .string()
  .regex(KEY_PATTERN, `a metric name that is also a profile key: ${KEY_MESSAGE}, starting with a letter, digit or _`)
const envName = z.string().superRefine((s, ctx) => {
  const problem = checkEnvName(s)
  if (problem) ctx.addIssue({code: z.ZodIssueCode.custom, message: problem})
})

const choice = z.union([z.string(), z.number().finite(), z.boolean()])
/** A categorical choice: a string from the safe alphabet profiles export unquoted, a number or a boolean. */
const safeChoice = choice.refine(
  (c) => typeof c !== 'string' || SAFE_VALUE_PATTERN.test(c),
  `a number, a boolean or ${SAFE_VALUE_MESSAGE} (profiles export it unquoted)`,
)

const condition = z
  .object({
    parameter: z.string().min(1),
    in: z.array(choice).min(1),
  })
  .strict()

const common = {
  name: parameterName,
  env: envName,
  description: z.string().optional(),
  /** For retrieval services: changing this parameter needs the conversations ingested again. */
  ingest: z.boolean().optional(),
  when: condition.optional(),
  /** The per-tenant bandits tune this parameter by default (none marked: every parameter). */
  online: z.boolean().optional(),
}

const numeric = {
  ...common,
  low: z.number().finite(),
  high: z.number().finite(),
  log: z.boolean().optional(),
  default: z.number().finite(),
}

const parameter = z.discriminatedUnion('type', [
  z.object({type: z.literal('float'), ...numeric}).strict(),
  z
    .object({
      type: z.literal('int'),
      ...numeric,
      low: z.number().int(),
      high: z.number().int(),
      default: z.number().int(),
    })
    .strict(),
  z
    .object({type: z.literal('categorical'), ...common, choices: z.array(safeChoice).min(1), default: safeChoice})
    .strict(),
  z.object({type: z.literal('bool'), ...common, default: z.boolean()}).strict(),
])

const simplex = z
  .object({
    name: z.string().regex(NAME, LOCAL_NAME_MESSAGE),
    parameters: z.array(z.string()).min(2),
    floor: z.number().finite().min(0).default(0),
    description: z.string().optional(),
    /** The per-tenant bandits tune the group by default (its members cannot be marked one by one). */
    online: z.boolean().optional(),
  })
  .strict()

const timeout = z.number().finite().positive()

const commandEval = z
  .object({
    kind: z.literal('command'),
    command: z.array(z.string().min(1)).min(1),
    cwd: z.string().default('.'),
    timeout_s: timeout.default(DEFAULT_TIMEOUT_S),
    /** Extra fixed variables for every trial (e.g. PYTHONHASHSEED). */
    env: z.record(z.string()).optional(),
  })
  .strict()

const httpEval = z
  .object({
    kind: z.literal('http'),
    url: z.string().url(),
    timeout_s: timeout.default(DEFAULT_TIMEOUT_S),
    retries: z.number().int().min(0).default(DEFAULT_HTTP_RETRIES),
    headers: z.record(z.string()).optional(),
  })
  .strict()

/**
 * The engine only stores and ranks; kt brings the benchmark (src/adapters/README.md). `transport`
 * says whether the engine is a server (`http`, at `url`) or a command speaking the same messages
 * as JSON lines over stdin/stdout (`stdio`, started with `command` in `cwd`).
 */
const retrievalServiceEval = z
  .object({
    kind: z.literal('retrieval-service'),
    transport: z.enum(['http', 'stdio']),
    /** The service's base URL; `{port}` stands for a free port kt picks when it starts `command` itself. */
    url: z
      .string()
      .refine(
        (u) => URL.canParse(u.split('{port}').join('1')),
        'a URL (http://host:port, or with {port} when kt starts the command)',
      )
      .optional(),
    /** stdio: the engine's argv; http: a server kt starts before the study and stops after it (optional). */
    command: z.array(z.string().min(1)).min(1).optional(),
    cwd: z.string().default('.'),
    /** Fixed variables for the command (e.g. PYTHONHASHSEED). */
    env: z.record(z.string()).optional(),
    /** Per message (one ingest or one search), not per trial. */
    timeout_s: timeout.default(DEFAULT_TIMEOUT_S),
    /** How long a server kt starts may take to accept connections. */
    startup_timeout_s: timeout.default(DEFAULT_STARTUP_TIMEOUT_S),
    /** Ranking depth asked of /search (default: the deepest k the metrics need). */
    k: z.number().int().positive().optional(),
    /**
     * Where p99_ms comes from: "measured" (kt's wall time per search, default) or "cost_model" (the
     * engine returns a deterministic `cost_ms` with every search; the wall time stays in measured_*).
     */
    latency: z.enum(['measured', 'cost_model']).default('measured'),
    /** Timed searches wanted per trial for the latency percentiles (warm-up and repeats are on top of the scored pass). */
    timings: z.number().int().min(1).max(100_000).optional(),
  })
  .strict()

const evaluate = z.discriminatedUnion('kind', [commandEval, httpEval, retrievalServiceEval])

const tier = z
  .object({name: z.string().regex(NAME, LOCAL_NAME_MESSAGE), budget: z.number().finite().positive()})
  .strict()

const direction = z.enum(['maximize', 'minimize'])

const objective = z
  .object({
    metric: metricKey,
    direction,
    /** Reference value of this objective for the hypervolume (default: see front.ts). */
    reference: z.number().finite().optional(),
  })
  .strict()

/** A profile rule's bound: a fixed `value`, or `value_of_best`, a fraction of the best value any trial reaches. */
const constraint = z
  .object({metric: metricKey, op: z.enum(['<=', '>=']), value: z.number().finite().optional()})
  .extend({value_of_best: z.number().finite().positive().optional()})
  .strict()

const profile = z
  .object({
    name: profileName,
    description: z.string().optional(),
    order_by: metricKey,
    /** Needed when order_by is not one of the objectives (whose direction it takes otherwise). */
    direction: direction.optional(),
    constraints: z.array(constraint).default([]),
  })
  .strict()

export const EngineFileSchema = z
  .object({
    kt_engine: z.literal(ENGINE_FORMAT_VERSION),
    name: engineName,
    description: z.string().optional(),
    parameters: z.array(parameter).min(1),
    simplex: z.array(simplex).default([]),
    /** Parameter groups the ablation reverts and applies as one (src/adapters/groups.ts). */
    groups: z.array(GroupSchema).default([]),
    evaluate,
    tiers: z.array(tier).default([]),
    /** false: a cheap tier does not rank configurations as the full one does (BOHB runs every trial at the last tier). */
    tiers_comparable: z.boolean().default(true),
    objectives: z.array(objective).min(1),
    profiles: z.array(profile).default([]),
    /** false: the same configuration and data may rank differently (phase 1 then skips its determinism checks). */
    deterministic: z.boolean().default(true),
    properties: z.array(declaredProperty).default([]),
  })
  .strict()

export type EngineFile = z.infer<typeof EngineFileSchema>
export type EngineParameter = EngineFile['parameters'][number]
export type CommandEvaluate = z.infer<typeof commandEval>
export type HttpEvaluate = z.infer<typeof httpEval>
export type RetrievalServiceEvaluate = z.infer<typeof retrievalServiceEval>
export type EngineObjective = EngineFile['objectives'][number]
export type EngineProfileRule = EngineFile['profiles'][number]
export type DeclaredProperty = EngineFile['properties'][number]
