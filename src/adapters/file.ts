/**
 * The engine file (`kt_engine: 1`): one JSON document that describes an engine kt can tune without
 * knowing anything else about it: its parameters (mapped onto the declarative ParamSpace of
 * src/space), how one trial is evaluated (a command, an HTTP endpoint, or a retrieval service kt
 * drives with its own benchmark), its fidelity tiers, its objectives and its own domain-profile
 * rules. One zod schema (file-schema.ts), one loader (loadEngineFile) checking the fields' relations
 * step by step; every problem is one line naming the file and the field (exit 2).
 */
import {createHash} from 'node:crypto'
import {dirname, isAbsolute, resolve} from 'node:path'
import type {z} from 'zod'
import {checkSpace, withoutOnline} from '../space/space.js'
import type {Choice, Condition, ParamSpace, ParamSpec, SimplexMember} from '../space/types.js'
import type {Fidelity} from '../space/objective.js'
import {tierForBudget} from '../data/conversations/tiers.js'
import {InputError, describeValue} from '../util/errors.js'
import {readJson} from '../util/fs.js'
import {parseWith} from '../util/zod.js'
import {checkDeclaredProperties} from './declared-properties.js'
import {
  EngineFileSchema,
  RESERVED_ENV,
  SPACE_ID_PREFIX,
  type CommandEvaluate,
  type DeclaredProperty,
  type EngineFile,
  type EngineObjective,
  type EngineParameter,
  type EngineProfileRule,
  type HttpEvaluate,
  type RetrievalServiceEvaluate,
} from './file-schema.js'
import {resolveGroups, type EngineGroup} from './groups.js'

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
  /** BOHB's fidelity from the tiers: min, max and the common ratio eta (undefined with < 2 tiers). */
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

/** The file's field as errors name it: `<file>: <field>`. */
type At = (field: string) => string
/** The parameters by name, with their index in the file. */
type ParametersByName = Map<string, {index: number; p: EngineParameter}>

/** Checks an engine file's parsed JSON; `file` is the name used in errors and paths resolve against it. */
export function parseEngineFile(value: unknown, file: string): EngineSpec {
  const data: EngineFile = parseWith<EngineFile>(EngineFileSchema as unknown as z.ZodType<EngineFile>, value, file)
  const at: At = (field) => `${file}: ${field}`
  const absolute = resolve(file)
  const dir = dirname(absolute)
  const byName = checkParameters(data, at)
  checkConditions(data, byName, at)
  checkSimplexGroups(data, byName, at)
  const tiers = data.tiers
  checkTiers(tiers, at)
  const fidelity = tierFidelity(tiers, data.tiers_comparable)
  checkObjectivesAndProfiles(data, at)
  checkDeclaredProperties(data, at)
  const evaluation = resolveEvaluation(data.evaluate, dir, at)
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

/** Each parameter alone: unique name and env (none of kt's own), a non-empty range, a default it can take. */
function checkParameters(data: EngineFile, at: At): ParametersByName {
  const byName: ParametersByName = new Map()
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

  return byName
}

/** Conditions: on an earlier categorical, bool or int parameter, with values it can take. */
function checkConditions(data: EngineFile, byName: ParametersByName, at: At): void {
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
}

/** Simplex groups: float members in one group only, ranges covering the group's corners, defaults summing to 1. */
function checkSimplexGroups(data: EngineFile, byName: ParametersByName, at: At): void {
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
}

/** Tiers: increasing budgets in a geometric progression (BOHB's budget levels); the fidelity they give. */
function checkTiers(tiers: EngineFile['tiers'], at: At): void {
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
  }
}

/**
 * BOHB's fidelity of checked tiers (a geometric progression): smallest and largest budget, their
 * ratio eta, and `comparable: false` when a cheap tier does not rank as the full one; none below two tiers.
 */
export function tierFidelity(tiers: readonly EngineTier[], comparable = true): EngineSpec['fidelity'] {
  if (tiers.length < 2) return undefined
  const eta = Math.round(tiers[1].budget / tiers[0].budget)
  return {min: tiers[0].budget, max: tiers.at(-1)!.budget, eta, ...(comparable ? {} : {comparable: false})}
}

/** Objectives name distinct metrics; profile rules have distinct names, a direction and one threshold per constraint. */
function checkObjectivesAndProfiles(data: EngineFile, at: At): void {
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
}

/** The evaluation with its paths resolved against the file's folder, its URL or command as its transport needs. */
function resolveEvaluation(ev: EngineFile['evaluate'], dir: string, at: At): EngineSpec['evaluate'] {
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
  return evaluation
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
    const cond: Condition | undefined = p.when ? {param: p.when.parameter, values: p.when.in} : undefined
    const extra = {...(cond ? {condition: cond} : {}), ...(p.online ? {online: true} : {})}
    const named = {name: p.name, env: p.env, description: p.description ?? ''}
    if (p.type === 'float' || p.type === 'int') {
      const scale = p.log ? ('log' as const) : ('linear' as const)
      params.push({kind: p.type, ...named, low: p.low, high: p.high, scale, default: p.default, ...extra})
    } else {
      const choices = p.type === 'categorical' ? p.choices : [false, true]
      params.push({kind: 'categorical', ...named, choices, default: p.default, ...extra})
    }
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
