import fc from 'fast-check'
import {importanceOf, scoreColumns, detailLevelIndex, type DetailThresholds} from '../src/engine/importance/score.js'
import {computeSignals, type TurnInput} from '../src/engine/importance/signals.js'
import {
  IMPORTANCE_SPACE,
  SIGNALS,
  normalizeWeights,
  importanceConfig,
  weightsFromConfig,
  type Weights,
} from '../src/engine/importance/space.js'
import {makeProfile, renderEnvFile, configFromEnvFile} from '../src/deploy/profile.js'
import type {PhaseContext} from './lib/context.js'
import type {EngineConformance, PropertiesResult, PropertyResult} from '../src/report/types.js'
import {conformanceData, runConformance} from '../src/engines/conformance.js'
import {loadMemoryDataset} from '../src/data/conversations/index.js'
import {engineUnderTest} from './lib/engine-under-test.js'

/**
 * Phase 1: property tests of the scoring math, run by kt itself with fast-check (the same
 * definitions run in the vitest suite). Each property reports its cases, how many violated it,
 * and fast-check's shrunk counterexample.
 */
export interface PropertyDef<T> {
  readonly id: string
  readonly description: string
  readonly arbitrary: fc.Arbitrary<T>
  readonly holds: (value: T) => boolean
}

/** Relative tolerance for properties whose two sides take different floating-point paths. */
export const FLOAT_TOLERANCE = 1e-12

const unit = fc.double({min: 0, max: 1, noNaN: true})
const signals = fc.record({decay: unit, surprise: unit, relevance: unit, habituation: unit})
const weights = fc.record({decay: unit, surprise: unit, relevance: unit, habituation: unit})
const positiveWeights = fc.record({
  decay: fc.double({min: 1e-3, max: 1, noNaN: true}),
  surprise: fc.double({min: 1e-3, max: 1, noNaN: true}),
  relevance: fc.double({min: 1e-3, max: 1, noNaN: true}),
  habituation: fc.double({min: 1e-3, max: 1, noNaN: true}),
})
const simplexWeights = positiveWeights.map(normalizeWeights)
const signalName = fc.constantFrom(...SIGNALS)
const thresholds = fc.tuple(unit, unit, unit).map(([a, b, c]): DetailThresholds => {
  const [s, k, f] = [a, b, c].sort((x, y) => x - y)
  return {SUMMARY: s, CHUNKS: k, FULL: f}
})
const words = fc.constantFrom('flight', 'hotel', 'budget', 'server', 'doctor', 'party', 'note', 'the', 'plan', 'garden')
const turn = fc.record({
  timeMs: fc.integer({min: 0, max: 10 * 365 * 24 * 3_600_000}),
  text: fc.array(words, {minLength: 1, maxLength: 8}).map((w) => w.join(' ')),
  surprise: unit,
  query: fc.constantFrom('flight hotel', 'budget plan', 'server note'),
})

function close(a: number, b: number): boolean {
  return Math.abs(a - b) <= FLOAT_TOLERANCE * Math.max(1, Math.abs(a), Math.abs(b))
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a table of properties over different case types
export const PROPERTIES: ReadonlyArray<PropertyDef<any>> = [
  {
    id: 'score-in-unit-interval',
    description: 'The score is in [0, 1] for signals in [0, 1] and any non-negative weights.',
    arbitrary: fc.tuple(signals, weights),
    holds: ([s, w]: [Record<string, number>, Weights]) => {
      const v = importanceOf(s as never, w)
      return v >= 0 && v <= 1
    },
  },
  {
    id: 'monotone-in-each-signal',
    description: 'Raising any one signal never lowers the score (non-negative weights).',
    arbitrary: fc.tuple(signals, weights, signalName, unit),
    holds: ([s, w, name, raised]: [Record<string, number>, Weights, string, number]) => {
      const higher = {...s, [name]: Math.max(s[name], raised)}
      return importanceOf(higher as never, w) >= importanceOf(s as never, w)
    },
  },
  {
    id: 'newer-never-below-older',
    description: 'Of two turns with the same text, surprise and query, the newer never scores below the older.',
    arbitrary: fc.tuple(
      turn,
      fc.integer({min: 0, max: 90 * 24 * 3_600_000}),
      fc.integer({min: 0, max: 90 * 24 * 3_600_000}),
      simplexWeights,
    ),
    holds: ([t, olderBy, refAfter, w]: [TurnInput, number, number, Weights]) => {
      const newer = t
      const older = {...t, timeMs: t.timeMs - olderBy}
      // Scored in one dataset, the later copy is a repeat: compare each scored in its own dataset.
      const ref = t.timeMs + refAfter
      const a = computeSignals({referenceTimeMs: ref, turns: [newer]}, 168)
      const b = computeSignals({referenceTimeMs: ref, turns: [older]}, 168)
      return scoreColumns(a, w)[0] >= scoreColumns(b, w)[0]
    },
  },
  {
    id: 'detail-level-monotone',
    description: 'The detail level is a non-decreasing function of the score.',
    arbitrary: fc.tuple(unit, unit, thresholds),
    holds: ([a, b, t]: [number, number, DetailThresholds]) => {
      const [lo, hi] = a <= b ? [a, b] : [b, a]
      return detailLevelIndex(lo, t) <= detailLevelIndex(hi, t)
    },
  },
  {
    id: 'time-shift-invariant',
    description: 'Shifting the reference time and every timestamp by the same amount changes no score.',
    arbitrary: fc.tuple(
      fc.array(turn, {minLength: 1, maxLength: 12}),
      fc.integer({min: 0, max: 30 * 24 * 3_600_000}),
      fc.integer({min: -(10 ** 12), max: 10 ** 12}),
      simplexWeights,
    ),
    holds: ([turns, refAfter, shift, w]: [TurnInput[], number, number, Weights]) => {
      const ref = Math.max(...turns.map((t) => t.timeMs)) + refAfter
      const before = scoreColumns(computeSignals({referenceTimeMs: ref, turns}, 168), w)
      const shifted = turns.map((t) => ({...t, timeMs: t.timeMs + shift}))
      const after = scoreColumns(computeSignals({referenceTimeMs: ref + shift, turns: shifted}, 168), w)
      return before.every((v, i) => v === after[i])
    },
  },
  {
    id: 'weight-scale-invariant',
    description: 'Scaling every weight by c > 0 and then normalising changes no score.',
    arbitrary: fc.tuple(signals, positiveWeights, fc.double({min: 1e-6, max: 1e6, noNaN: true})),
    holds: ([s, w, c]: [Record<string, number>, Weights, number]) => {
      const scaled = {
        decay: w.decay * c,
        surprise: w.surprise * c,
        relevance: w.relevance * c,
        habituation: w.habituation * c,
      }
      return close(importanceOf(s as never, normalizeWeights(scaled)), importanceOf(s as never, normalizeWeights(w)))
    },
  },
  {
    id: 'profile-env-roundtrip',
    description: 'Exporting a profile as .env and loading it from the environment gives exactly the same weights.',
    arbitrary: fc.tuple(simplexWeights, fc.double({min: 1, max: 8760, noNaN: true})),
    holds: ([w, scale]: [Weights, number]) => {
      const config = importanceConfig(w, scale)
      const sum = w.decay + w.surprise + w.relevance + w.habituation
      // makeProfile validates the sum to 1e-9; normalisation keeps it far inside that.
      if (Math.abs(sum - 1) > 1e-9) return false
      const profile = makeProfile({
        kind: 'importance',
        space: IMPORTANCE_SPACE,
        name: 'roundtrip',
        config,
        sourceRun: 'property',
      })
      const loaded = configFromEnvFile(IMPORTANCE_SPACE, renderEnvFile(profile), 'roundtrip.env')
      const back = weightsFromConfig(loaded)
      return SIGNALS.every((k) => back[k] === w[k]) && loaded.time_scale_hours === scale
    },
  },
]

/** Runs one property: counts violations over `runs` seeded cases, and shrinks the first failure. */
export function checkProperty<T>(def: PropertyDef<T>, runs: number, seed: number): PropertyResult {
  const cases = fc.sample(def.arbitrary, {seed, numRuns: runs})
  let violations = 0
  for (const c of cases) if (!safeHolds(def, c)) violations++
  let counterexample: string | null = null
  if (violations > 0) {
    const details = fc.check(
      fc.property(def.arbitrary, (v) => safeHolds(def, v)),
      {seed, numRuns: runs},
    )
    counterexample = details.counterexample ? fc.stringify(details.counterexample[0]) : null
  }
  return {id: def.id, description: def.description, cases: cases.length, violations, counterexample, seed}
}

function safeHolds<T>(def: PropertyDef<T>, value: T): boolean {
  try {
    return def.holds(value)
  } catch {
    return false
  }
}

export async function runProperties(ctx: PhaseContext): Promise<PropertiesResult> {
  const runs = ctx.plan.plan.properties.runs
  const properties = PROPERTIES.map((def, k) => {
    ctx.progress(`phase 1: property ${def.id}`)
    return checkProperty(def, runs, ctx.seed + k)
  })
  const conformance = await engineConformance(ctx)
  const passed = properties.every((p) => p.violations === 0) && (conformance?.passed ?? true)
  return {properties, passed, ...(conformance ? {conformance} : {})}
}

/** The conformance suite of the engine the plan names, on its conversations (undefined without one). */
async function engineConformance(ctx: PhaseContext): Promise<EngineConformance | undefined> {
  const named = engineUnderTest(ctx.plan)
  if (!named) return undefined
  const service = named.engine.evaluate.kind === 'retrieval-service'
  const dataset = service ? conformanceData(loadMemoryDataset(named.data)) : undefined
  const report = await runConformance(named.engine, {
    seed: ctx.seed,
    dataset,
    progress: (line) => ctx.progress(`phase 1: ${line}`),
  })
  return {
    engine: report.engine,
    file: named.file,
    kind: report.kind,
    ...(service ? {data: named.dataLabel} : {}),
    deterministic: report.deterministic,
    checks: report.checks.map((c) => ({...c})),
    passed: report.passed,
  }
}
