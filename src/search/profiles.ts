/**
 * Domain profiles chosen from a study's trials under stated priorities, with the rationale
 * computed: which constraint binds (the unconstrained best violates it), what it costs in the
 * primary metric, and what a stated preference (e.g. a favoured temporal weight) costs.
 *
 * Written against plain candidates {trialId, config, metrics} and rules that name metrics and
 * parameters, so it knows no engine: kt's retrieval rules live with its objective
 * (src/eval/retrieval-profiles.ts), an engine file states its own (src/adapters/file.ts).
 */
import type {Config} from '../space/index.js'
import type {FrontPoint} from './front.js'
import {paretoFront, type Objective} from '../stats/pareto.js'

/** Quality maximised, P99 latency minimised: the objectives of frontReport's front. */
const FRONT_OBJECTIVES: ReadonlyArray<Objective<FrontPoint>> = [
  {value: (p) => p.quality, sense: 'max'},
  {value: (p) => p.latencyMs, sense: 'min'},
]

export interface Candidate {
  readonly trialId: number
  readonly config: Config
  readonly metrics: Readonly<Record<string, number>>
}

/** A hard limit on a metric: absolute, or a fraction of the best value any candidate reaches. */
interface Constraint {
  readonly metric: string
  readonly op: '<=' | '>='
  readonly value?: number
  readonly fractionOfBest?: number
  readonly label: string
}

export interface ProfileRule {
  readonly name: string
  readonly description: string
  /** What is optimised first. */
  readonly primary: {readonly metric: string; readonly sense: 'max' | 'min'; readonly label: string}
  readonly constraints: readonly Constraint[]
  /**
   * A preference among near-ties: among feasible candidates within `tolerance` of the best primary
   * value, the one with the highest (or lowest) value of a parameter.
   */
  readonly favour?: {
    readonly param: string
    readonly direction: 'high' | 'low'
    readonly tolerance: number
    readonly label: string
  }
}

export interface MetricNames {
  /** Overall quality, maximised (e.g. recall@10). */
  readonly quality: string
  /** P99 latency in ms, minimised (for the retrieval objective: the cost-model estimate). */
  readonly latency: string
  /** Quality on entity-lookup queries. */
  readonly entity: string
  /** The configuration parameter that weights temporal evidence. */
  readonly temporalParam: string
}

interface ConstraintOutcome {
  readonly label: string
  /** The threshold applied (a fraction of the best resolved to a number). */
  readonly threshold: number
  /** True if the unconstrained best violates it, so it changed the choice. */
  readonly binds: boolean
  /** Candidates it excludes. */
  readonly excluded: number
}

export interface ProfileChoice {
  readonly profile: string
  readonly description: string
  readonly trialId: number | null
  readonly config: Config | null
  readonly metrics: Readonly<Record<string, number>> | null
  /** On the quality/latency Pareto front of all candidates. */
  readonly onFront: boolean | null
  readonly constraints: ConstraintOutcome[]
  /** Primary metric: unconstrained best, chosen, and the difference the constraints and preference cost. */
  readonly cost: {
    readonly metric: string
    readonly unconstrained: number
    readonly chosen: number | null
    readonly given_up: number | null
  } | null
  readonly rationale: string[]
}

function fmt(x: number): string {
  return Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 1 ? x.toFixed(2) : x.toPrecision(3)
}

/** Best candidate by a metric (ties: the lower tie-break metric if known, then lower trial id). */
function bestBy(
  cands: readonly Candidate[],
  metric: string,
  sense: 'max' | 'min',
  tieBreak: TieBreak | undefined,
): Candidate | undefined {
  const tieValue = (c: Candidate): number => {
    const v = tieBreak === undefined ? undefined : c.metrics[tieBreak.metric]
    return v === undefined || !Number.isFinite(v) ? Infinity : tieBreak!.sense === 'max' ? -v : v
  }
  let best: Candidate | undefined
  for (const c of cands) {
    const v = c.metrics[metric]
    if (v === undefined || !Number.isFinite(v)) continue
    if (!best) {
      best = c
      continue
    }
    const b = best.metrics[metric]
    const better = sense === 'max' ? v > b : v < b
    const tie =
      v === b && (tieValue(c) < tieValue(best) || (tieValue(c) === tieValue(best) && c.trialId < best.trialId))
    if (better || tie) best = c
  }
  return best
}

/**
 * What profile choice needs to know about the study besides the rule: how to break ties, which
 * metrics to show beside the primary one, and which trials are on the study's front.
 */
/** The metric that breaks ties between equal primary values, and whether more of it is better. */
interface TieBreak {
  readonly metric: string
  readonly sense: 'max' | 'min'
}

export interface ChoiceContext {
  /** Breaks ties between equal primary values (then the lower trial id). */
  readonly tieBreak?: TieBreak
  /** Metrics shown beside the primary one when a trial is described (`, label value unit`). */
  readonly shown: ReadonlyArray<{readonly metric: string; readonly label: string; readonly unit?: string}>
  /** Whether a trial is on the study's front; null when there is no front. */
  readonly onFront: (trialId: number) => boolean | null
  /** How the front is named in a rationale ("accuracy/latency"). */
  readonly frontLabel: string
}

/** The context of kt's retrieval studies: ties to lower P99, front of quality vs P99. */
function contextFromNames(names: MetricNames, candidates: readonly Candidate[]): ChoiceContext {
  const points: FrontPoint[] = candidates
    .filter((c) => Number.isFinite(c.metrics[names.quality]) && Number.isFinite(c.metrics[names.latency]))
    .map((c) => ({
      trialId: c.trialId,
      quality: c.metrics[names.quality],
      latencyMs: c.metrics[names.latency],
      config: c.config,
    }))
  // only which trials are on the front matters here (not the dominated trials' dominators frontReport lists)
  const front =
    points.length > 0 ? new Set(paretoFront(points, FRONT_OBJECTIVES).map((i) => points[i].trialId)) : undefined
  const inPoints = new Set(points.map((p) => p.trialId))
  return {
    tieBreak: {metric: names.latency, sense: 'min'},
    shown: [
      {metric: names.latency, label: 'p99', unit: ' ms'},
      {metric: names.quality, label: 'accuracy'},
    ],
    onFront: (id) => (front && inPoints.has(id) ? front.has(id) : null),
    frontLabel: 'accuracy/latency',
  }
}

function threshold(c: Constraint, cands: readonly Candidate[]): number {
  if (c.value !== undefined) return c.value
  const values = cands.map((x) => x.metrics[c.metric]).filter((v) => v !== undefined && Number.isFinite(v))
  const best = c.op === '>=' ? Math.max(...values) : Math.min(...values)
  return (c.fractionOfBest ?? 1) * best
}

function satisfies(c: Constraint, t: number, cand: Candidate): boolean {
  const v = cand.metrics[c.metric]
  if (v === undefined || !Number.isFinite(v)) return false
  return c.op === '<=' ? v <= t : v >= t
}

/**
 * A rule's preference: among the feasible trials within its tolerance of the best, the one with the
 * highest (or lowest) value of its parameter; the best one when the parameter was not searched.
 */
function favoured(
  f: NonNullable<ProfileRule['favour']>,
  primary: ProfileRule['primary'],
  feasible: readonly Candidate[],
  bestFeasible: Candidate,
  tieBreak: ChoiceContext['tieBreak'],
  rationale: string[],
): Candidate {
  const {metric, sense, label} = primary
  const bestValue = bestFeasible.metrics[metric]
  const band = feasible.filter(
    (c) =>
      (sense === 'max' ? c.metrics[metric] >= bestValue - f.tolerance : c.metrics[metric] <= bestValue + f.tolerance) &&
      typeof c.config[f.param] === 'number',
  )
  if (band.length === 0 || typeof bestFeasible.config[f.param] !== 'number') {
    rationale.push(`${f.label}: parameter ${f.param} is not in the searched configurations; not applied`)
    return bestFeasible
  }
  const pick = band.reduce((a, b) => {
    const va = a.config[f.param] as number
    const vb = b.config[f.param] as number
    const better = f.direction === 'high' ? vb > va : vb < va
    return better || (vb === va && b.trialId === bestBy([a, b], metric, sense, tieBreak)!.trialId) ? b : a
  })
  const most = f.direction === 'high' ? 'highest' : 'lowest'
  rationale.push(
    pick.trialId === bestFeasible.trialId
      ? `${f.label}: the best trial already has the ${most} ${f.param} (${fmt(pick.config[f.param] as number)}) among ${band.length} trials within ${f.tolerance} ${label}`
      : `${f.label}: among ${band.length} trials within ${f.tolerance} ${label} of the best, #${pick.trialId} has the ${most} ${f.param} (${fmt(pick.config[f.param] as number)} vs ${fmt(bestFeasible.config[f.param] as number)}), costing ${fmt(Math.abs(bestValue - pick.metrics[metric]))} ${label}`,
  )
  return pick
}

/** Chooses one profile from the candidates under a rule, and says why. */
export function chooseProfile(
  rule: ProfileRule,
  candidates: readonly Candidate[],
  context: ChoiceContext,
): ProfileChoice {
  const tieBreak = context.tieBreak
  const {metric, sense, label} = rule.primary
  const usable = candidates.filter((c) => Number.isFinite(c.metrics[metric]))
  const empty = {
    profile: rule.name,
    description: rule.description,
    trialId: null,
    config: null,
    metrics: null,
    onFront: null,
  }
  if (usable.length === 0) return {...empty, constraints: [], cost: null, rationale: [`no trial reports ${metric}`]}
  const unconstrained = bestBy(usable, metric, sense, tieBreak)!
  const thresholds = rule.constraints.map((c) => threshold(c, usable))
  const outcomes: ConstraintOutcome[] = rule.constraints.map((c, i) => ({
    label: c.label,
    threshold: thresholds[i],
    binds: !satisfies(c, thresholds[i], unconstrained),
    excluded: usable.filter((x) => !satisfies(c, thresholds[i], x)).length,
  }))
  const feasible = usable.filter((x) => rule.constraints.every((c, i) => satisfies(c, thresholds[i], x)))
  const rationale: string[] = []
  const describe = (c: Candidate): string =>
    `#${c.trialId}: ${label} ${fmt(c.metrics[metric])}` +
    context.shown
      .filter((x) => x.metric !== metric && c.metrics[x.metric] !== undefined)
      .map((x) => `, ${x.label} ${fmt(c.metrics[x.metric])}${x.unit ?? ''}`)
      .join('')
  if (feasible.length === 0) {
    rule.constraints.forEach((c, i) => {
      const closest = bestBy(usable, c.metric, c.op === '<=' ? 'min' : 'max', tieBreak)
      rationale.push(
        `no trial meets ${c.label}${c.fractionOfBest !== undefined ? ` (= ${fmt(thresholds[i])})` : ''}; closest is #${closest?.trialId} at ${closest ? fmt(closest.metrics[c.metric]) : '-'}`,
      )
    })
    return {
      ...empty,
      constraints: outcomes,
      cost: {metric, unconstrained: unconstrained.metrics[metric], chosen: null, given_up: null},
      rationale,
    }
  }
  const bestFeasible = bestBy(feasible, metric, sense, tieBreak)!
  let chosen = bestFeasible
  rationale.push(
    `${label} first: best among ${feasible.length} of ${usable.length} trials meeting ${rule.constraints.map((c) => c.label).join(' and ') || 'no constraint'}: ${describe(bestFeasible)}`,
  )
  rule.constraints.forEach((c, i) => {
    const o = outcomes[i]
    const limit = c.fractionOfBest !== undefined ? ` (= ${fmt(o.threshold)})` : ''
    if (o.binds)
      rationale.push(
        `${c.label}${limit} binds: the best by ${label} overall (${describe(unconstrained)}) violates it; it excludes ${o.excluded} trials`,
      )
    else
      rationale.push(
        `${c.label}${limit} does not bind: the best by ${label} overall meets it (it excludes ${o.excluded} other trials)`,
      )
  })
  if (rule.favour) chosen = favoured(rule.favour, rule.primary, feasible, bestFeasible, tieBreak, rationale)
  const givenUp =
    sense === 'max'
      ? unconstrained.metrics[metric] - chosen.metrics[metric]
      : chosen.metrics[metric] - unconstrained.metrics[metric]
  rationale.push(
    givenUp > 0
      ? `in all, the constraints${rule.favour ? ' and the preference' : ''} cost ${fmt(givenUp)} ${label} against the unconstrained best #${unconstrained.trialId}`
      : `nothing given up against the unconstrained best`,
  )
  const onFront = context.onFront(chosen.trialId)
  if (onFront === false)
    rationale.push(
      `#${chosen.trialId} is not on the ${context.frontLabel} front: ${rule.primary.label} is what this profile optimises`,
    )
  return {
    profile: rule.name,
    description: rule.description,
    trialId: chosen.trialId,
    config: chosen.config,
    metrics: chosen.metrics,
    onFront,
    constraints: outcomes,
    cost: {metric, unconstrained: unconstrained.metrics[metric], chosen: chosen.metrics[metric], given_up: givenUp},
    rationale,
  }
}

/** Domain profiles from one set of candidates: each rule's choice (kt's retrieval rules: src/eval/retrieval-profiles.ts). */
export function chooseDomainProfiles(
  candidates: readonly Candidate[],
  names: MetricNames,
  rules: readonly ProfileRule[],
): ProfileChoice[] {
  // the front a choice is checked against is that of the trials reporting the rule's primary metric
  return rules.map((rule) =>
    chooseProfile(
      rule,
      candidates,
      contextFromNames(
        names,
        candidates.filter((c) => Number.isFinite(c.metrics[rule.primary.metric])),
      ),
    ),
  )
}
