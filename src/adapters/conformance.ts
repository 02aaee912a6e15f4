/**
 * Phase 1 for any engine: a conformance suite generated with fast-check against the engine's
 * protocol, run before any tuning. For a retrieval service (an engine file's, or kt's built-in
 * retrieval engine answered in process, kt-retrieval.ts; kt drives /reset, /ingest, /search): only
 * ingested ids come back and none twice; `k` is respected; the same configuration and data give
 * the same ranking (unless the engine says `"deterministic": false`); /reset isolates
 * conversations; empty, very long, non-ASCII and control-character queries are answered; every
 * parameter at its bounds is accepted; and the properties the engine declares hold. For a command
 * or HTTP engine (one evaluation per trial): determinism of the loss, random configurations
 * answered at every tier with the objectives' metrics, the bounds, the declared properties. Each
 * check counts its violations over seeded cases and reports fast-check's shrunk counterexample.
 */
import fc from 'fast-check'
import {queryMetrics, DEFAULT_KS} from '../data/conversations/metrics.js'
import {selectScoredQueries, type EvalQuery} from '../data/conversations/queries.js'
import type {MemoryDataset} from '../data/conversations/types.js'
import {defaultConfig, type Config, type ParamSpace} from '../space/index.js'
import {boundConfigs, configArbitrary} from './conformance-configs.js'
import type {EngineSpec} from './file.js'
import type {DeclaredProperty} from './file-schema.js'
import {engineObjective} from './objective.js'
import {ServiceSession, runService, serviceSpecOf, turnsOf, type RetrievalServiceSpec} from './retrieval-service.js'

/** Seeded cases of each sampled check (a planted one-query-in-fifty bug is met about 1 - (49/50)^200 = 98% of seeds). */
const CONFORMANCE_RUNS = 200
/** Cases of the /reset check (each resets twice and ingests three conversations) and of the determinism check (each ingests again). */
const RESET_RUNS = 25
/** Configurations per declared property: each scores the whole conformance data set two or more times. */
const DECLARED_RUNS = 6
/** Configurations a command or HTTP engine is asked for per sampled check (each case is one or two trials). */
const TRIAL_RUNS = 3
/** Characters of the "very long" queries. */
const LONG_QUERY_CHARS = 20_000
/** Conversations of the plan's data the suite ingests (enough for isolation, small enough to be quick). */
const CONFORMANCE_CONVERSATIONS = 2
/** Words of the conversations the query arbitrary draws from. */
const VOCABULARY_WORDS = 400
/** Turns per conversation at most in a /reset case (shrinks towards 1). */
const RESET_TURNS = 12
/** Slack of a declared monotonicity (metrics are means of ratios). */
const MONOTONE_TOLERANCE = 1e-12

/** One check's outcome: the shape of kt's own property results (src/report/types.ts PropertyResult). */
interface ConformanceCheck {
  readonly id: string
  readonly description: string
  readonly cases: number
  readonly violations: number
  /** fast-check's shrunk counterexample and why it violates the check; null when none. */
  readonly counterexample: string | null
  readonly seed: number
}

export interface ConformanceReport {
  readonly engine: string
  readonly kind: EngineSpec['evaluate']['kind']
  /** As the engine file declares it: false skips the determinism checks. */
  readonly deterministic: boolean
  readonly checks: ConformanceCheck[]
  readonly passed: boolean
}

export interface ConformanceOptions {
  /** Seed of every check (offset per check, so adding one never shifts another's cases). */
  readonly seed: number
  /** Conversations kt drives through a retrieval service (required for one). */
  readonly dataset?: MemoryDataset
  /** Cases per sampled check (default CONFORMANCE_RUNS). */
  readonly runs?: number
  readonly progress?: (text: string) => void
}

/** A check: `holds` answers true, or why the case violates it (a thrown error counts as a violation with its message). */
interface Check<T> {
  readonly id: string
  readonly description: string
  readonly arbitrary: fc.Arbitrary<T>
  readonly runs: number
  /** Evaluations fast-check may spend replaying and shrinking a failure (each counted case costs one). */
  readonly shrinkBudget?: number
  /** Enumerated cases instead of sampled ones: all are run, none is shrunk (each names itself in its reason). */
  readonly cases?: readonly T[]
  holds(value: T): Promise<true | string>
}

/**
 * A check of the engine's results (determinism, declared properties) holds vacuously on a case the
 * engine fails to answer: that failure is the protocol checks' and the bounds check's finding.
 */
function vacuousOnError<T>(holds: (value: T) => Promise<true | string>): (value: T) => Promise<true | string> {
  return async (value) => {
    try {
      return await holds(value)
    } catch {
      return true
    }
  }
}

async function verdict<T>(check: Check<T>, value: T): Promise<true | string> {
  try {
    return await check.holds(value)
  } catch (error) {
    return (error as Error).message.split('\n')[0]
  }
}

/** Evaluations spent shrinking a failure when a check names no budget (searches are cheap). */
const SHRINK_BUDGET = 400
/** The budget of checks whose cases are whole evaluations (trials, passes over the data). */
const COSTLY_SHRINK_BUDGET = 12

/**
 * Counts violations over the seeded cases, then lets fast-check shrink the first failure. Shrinking
 * stops after the check's budget of evaluations (later candidates are taken to hold), so the
 * counterexample depends on the seed only, never on the machine's speed.
 */
async function runCheck<T>(check: Check<T>, seed: number): Promise<ConformanceCheck> {
  const cases = check.cases ?? fc.sample(check.arbitrary, {seed, numRuns: check.runs})
  let violations = 0
  let first: {value: T; why: string} | undefined
  for (const c of cases) {
    const why = await verdict(check, c)
    if (why === true) continue
    violations++
    first ??= {value: c, why}
  }
  let counterexample: string | null = null
  if (first && check.cases) counterexample = first.why
  else if (first) {
    let left = check.runs + (check.shrinkBudget ?? SHRINK_BUDGET)
    const details = await fc.check(
      fc.asyncProperty(check.arbitrary, async (v) => left-- <= 0 || (await verdict(check, v)) === true),
      {seed, numRuns: check.runs},
    )
    // a failure that depends on the service's history may not reproduce while shrinking: keep the sampled one then
    const shrunk = details.counterexample?.[0] as T | undefined
    const why = shrunk === undefined ? true : await verdict(check, shrunk)
    counterexample = why === true ? `${fc.stringify(first.value)}: ${first.why}` : `${fc.stringify(shrunk)}: ${why}`
  }
  return {id: check.id, description: check.description, cases: cases.length, violations, counterexample, seed}
}

/** What phase 1 checks: an engine file, or a retrieval service described without one (kt's built-in retrieval engine). */
export type ConformanceSubject = EngineSpec | RetrievalServiceSpec

/**
 * Runs the suite: a retrieval service (an engine file's, or a built-in one) by the service checks
 * on the conversations, a command or HTTP engine by the trial checks.
 */
export async function runConformance(
  engine: ConformanceSubject,
  options: ConformanceOptions,
): Promise<ConformanceReport> {
  const progress = options.progress ?? (() => {})
  const service =
    'evaluate' in engine ? (engine.evaluate.kind === 'retrieval-service' ? serviceSpecOf(engine) : undefined) : engine
  const {list, close} = service
    ? serviceChecks(service, options, options.runs ?? CONFORMANCE_RUNS)
    : await trialChecks(engine as EngineSpec, options.seed)
  const results: ConformanceCheck[] = []
  try {
    for (const [i, check] of list.entries()) {
      progress(`conformance: ${check.id}`)
      results.push(await runCheck(check, options.seed + i))
    }
  } finally {
    await close()
  }
  return {
    engine: engine.name,
    kind: service ? 'retrieval-service' : (engine as EngineSpec).evaluate.kind,
    deterministic: engine.deterministic ?? true,
    checks: results,
    passed: results.every((c) => c.violations === 0),
  }
}

/** The first CONFORMANCE_CONVERSATIONS conversations of a dataset and their questions. */
export function conformanceData(dataset: MemoryDataset): MemoryDataset {
  const keep = new Set(dataset.conversations.slice(0, CONFORMANCE_CONVERSATIONS).map((c) => c.id))
  return {
    ...dataset,
    conversations: dataset.conversations.filter((c) => keep.has(c.id)),
    questions: dataset.questions.filter((q) => keep.has(q.conversation)),
  }
}

function vocabulary(dataset: MemoryDataset): string[] {
  const words = new Set<string>()
  for (const c of dataset.conversations)
    for (const t of c.turns) for (const w of t.text.toLowerCase().match(/[a-z0-9]+/g) ?? []) words.add(w)
  const sorted = [...words].sort()
  const stride = Math.max(1, Math.floor(sorted.length / VOCABULARY_WORDS))
  return sorted.filter((_, i) => i % stride === 0).slice(0, VOCABULARY_WORDS)
}

/** A query of the conformance data as the session ranks it. */
function probe(conversation: string, text: string): EvalQuery {
  return {id: 'conformance', conversation, text, category: 'single-hop', evidence: []}
}

function sameIds(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i])
}

type Query = {conversation: string; words: string[]; k: number}
type Ranker = (q: Query, text?: string, config?: Config) => Promise<string[]>
/** The checks a suite runs and what closes the engine's process or connection after them. */
type CheckList = {list: Check<unknown>[]; close: () => Promise<void>}

/** The checks of a retrieval service, on one session (one process) over the conformance data. */
function serviceChecks(spec: RetrievalServiceSpec, options: ConformanceOptions, runs: number): CheckList {
  if (!options.dataset)
    throw new Error(`${spec.file ?? spec.name}: a retrieval service's conformance suite needs conversations`)
  const data = conformanceData(options.dataset)
  const session = new ServiceSession(spec, data)
  const defaults = defaultConfig(spec.space)
  const convIds = data.conversations.map((c) => c.id)
  const maxK = Math.max(...data.conversations.map((c) => c.turns.length)) + 2
  const words = vocabulary(data)
  const ready = (): Promise<boolean> => session.ensureIngested(defaults)
  const query = fc.record({
    conversation: fc.constantFrom(...convIds),
    words: fc.array(fc.constantFrom(...(words.length ? words : ['memory'])), {minLength: 1, maxLength: 6}),
    k: fc.integer({min: 1, max: maxK}),
  })
  const rank: Ranker = async (q, text = q.words.join(' '), config = defaults) =>
    (await session.rank(probe(q.conversation, text), q.k, config)).ids
  const queries = selectScoredQueries(data).queries
  const searched = (id: string, description: string, verdict: (ids: string[], q: Query) => true | string) => ({
    id,
    description,
    arbitrary: query,
    runs,
    holds: async (q: Query) => {
      await ready()
      return verdict(await rank(q), q)
    },
  })
  const list: Check<unknown>[] = [
    // session.rank refuses an id outside the conversation and an id given twice
    searched(
      'ingested-ids-once',
      'Every id a search returns is a turn of the conversation searched, and none comes twice.',
      () => true,
    ),
    searched(
      'k-respected',
      'A search for k turns returns at most k.',
      (ids, q) => ids.length <= q.k || `${ids.length} ids for k=${q.k}`,
    ),
    ...(spec.deterministic === false
      ? []
      : [determinismCheck(query, Math.min(runs, RESET_RUNS), ready, rank, session, defaults)]),
    oddQueryCheck(convIds, runs, ready, rank),
    resetCheck(data, session, defaults),
    boundsCheck(spec.space, async (config) => {
      await session.ensureIngested(config)
      for (const q of queries.slice(0, BOUNDS_QUERIES)) await session.rank(q, BOUNDS_K, config)
    }),
    ...(spec.properties ?? []).map((p) => declaredServiceCheck(spec, p, queries, session)),
  ]
  return {list, close: () => session.close()}
}

/** Scored questions each corner of the bounds check is asked, and their depth. */
const BOUNDS_QUERIES = 3
const BOUNDS_K = 10

function determinismCheck(
  query: fc.Arbitrary<Query>,
  runs: number,
  ready: () => Promise<boolean>,
  rank: Ranker,
  session: ServiceSession,
  defaults: Config,
): Check<Query> {
  return {
    id: 'same-config-same-ranking',
    description:
      'The same configuration and data give the same ranking: asked twice, and again after /reset and a new ingestion.',
    arbitrary: query,
    runs,
    holds: vacuousOnError(async (q) => {
      await ready()
      const first = await rank(q)
      const again = await rank(q)
      if (!sameIds(first, again)) return `asked twice: ${JSON.stringify(first)} then ${JSON.stringify(again)}`
      session.invalidate()
      await session.ensureIngested(defaults)
      const after = await rank(q)
      return sameIds(first, after) || `after /reset and ingest: ${JSON.stringify(first)} then ${JSON.stringify(after)}`
    }),
  }
}

function oddQueryCheck(
  convIds: string[],
  runs: number,
  ready: () => Promise<boolean>,
  rank: Ranker,
): Check<{conversation: string; text: string; k: number}> {
  const control = fc
    .array(fc.integer({min: 0, max: 31}), {minLength: 1, maxLength: 20})
    .map((codes) => String.fromCharCode(...codes))
  const text = fc.oneof(
    fc.constant(''),
    fc.integer({min: 1, max: 6}).map((n) => 'memory '.repeat(LONG_QUERY_CHARS / 7).slice(0, LONG_QUERY_CHARS - n)),
    fc.string({unit: 'grapheme', minLength: 1, maxLength: 20}),
    control,
    fc.tuple(fc.string({unit: 'grapheme', maxLength: 8}), control).map(([a, b]) => `${a}${b}`),
  )
  return {
    id: 'odd-queries-answered',
    description: 'Empty, very long, non-ASCII and control-character queries are answered with a valid ranking.',
    arbitrary: fc.record({conversation: fc.constantFrom(...convIds), text, k: fc.integer({min: 1, max: 10})}),
    runs,
    holds: async (q) => {
      await ready()
      await rank({conversation: q.conversation, words: [], k: q.k}, q.text)
      return true
    },
  }
}

/**
 * /reset isolates: ingest conversation A, reset, ingest conversation B under the same id and A's
 * turns again under another id; a search of the first id for A's words must return only B's turns.
 * Turn ids are prefixed (a:, b:, c:) so that no id is shared between the three.
 */
function resetCheck(data: MemoryDataset, session: ServiceSession, defaults: Config): Check<unknown> {
  const convs = data.conversations
  const [first, second] = ['kt-conformance-1', 'kt-conformance-2']
  const relabel = (index: number, turns: number, prefix: string) =>
    turnsOf(convs[index])
      .slice(0, turns)
      .map((t) => ({...t, id: `${prefix}:${t.id}`}))
  const ingest = (id: string, turns: ReturnType<typeof relabel>) =>
    session.call('ingest', {conversation_id: id, turns, config: defaults}, id)
  return {
    id: 'reset-isolates',
    description:
      "After /reset no turn ingested before it comes back, and a search never returns another conversation's turns.",
    arbitrary: fc.record({
      a: fc.integer({min: 0, max: convs.length - 1}),
      b: fc.integer({min: 0, max: convs.length - 1}),
      turns: fc.integer({min: 1, max: RESET_TURNS}),
      pick: fc.nat(),
    }),
    runs: RESET_RUNS,
    holds: async ({a, b, turns, pick}) => {
      session.invalidate()
      const before = relabel(a, turns, 'a')
      await session.call('reset', {}, 'reset')
      await ingest(first, before)
      await session.call('reset', {}, 'reset')
      await ingest(first, relabel(b, turns, 'b'))
      await ingest(second, relabel(a, turns, 'c'))
      const q = before[pick % before.length].text
      const reply = await session.call('search', {conversation_id: first, query: q, k: 2 * turns, config: defaults}, q)
      const ids = Array.isArray(reply.ids) ? reply.ids : []
      const stray = ids.find((id) => typeof id !== 'string' || !id.startsWith('b:'))
      return stray === undefined || `search of ${first} returned ${JSON.stringify(stray)} (${strayOrigin(stray)})`
    },
  }
}

function strayOrigin(id: unknown): string {
  if (typeof id !== 'string') return 'not a string'
  if (id.startsWith('a:')) return 'ingested before /reset'
  if (id.startsWith('c:')) return 'a turn of another conversation'
  return 'never ingested'
}

/** Every corner of the space (boundConfigs) tried once; `attempt` throws when the engine refuses it. */
function boundsCheck(space: ParamSpace, attempt: (config: Config) => Promise<unknown>): Check<number> {
  const corners = boundConfigs(space)
  return {
    id: 'parameters-at-bounds',
    description: 'Every parameter alone at each of its bounds (each choice, each simplex corner) is accepted.',
    arbitrary: fc.integer({min: 0, max: corners.length - 1}),
    runs: corners.length,
    cases: corners.map((_, i) => i),
    holds: async (i) => {
      try {
        await attempt(corners[i].config)
        return true
      } catch (error) {
        return `${corners[i].label}: ${(error as Error).message.split('\n')[0]}`
      }
    },
  }
}

/** A declared monotonicity over successive values: true, or the values and why not. */
function monotone(p: DeclaredProperty, values: number[]): true | string {
  for (let i = 1; i < values.length; i++) {
    const up = values[i] - values[i - 1]
    if (p.direction === 'non-decreasing' ? up < -MONOTONE_TOLERANCE : up > MONOTONE_TOLERANCE)
      return `${p.metric} ${values.map((v) => Number(v.toPrecision(6))).join(' -> ')}, not ${p.direction}`
  }
  return true
}

/** A declared property's check, by kind of `over`: the cut-off k (retrieval services) or a parameter. */
function declaredCheck(
  space: ParamSpace,
  p: DeclaredProperty,
  holds: (value: never) => Promise<true | string>,
  arbitrary?: fc.Arbitrary<unknown>,
): Check<unknown> {
  return {
    id: `declared:${p.id}`,
    description: p.description ?? `${p.metric} is ${p.direction} in ${p.over} (declared by the engine file)`,
    arbitrary: arbitrary ?? configArbitrary(space),
    runs: DECLARED_RUNS,
    shrinkBudget: COSTLY_SHRINK_BUDGET,
    holds: vacuousOnError(holds),
  }
}

function declaredServiceCheck(
  spec: RetrievalServiceSpec,
  p: DeclaredProperty,
  queries: readonly EvalQuery[],
  session: ServiceSession,
): Check<unknown> {
  if (p.over === 'k')
    return declaredCheck(spec.space, p, async (config: Config) => {
      await session.ensureIngested(config)
      const values: number[] = []
      for (const k of DEFAULT_KS) {
        const name = p.metric.split('@k').join(`@${k}`)
        let sum = 0
        for (const q of queries) sum += queryMetrics((await session.rank(q, k, config)).ids, q.evidence, [k])[name]
        values.push(queries.length ? sum / queries.length : 0)
      }
      const ok = monotone(p, values)
      return ok === true || `${ok} over k = ${DEFAULT_KS.join(', ')}`
    })
  return overParameterCheck(spec.space, p, async (config) => {
    const run = await runService(session, queries, config, {minTimings: 1, ks: DEFAULT_KS})
    const lat = {p50_ms: run.latency.p50, p95_ms: run.latency.p95, p99_ms: run.latency.p99}
    const all: Record<string, number> = {...run.report.overall, ...lat}
    all.quality = all[spec.metric ?? 'recall@10']
    return all[p.metric]
  })
}

/** A declared property over a numeric parameter: two values of it in a random configuration, the metric compared. */
function overParameterCheck(
  space: ParamSpace,
  p: DeclaredProperty,
  metricAt: (config: Config) => Promise<number>,
): Check<unknown> {
  const param = space.params.find((x) => x.name === p.over)!
  const [low, high] = param.kind === 'float' || param.kind === 'int' ? [param.low, param.high] : [0, 1]
  const at = (u: number): number => {
    const v = low + u * (high - low)
    return param.kind === 'int' ? Math.round(v) : v
  }
  const unit = fc.double({min: 0, max: 1, noNaN: true})
  const holds = async ([config, u, w]: [Config, number, number]) => {
    const [a, b] = [at(Math.min(u, w)), at(Math.max(u, w))]
    if (a === b) return true
    const ok = monotone(p, [await metricAt({...config, [p.over]: a}), await metricAt({...config, [p.over]: b})])
    return ok === true || `${ok} for ${p.over} ${a} -> ${b}`
  }
  return declaredCheck(space, p, holds, fc.tuple(configArbitrary(space), unit, unit))
}

/**
 * The checks of an engine evaluated one trial at a time (command, http), each case one or two
 * trials: determinism of the loss, random configurations at every tier answered with the
 * objectives' metrics (bad output named), the bounds, the declared properties.
 */
async function trialChecks(engine: EngineSpec, seed: number): Promise<CheckList> {
  const objective = await engineObjective(engine, {})
  const top = engine.fidelity?.max ?? engine.tiers.at(-1)?.budget ?? 1
  const budgets = engine.tiers.length > 0 ? engine.tiers.map((t) => t.budget) : [top]
  const metric = engine.objectives[0].metric
  let trialId = 0
  const evaluate = async (config: Config, budget = top) =>
    objective.evaluate(config, budget, {trialId: trialId++, configId: JSON.stringify(config), seed})
  const checks: Check<unknown>[] = []
  if (engine.deterministic !== false)
    checks.push({
      id: 'same-config-same-loss',
      description: `The same configuration gives the same ${metric}, asked twice.`,
      arbitrary: configArbitrary(engine.space),
      runs: TRIAL_RUNS,
      shrinkBudget: COSTLY_SHRINK_BUDGET,
      holds: vacuousOnError(async (config: Config) => {
        const [x, y] = [await evaluate(config), await evaluate(config)]
        return x.loss === y.loss || `${metric} ${Math.abs(x.loss)} then ${Math.abs(y.loss)}`
      }),
    })
  checks.push({
    id: 'configurations-answered',
    description: `A configuration drawn from the parameter table is answered at every tier with the objectives' metrics (${engine.objectives.map((o) => o.metric).join(', ')}) as finite numbers.`,
    arbitrary: fc.tuple(configArbitrary(engine.space), fc.constantFrom(...budgets)),
    runs: TRIAL_RUNS,
    shrinkBudget: COSTLY_SHRINK_BUDGET,
    holds: async ([config, budget]: [Config, number]) => {
      await evaluate(config, budget)
      return true
    },
  })
  checks.push(boundsCheck(engine.space, evaluate))
  for (const p of engine.properties ?? [])
    checks.push(
      overParameterCheck(engine.space, p, async (config) => {
        const value = (await evaluate(config)).metrics?.[p.metric]
        if (value === undefined) throw new Error(`no ${p.metric} in the trial's metrics`)
        return value
      }),
    )
  return {list: checks, close: async () => (objective as {close?: () => Promise<void> | void}).close?.()}
}
