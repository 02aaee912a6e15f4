/**
 * The engine file (`kt_engine: 1`): one JSON document that describes an engine kt can tune without
 * knowing anything else about it: its parameters (mapped onto the declarative ParamSpace of
 * src/space), how one trial is evaluated (a command, an HTTP endpoint, or a retrieval service kt
 * drives with its own benchmark), its fidelity tiers, its objectives and its own domain-profile
 * rules. One zod schema, one loader (loadEngineFile); every problem is one line naming the file
 * and the field (exit 2). Documented field by field in src/engines/README.md.
 */
import {createHash} from 'node:crypto'
import {dirname, isAbsolute, resolve} from 'node:path'
import {z} from 'zod'
import {checkSpace, withoutOnline} from '../space/space.js'
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
import type {Choice, Condition, ParamSpace, ParamSpec, SimplexMember} from '../space/types.js'
import type {Fidelity} from '../space/objective.js'
import {tierForBudget} from '../data/conversations/tiers.js'
import {InputError, describeValue} from '../util/errors.js'
import {readJson} from '../util/fs.js'
import {parseWith} from '../util/zod.js'
import {checkDeclaredProperties, declaredProperty} from './declared-properties.js'
import {GroupSchema, resolveGroups, type EngineGroup} from './groups.js'

/** Version of the engine file format (`kt_engine`). */
export const ENGINE_FORMAT_VERSION = 1

/** Variables kt sets for a command trial itself; an engine parameter may not claim them. */
export const RESERVED_ENV = ['KT_CONFIG_JSON', 'KT_BUDGET', 'KT_TIER', 'KT_TRIAL_ID', 'KT_SEED'] as const

/** Default per-trial timeout of command and HTTP evaluations (seconds). */
export const DEFAULT_TIMEOUT_S = 600
/** Default time a retrieval service kt starts may take to listen (seconds). */
export const DEFAULT_STARTUP_TIMEOUT_S = 15
/** Default retries of an HTTP evaluation after a connection error. */
export const DEFAULT_HTTP_RETRIES = 3

/** Names of tiers and simplex groups (they reach no profile). */
const NAME = /^[A-Za-z0-9._-]{1,64}$/
const LOCAL_NAME_MESSAGE = 'a name of letters, digits, dot, dash or underscore (at most 64)'
/**
 * What becomes part of a deployable profile is held to the profile schema's alphabets here, on
 * load (src/space/names.ts), so a study never runs to its end to be refused then: the engine and
 * profile-rule names (profile names), parameter and metric names (profile keys), categorical
 * strings (exported values) and env names (checkEnvName).
 */
const SPACE_ID_PREFIX = 'engine:'
/** Longest engine name: its space id `engine:<name>` must fit SPACE_ID_PATTERN. */
export const MAX_ENGINE_NAME = 64 - SPACE_ID_PREFIX.length
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
 * The engine only stores and ranks; kt brings the benchmark (src/engines/README.md). `transport`
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

const objective = z
  .object({
    metric: metricKey,
    direction: z.enum(['maximize', 'minimize']),
    /** Reference value of this objective for the hypervolume (default: see front.ts). */
    reference: z.number().finite().optional(),
  })
  .strict()

const constraint = z
  .object({
    metric: metricKey,
    op: z.enum(['<=', '>=']),
    value: z.number().finite().optional(),
    /** The threshold as a fraction of the best value any trial reaches. */
    value_of_best: z.number().finite().positive().optional(),
  })
  .strict()

const profile = z
  .object({
    name: profileName,
    description: z.string().optional(),
    order_by: metricKey,
    /** Needed when order_by is not one of the objectives (whose direction it takes otherwise). */
    direction: z.enum(['maximize', 'minimize']).optional(),
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
    /** Parameter groups the ablation reverts and applies as one (src/engines/groups.ts). */
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

/** A fidelity tier: a name the engine understands (KT_TIER) and its budget (KT_BUDGET). */
export interface EngineTier {
  readonly name: string
  readonly budget: number
}

/** A loaded, checked engine file with its paths resolved against the file's folder. */
export interface EngineSpec {
  /** Absolute path of the engine file. */
  readonly file: string
  /** Folder of the engine file: relative paths in it are relative to this. */
  readonly dir: string
  readonly name: string
  readonly description: string
  /** The parameters as one declarative table (id `engine:<name>`). */
  readonly space: ParamSpace
  /** The parameters as written (types, env names, ingest flags). */
  readonly parameters: readonly EngineParameter[]
  /** `cwd` resolved to an absolute path. */
  readonly evaluate: CommandEvaluate | HttpEvaluate | RetrievalServiceEvaluate
  /** Budgets in increasing order (empty: one fidelity). */
  readonly tiers: readonly EngineTier[]
  /** BOHB's fidelity from the tiers: min, max, the common ratio eta and tiers_comparable (undefined with < 2 tiers). */
  readonly fidelity?: Fidelity
  readonly objectives: readonly EngineObjective[]
  readonly profiles: readonly EngineProfileRule[]
  /** Parameter groups for the ablation, patterns resolved. */
  readonly groups: readonly EngineGroup[]
  /** Absent: deterministic (the file's default). */
  readonly deterministic?: boolean
  /** Properties of its own metrics the engine declares (absent: none). */
  readonly properties?: readonly DeclaredProperty[]
}

/** The space id of an engine file's parameters. */
export function engineSpaceId(name: string): string {
  return `${SPACE_ID_PREFIX}${name}`
}

/** Reads and checks an engine file; any problem is one InputError naming the file and field. */
export function loadEngineFile(path: string): EngineSpec {
  return parseEngineFile(readJson(path), path)
}

/** Checks an engine file's parsed JSON; `file` is the name used in errors and paths resolve against it. */
export function parseEngineFile(value: unknown, file: string): EngineSpec {
  const data: EngineFile = parseWith<EngineFile>(EngineFileSchema as unknown as z.ZodType<EngineFile>, value, file)
  const at = (field: string): string => `${file}: ${field}`
  const absolute = resolve(file)
  const dir = dirname(absolute)

  // ---- parameters, one by one ----
  const byName = new Map<string, {index: number; p: EngineParameter}>()
  const envs = new Map<string, number>()
  data.parameters.forEach((p, i) => {
    const where = `parameters[${i}]`
    if (byName.has(p.name))
      throw new InputError(
        at(`${where}.name`),
        `a name no other parameter has (parameters[${byName.get(p.name)!.index}] is ${p.name} too)`,
        describeValue(p.name),
      )
    byName.set(p.name, {index: i, p})
    if ((RESERVED_ENV as readonly string[]).includes(p.env))
      throw new InputError(
        at(`${where}.env`),
        `a name other than kt's own ${RESERVED_ENV.join(', ')}`,
        describeValue(p.env),
      )
    if (envs.has(p.env))
      throw new InputError(
        at(`${where}.env`),
        `an env name no other parameter uses (parameters[${envs.get(p.env)}] uses ${p.env})`,
        describeValue(p.env),
      )
    envs.set(p.env, i)
    if (p.type === 'float' || p.type === 'int') {
      if (!(p.low < p.high))
        throw new InputError(at(`${where}.high`), `a number > low (${p.low}): a non-empty range`, String(p.high))
      if (p.log && !(p.low > 0))
        throw new InputError(at(`${where}.low`), 'a positive lower bound (log: true)', String(p.low))
      if (p.default < p.low || p.default > p.high)
        throw new InputError(at(`${where}.default`), `a number in [${p.low}, ${p.high}]`, String(p.default))
    } else if (p.type === 'categorical') {
      const seen = new Set<string>()
      p.choices.forEach((c, j) => {
        const key = JSON.stringify(c)
        if (seen.has(key)) throw new InputError(at(`${where}.choices[${j}]`), 'choices without repeats', key)
        seen.add(key)
      })
      if (!p.choices.includes(p.default))
        throw new InputError(
          at(`${where}.default`),
          `one of ${p.choices.map((c) => JSON.stringify(c)).join(', ')}`,
          describeValue(p.default),
        )
    }
  })

  // ---- conditions: on an earlier categorical, bool or int parameter, with values it can take ----
  data.parameters.forEach((p, i) => {
    if (!p.when) return
    const where = `parameters[${i}].when`
    const parent = byName.get(p.when.parameter)
    if (!parent)
      throw new InputError(at(`${where}.parameter`), 'the name of another parameter', describeValue(p.when.parameter))
    if (parent.index >= i)
      throw new InputError(
        at(`${where}.parameter`),
        `a parameter listed before ${p.name} (conditions point back, so they cannot loop)`,
        describeValue(p.when.parameter),
      )
    if (parent.p.when)
      throw new InputError(
        at(`${where}.parameter`),
        'a parameter without a condition of its own',
        describeValue(p.when.parameter),
      )
    const values = possibleValues(parent.p)
    if (!values)
      throw new InputError(
        at(`${where}.parameter`),
        'a categorical, bool or int parameter',
        `${parent.p.name} (${parent.p.type})`,
      )
    p.when.in.forEach((v, j) => {
      if (!values.includes(v))
        throw new InputError(
          at(`${where}.in[${j}]`),
          `a value ${parent.p.name} can take (${values.length > 12 ? `${parent.p.type} ${values[0]}..${values.at(-1)}` : values.map((x) => JSON.stringify(x)).join(', ')})`,
          describeValue(v),
        )
    })
  })

  // ---- simplex groups ----
  const inGroup = new Map<string, number>()
  data.simplex.forEach((g, gi) => {
    const where = `simplex[${gi}]`
    if (byName.has(g.name) || data.simplex.findIndex((x) => x.name === g.name) !== gi)
      throw new InputError(at(`${where}.name`), 'a name no parameter or other group has', describeValue(g.name))
    const k = g.parameters.length
    if (g.floor * k > 1 + 1e-9)
      throw new InputError(
        at(`${where}.floor`),
        `floors that sum to at most 1 (${k} members x floor <= 1, so floor <= ${fmt(1 / k)})`,
        String(g.floor),
      )
    let sum = 0
    g.parameters.forEach((name, j) => {
      const member = byName.get(name)
      const field = at(`${where}.parameters[${j}]`)
      if (!member) throw new InputError(field, 'the name of a float parameter', describeValue(name))
      if (inGroup.has(name))
        throw new InputError(
          field,
          `a parameter in one group only (it is in simplex[${inGroup.get(name)}])`,
          describeValue(name),
        )
      inGroup.set(name, gi)
      const p = member.p
      if (p.type !== 'float') throw new InputError(field, 'a float parameter', `${name} (${p.type})`)
      if (p.log) throw new InputError(at(`parameters[${member.index}].log`), 'no log scale on a simplex member', 'true')
      if (p.when)
        throw new InputError(
          at(`parameters[${member.index}].when`),
          'no condition on a simplex member',
          describeValue(p.when),
        )
      if (p.online !== undefined)
        throw new InputError(
          at(`parameters[${member.index}].online`),
          `no online on a simplex member (the bandits tune a group whole: set simplex[${gi}].online)`,
          String(p.online),
        )
      const top = 1 - (k - 1) * g.floor
      if (p.low > g.floor + 1e-9 || p.high < top - 1e-9)
        throw new InputError(
          at(`parameters[${member.index}].low`),
          `a range covering what the group reaches, [${fmt(g.floor)}, ${fmt(top)}] (floor ${g.floor}, ${k} members)`,
          `[${p.low}, ${p.high}]`,
        )
      if (p.default < g.floor - 1e-9)
        throw new InputError(
          at(`parameters[${member.index}].default`),
          `a weight >= the group's floor ${g.floor}`,
          String(p.default),
        )
      sum += p.default
    })
    if (Math.abs(sum - 1) > 1e-6)
      throw new InputError(at(`${where}.parameters`), 'members whose defaults sum to 1', fmt(sum))
  })
  for (const [i, p] of data.parameters.entries()) {
    if (p.when && inGroup.has(p.when.parameter))
      throw new InputError(
        at(`parameters[${i}].when.parameter`),
        'a parameter outside simplex groups',
        describeValue(p.when.parameter),
      )
  }

  // ---- tiers: increasing budgets in a geometric progression (BOHB's budget levels) ----
  const tiers = data.tiers
  tiers.forEach((t, i) => {
    if (tiers.findIndex((x) => x.name === t.name) !== i)
      throw new InputError(at(`tiers[${i}].name`), 'a name no other tier has', describeValue(t.name))
    if (i > 0 && !(t.budget > tiers[i - 1].budget))
      throw new InputError(
        at(`tiers[${i}].budget`),
        `a budget above the previous tier's (${tiers[i - 1].budget})`,
        String(t.budget),
      )
  })
  let fidelity: EngineSpec['fidelity']
  if (tiers.length >= 2) {
    const eta = tiers[1].budget / tiers[0].budget
    const integral = Math.abs(eta - Math.round(eta)) < 1e-9 && Math.round(eta) >= 2
    tiers.forEach((t, i) => {
      if (i === 0) return
      const ratio = t.budget / tiers[i - 1].budget
      if (!integral || Math.abs(ratio - eta) > 1e-9 * eta)
        throw new InputError(
          at(`tiers[${i}].budget`),
          "budgets growing by one integer factor >= 2 (Hyperband's eta), e.g. 1, 3, 9",
          `${tiers.map((x) => x.budget).join(', ')}`,
        )
    })
    fidelity = {
      min: tiers[0].budget,
      max: tiers[tiers.length - 1].budget,
      eta: Math.round(eta),
      ...(data.tiers_comparable ? {} : {comparable: false}),
    }
  }

  // ---- objectives and profiles ----
  data.objectives.forEach((o, i) => {
    if (data.objectives.findIndex((x) => x.metric === o.metric) !== i)
      throw new InputError(at(`objectives[${i}].metric`), 'a metric no other objective names', describeValue(o.metric))
  })
  data.profiles.forEach((p, i) => {
    const where = `profiles[${i}]`
    if (data.profiles.findIndex((x) => x.name === p.name) !== i)
      throw new InputError(at(`${where}.name`), 'a name no other profile has', describeValue(p.name))
    if (!p.direction && !data.objectives.some((o) => o.metric === p.order_by))
      throw new InputError(
        at(`${where}.direction`),
        `"maximize" or "minimize" (order_by ${p.order_by} is not one of the objectives)`,
        'nothing',
      )
    p.constraints.forEach((c, j) => {
      if ((c.value === undefined) === (c.value_of_best === undefined))
        throw new InputError(
          at(`${where}.constraints[${j}]`),
          'exactly one of value or value_of_best',
          c.value === undefined ? 'neither' : 'both',
        )
    })
  })

  checkDeclaredProperties(data, at)

  // ---- evaluation ----
  const ev = data.evaluate
  let evaluation: EngineSpec['evaluate']
  if (ev.kind === 'command') evaluation = {...ev, cwd: resolveFrom(dir, ev.cwd)}
  else if (ev.kind === 'retrieval-service') {
    if (ev.transport === 'http' && !ev.url)
      throw new InputError(at('evaluate.url'), 'the service URL (transport "http")', 'nothing')
    if (ev.transport === 'stdio' && !ev.command)
      throw new InputError(at('evaluate.command'), 'the argv to start (transport "stdio")', 'nothing')
    evaluation = {...ev, cwd: resolveFrom(dir, ev.cwd)}
  } else evaluation = ev
  if (evaluation.kind === 'retrieval-service' && evaluation.url?.includes('{port}') && !evaluation.command)
    throw new InputError(
      at('evaluate.url'),
      'a fixed port, or a command kt starts (a {port} is filled in only then)',
      describeValue(evaluation.url),
    )
  if (evaluation.kind === 'http' || (evaluation.kind === 'retrieval-service' && evaluation.url)) {
    const url = new URL(evaluation.url!.split('{port}').join('1'))
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new InputError(at('evaluate.url'), 'an http:// or https:// URL', describeValue(evaluation.url))
  }

  const space = toSpace(data)
  try {
    checkSpace(space)
  } catch (error) {
    // every rule checkSpace enforces is checked above with the engine file's field; this is a backstop
    throw new InputError(file, 'a valid parameter space', (error as Error).message)
  }
  return {
    file: absolute,
    dir,
    name: data.name,
    description: data.description ?? '',
    space,
    parameters: data.parameters,
    evaluate: evaluation,
    tiers,
    fidelity,
    objectives: data.objectives,
    profiles: data.profiles,
    groups: resolveGroups(
      data.groups,
      data.parameters.map((p) => p.name),
      file,
    ),
    deterministic: data.deterministic,
    properties: data.properties,
  }
}

function resolveFrom(dir: string, path: string): string {
  return isAbsolute(path) ? path : resolve(dir, path)
}

function fmt(x: number): string {
  return String(Number(x.toPrecision(6)))
}

/** Every value a parameter can take, for conditions (undefined for floats). */
function possibleValues(p: EngineParameter): Choice[] | undefined {
  if (p.type === 'categorical') return [...p.choices]
  if (p.type === 'bool') return [false, true]
  if (p.type === 'int') return Array.from({length: p.high - p.low + 1}, (_, i) => p.low + i)
  return undefined
}

/**
 * The parameters as a ParamSpace: float/int (log scale when `log`), categorical, bool as the
 * categorical [false, true], and each simplex group as one SimplexGroup at the position of its
 * first member. `online: true` is carried over (false is the same as absent, and left out).
 */
export function toSpace(data: Pick<EngineFile, 'name' | 'parameters' | 'simplex'>): ParamSpace {
  const groupOf = new Map<string, EngineFile['simplex'][number]>()
  for (const g of data.simplex) for (const name of g.parameters) groupOf.set(name, g)
  const byName = new Map(data.parameters.map((p) => [p.name, p]))
  const params: ParamSpec[] = []
  const placed = new Set<string>()
  for (const p of data.parameters) {
    const group = groupOf.get(p.name)
    if (group) {
      if (placed.has(group.name)) continue
      placed.add(group.name)
      const members: SimplexMember[] = group.parameters.map((name) => {
        const m = byName.get(name)!
        return {name: m.name, env: m.env, description: m.description ?? '', default: m.default as number}
      })
      params.push({
        kind: 'simplex',
        name: group.name,
        description: group.description ?? `weights of ${group.parameters.join(', ')}: sum 1, each >= ${group.floor}`,
        floor: group.floor,
        members,
        ...(group.online ? {online: true} : {}),
      })
      continue
    }
    const description = p.description ?? ''
    const cond: Condition | undefined = p.when ? {param: p.when.parameter, values: p.when.in} : undefined
    const extra = {...(cond ? {condition: cond} : {}), ...(p.online ? {online: true} : {})}
    if (p.type === 'float' || p.type === 'int')
      params.push({
        kind: p.type,
        name: p.name,
        env: p.env,
        description,
        low: p.low,
        high: p.high,
        scale: p.log ? 'log' : 'linear',
        default: p.default,
        ...extra,
      })
    else if (p.type === 'categorical')
      params.push({
        kind: 'categorical',
        name: p.name,
        env: p.env,
        description,
        choices: p.choices,
        default: p.default,
        ...extra,
      })
    else
      params.push({
        kind: 'categorical',
        name: p.name,
        env: p.env,
        description,
        choices: [false, true],
        default: p.default,
        ...extra,
      })
  }
  return {id: engineSpaceId(data.name), params}
}

/**
 * What a study's trials depend on, part by part: the parameter table (with the engine's name; the
 * bandits' `online` column left out, as in a profile's space_sha256), how a trial is evaluated, the
 * tiers (BOHB's budgets) and the objectives (the loss). Stored with a study (`kt search --engine`),
 * so a resume or a worker refuses an engine file that changed under it. The profile rules are not
 * part of it: they only choose among the trials.
 */
export const ENGINE_FINGERPRINT_PARTS = ['parameters', 'evaluate', 'tiers', 'objectives'] as const
export type EngineFingerprint = Record<(typeof ENGINE_FINGERPRINT_PARTS)[number], string>

/** JSON with object keys sorted, so the fingerprint does not depend on how the file orders its fields. */
function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${sortedJson(v)}`).join(',')}}`
}

/** sha256 (hex) of each part of ENGINE_FINGERPRINT_PARTS. */
export function engineFingerprint(spec: EngineSpec): EngineFingerprint {
  const sha = (value: unknown): string => createHash('sha256').update(sortedJson(value)).digest('hex')
  return {
    parameters: sha({name: spec.name, params: withoutOnline(spec.space).params}),
    evaluate: sha(spec.evaluate),
    tiers: sha(spec.fidelity?.comparable === false ? {tiers: spec.tiers, comparable: false} : spec.tiers),
    objectives: sha(spec.objectives),
  }
}

/**
 * Refuses, in one line naming the engine file, an engine whose parameters, evaluation, tiers or
 * objectives differ from the fingerprint a study stored (`stored` undefined: a study made before
 * kt stored one, not checked).
 */
export function checkEngineFingerprint(spec: EngineSpec, stored: unknown): void {
  if (stored === undefined) return
  const now = engineFingerprint(spec)
  const was = (stored ?? {}) as Partial<Record<string, unknown>>
  const changed = ENGINE_FINGERPRINT_PARTS.filter((part) => was[part] !== now[part])
  if (changed.length === 0) return
  throw new InputError(
    spec.file,
    `the engine the study was created with (its ${ENGINE_FINGERPRINT_PARTS.join(', ')}; a changed engine needs a new study: kt search --engine FILE --study NEW)`,
    `changed ${changed.join(', ')}`,
  )
}

/** The tier an optimiser's budget runs at (the rule of src/data/conversations/tiers.ts); undefined for an engine without tiers. */
export function engineTierForBudget(tiers: readonly EngineTier[], budget: number): EngineTier | undefined {
  return tiers.length === 0 ? undefined : tierForBudget(tiers, budget)
}
