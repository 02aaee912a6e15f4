/**
 * Ablation of a tuned profile against the engine's defaults, for any engine whose per-question
 * scores on held-out data are known (kt's engines and engine files alike: the caller supplies
 * `rowsOf`). Every comparison is a paired bootstrap on the same held-out questions (compareRows,
 * the interval `kt eval --against` prints):
 *
 *  - reverted: the tuned profile with one changed parameter (or one declared group) set back to
 *    its default, against the tuned profile (what that change is worth inside the profile);
 *  - alone: the defaults with one changed parameter (or group) applied, against the defaults
 *    (what that change is worth on its own);
 *  - minimal: greedy backward elimination from the tuned profile: each step reverts the change
 *    whose removal costs least, as long as the result stays non-inferior to the tuned profile
 *    (lower bound of the interval of (candidate - tuned) >= -margin). Every candidate is tested
 *    against the tuned profile itself, not against the previous step, so the losses of several
 *    steps cannot add up past the margin unseen.
 */
import type {MetricValues} from '../data/conversations/metrics.js'
import type {Config} from '../space/types.js'
import {compareRows, type MetricDifference} from './compare.js'
import type {HoldoutValidationSettings} from './holdout-validation.js'

/** A parameter group (an engine file's `groups`): reverted or applied as one. */
export interface ParameterGroup {
  readonly name: string
  readonly parameters: readonly string[]
  readonly description?: string
}

export interface AblationInput {
  readonly defaults: Config
  readonly tuned: Config
  readonly groups?: readonly ParameterGroup[]
  /**
   * Parameters that only change together (a simplex's weights, which must keep summing to 1): a
   * changed member makes the whole set one change, named after the set.
   */
  readonly linked?: readonly ParameterGroup[]
  /** The metric, the non-inferiority margin and the bootstrap's settings. */
  readonly settings: HoldoutValidationSettings
  /** Per-question metric rows of a full configuration on the held-out questions (the same questions, in the same order, every call). */
  rowsOf(config: Config): Promise<readonly MetricValues[]>
  readonly progress?: (line: string) => void
}

/** b - a on the held-out questions, with its paired interval. */
export interface AblationDelta {
  readonly quality: number
  readonly value: number
  readonly low: number | null
  readonly high: number | null
  readonly better: number
  readonly worse: number
}

interface AblationChange {
  /** The parameter, or the linked set's name. */
  readonly parameter: string
  /** The parameters it sets (one, or a linked set's members). */
  readonly parameters: string[]
  readonly default: Config[string] | Config
  readonly tuned: Config[string] | Config
  /** The tuned profile with this parameter at its default, against the tuned profile. */
  readonly reverted: AblationDelta
  /** The defaults with only this parameter tuned, against the defaults. */
  readonly alone: AblationDelta
}

interface AblationGroup {
  readonly name: string
  /** The group's parameters that the tuned profile changes (a group with none is not reported). */
  readonly parameters: string[]
  readonly reverted: AblationDelta
  readonly alone: AblationDelta
}

interface MinimalProfile {
  /** The changes it keeps (parameters or linked sets), in the tuned profile's order. */
  readonly changes: string[]
  /** The defaults plus those changes. */
  readonly config: Config
  readonly against_tuned: AblationDelta
  readonly against_defaults: AblationDelta
  /** The eliminations, in order, each with its test against the tuned profile. */
  readonly steps: Array<{readonly removed: string; readonly against_tuned: AblationDelta}>
}

export interface EngineAblation {
  readonly metric: string
  readonly margin: number
  readonly confidence: number
  readonly resamples: number
  readonly queries: number
  readonly defaults_quality: number
  /** The tuned profile against the defaults. */
  readonly tuned: AblationDelta
  readonly changes: AblationChange[]
  readonly groups: AblationGroup[]
  readonly minimal: MinimalProfile
  /** One sentence naming the changes that carry the gain, with the intervals. */
  readonly headline: string
}

/** The parameters whose tuned value differs from the default (a parameter the profile omits keeps its default). */
export function changedParameters(defaults: Config, tuned: Config): string[] {
  return Object.keys(tuned).filter((k) => k in defaults && tuned[k] !== defaults[k])
}

/** The defaults with the tuned values of `keep` applied. */
export function applyChanges(defaults: Config, tuned: Config, keep: readonly string[]): Config {
  const out: Config = {...defaults}
  for (const k of keep) out[k] = tuned[k]
  return out
}

/** The changes of a profile: each changed parameter, a linked set's changed members as one change named after the set. */
function changeUnits(
  defaults: Config,
  tuned: Config,
  linked: readonly ParameterGroup[] = [],
): Array<{name: string; parameters: string[]}> {
  const units: Array<{name: string; parameters: string[]}> = []
  for (const p of changedParameters(defaults, tuned)) {
    const set = linked.find((l) => l.parameters.includes(p))
    if (!set) units.push({name: p, parameters: [p]})
    else if (!units.some((u) => u.name === set.name))
      units.push({name: set.name, parameters: set.parameters.filter((m) => m in tuned)})
  }
  return units
}

export async function ablateProfile(input: AblationInput): Promise<EngineAblation> {
  const {defaults, tuned, settings} = input
  const {metric, margin, confidence, resamples, seed} = settings
  const units = changeUnits(defaults, tuned, input.linked)
  const changed = units.map((u) => u.name)
  const membersOf = (names: readonly string[]) =>
    units.filter((u) => names.includes(u.name)).flatMap((u) => u.parameters)
  const cache = new Map<string, readonly MetricValues[]>()
  const rows = async (keep: readonly string[]): Promise<readonly MetricValues[]> => {
    const config = applyChanges(defaults, tuned, membersOf(keep))
    const key = JSON.stringify(Object.keys(config).map((k) => [k, config[k]]))
    let r = cache.get(key)
    if (!r) {
      r = await input.rowsOf(config)
      cache.set(key, r)
    }
    return r
  }
  const defaultRows = await rows([])
  const tunedRows = await rows(changed)
  if (defaultRows.length === 0) throw new Error('ablateProfile: no scored question in the held-out data')
  const delta = (a: readonly MetricValues[], b: readonly MetricValues[]): AblationDelta =>
    deltaOf(compareRows({name: 'a', rows: a}, {name: 'b', rows: b}, [metric], {seed, confidence, resamples}))
  const without = (drop: readonly string[]) => changed.filter((p) => !drop.includes(p))

  const changes: AblationChange[] = []
  for (const u of units) {
    const p = u.name
    input.progress?.(`ablation: ${p}`)
    const pick = (c: Config) => (u.parameters.length === 1 && u.parameters[0] === p ? c[p] : pickKeys(c, u.parameters))
    changes.push({
      parameter: p,
      parameters: u.parameters,
      default: pick(defaults),
      tuned: pick(tuned),
      reverted: delta(tunedRows, await rows(without([p]))),
      alone: delta(defaultRows, await rows([p])),
    })
  }
  const groups: AblationGroup[] = []
  for (const g of input.groups ?? []) {
    // a linked set belongs to a group when any of its members does
    const members = units.filter((u) => u.parameters.some((p) => g.parameters.includes(p))).map((u) => u.name)
    if (members.length === 0) continue
    input.progress?.(`ablation: group ${g.name}`)
    groups.push({
      name: g.name,
      parameters: members,
      reverted: delta(tunedRows, await rows(without(members))),
      alone: delta(defaultRows, await rows(members)),
    })
  }

  // greedy backward elimination, every candidate against the tuned profile
  let kept = [...changed]
  const steps: MinimalProfile['steps'] = []
  for (;;) {
    let best: {removed: string; against_tuned: AblationDelta} | undefined
    for (const p of kept) {
      const d = delta(tunedRows, await rows(kept.filter((x) => x !== p)))
      if (d.low === null || d.low < -margin) continue
      if (!best || d.value > best.against_tuned.value) best = {removed: p, against_tuned: d}
    }
    if (!best) break
    const removed = best.removed
    kept = kept.filter((x) => x !== removed)
    steps.push(best)
    input.progress?.(`ablation: minimal profile without ${removed}`)
  }
  const minimalRows = await rows(kept)
  const minimal: MinimalProfile = {
    changes: kept,
    config: applyChanges(defaults, tuned, membersOf(kept)),
    against_tuned: delta(tunedRows, minimalRows),
    against_defaults: delta(defaultRows, minimalRows),
    steps,
  }
  const tunedDelta = delta(defaultRows, tunedRows)
  return {
    metric,
    margin,
    confidence,
    resamples,
    queries: defaultRows.length,
    defaults_quality: mean(defaultRows, metric),
    tuned: tunedDelta,
    changes,
    groups,
    minimal,
    headline: ablationHeadline(metric, margin, confidence, changed.length, tunedDelta, minimal),
  }
}

function pickKeys(c: Config, keys: readonly string[]): Config {
  return Object.fromEntries(keys.map((k) => [k, c[k]]))
}

function deltaOf(c: {differences: MetricDifference[]}): AblationDelta {
  const d = c.differences[0]
  return {quality: d.b, value: d.delta, low: d.low, high: d.high, better: d.better, worse: d.worse}
}

function mean(rows: readonly MetricValues[], metric: string): number {
  return rows.reduce((s, r) => s + r[metric], 0) / rows.length
}

/** "+0.080 [+0.063, +0.096]" */
export function formatDelta(d: AblationDelta): string {
  const s = (x: number | null) => (x === null ? 'undefined' : `${x >= 0 ? '+' : ''}${x.toFixed(3)}`)
  return `${s(d.value)} [${s(d.low)}, ${s(d.high)}]`
}

/** The headline: which changes carry the gain, read from the intervals (never typed in). */
function ablationHeadline(
  metric: string,
  margin: number,
  confidence: number,
  changed: number,
  tuned: AblationDelta,
  minimal: MinimalProfile,
): string {
  const pct = `${Math.round(100 * confidence)}%`
  if (changed === 0) return `The tuned profile changes no parameter: it is the defaults.`
  const kept = minimal.changes
  const carriers =
    kept.length === 0
      ? `none of its ${changed} changes is needed: the defaults alone are non-inferior to it`
      : `${kept.length} of its ${changed} changes carry the gain: ${kept.join(', ')}`
  return (
    `On the held-out questions the tuned profile changes ${metric} by ${formatDelta(tuned)} against the defaults (paired bootstrap ${pct}); ` +
    `${carriers}. The minimal profile${kept.length ? ` (${kept.join(', ')} only)` : ''} changes it by ${formatDelta(minimal.against_defaults)} against the defaults and by ${formatDelta(minimal.against_tuned)} against the tuned profile (non-inferiority margin ${margin}).`
  )
}
