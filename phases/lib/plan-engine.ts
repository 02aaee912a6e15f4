import {dirname} from 'node:path'
import type {MemoryDataset} from '../../src/data/conversations/types.js'
import type {MetricValues} from '../../src/data/conversations/metrics.js'
import {selectScoredQueries} from '../../src/data/conversations/queries.js'
import {RETRIEVAL_SPACE} from '../../src/engine/retrieval/space.js'
import {loadEngineFile} from '../../src/adapters/file.js'
import {resolveGroups, type EngineGroup} from '../../src/adapters/groups.js'
import {serviceSpecOf} from '../../src/adapters/retrieval-service.js'
import {evaluateService} from '../../src/eval/service-eval.js'
import {evaluateSystem, prepareEvaluation, type PreparedEvaluation} from '../../src/eval/harness.js'
import type {ParameterGroup} from '../../src/eval/ablation.js'
import {configKeys, defaultConfig} from '../../src/space/space.js'
import type {Config, ParamSpace} from '../../src/space/types.js'
import {InputError, describeValue} from '../../src/util/errors.js'
import {engineRefFor} from '../../src/deploy/spaces.js'
import type {PropertiesResult} from '../../src/report/types.js'
import {engineConformance, type EnginePhaseInput} from './engine-phases.js'
import {ktRetrievalService} from '../../src/adapters/kt-retrieval.js'

/**
 * The engine a format-2 plan names, as the phases use it: its parameter table, its declared
 * groups, the parameters that change together (simplex weights), where its latency comes from,
 * and per-question scores of a configuration on some conversations. An engine file and kt's
 * built-in retrieval engine are described by the same structure; the built-in description is the
 * one place that knows it is kt's.
 */
export interface PlanEngine {
  /** As the plan names it: `kt:retrieval` or the engine file's path. */
  readonly ref: string
  readonly name: string
  readonly space: ParamSpace
  readonly groups: readonly EngineGroup[]
  readonly linked: readonly ParameterGroup[]
  /** The engine file's absolute path (undefined for a built-in engine). */
  readonly file?: string
  /** The folder the engine's command runs in (its scripts are inputs of a run too). */
  readonly dir?: string
  /**
   * true: kt drives the plan's conversations through it and scores each question (kt:retrieval, a
   * retrieval service); false: a command or http engine, which evaluates on its own data and returns
   * metrics only (no plan data, no per-question phases).
   */
  readonly scoresQuestions: boolean
  /** Where P99 comes from: a cost model (repeats exactly) or the clock. */
  readonly latency: 'cost_model' | 'measured'
  /** The metrics its charts explain: the objectives it is tuned on (the plan's metric and P99, or the engine file's). */
  objectives(metric: string): string[]
  /** Phase 1: its protocol's conformance suite. */
  properties(input: Omit<EnginePhaseInput, 'engine'>): Promise<PropertiesResult>
  /** How its profiles name it (an engine file, relative to the profiles' folder); undefined: kind retrieval. */
  profileRef(profileDir: string): {name: string; file: string} | undefined
  /** Per-question metric rows of every scored question of `dataset` (selectScoredQueries order) and each question's category. */
  score(dataset: MemoryDataset, config: Config): Promise<{rows: MetricValues[]; categories: string[]}>
}

/** kt's retrieval engine as an engine file would describe it: its groups are its parameter families. */
const KT_RETRIEVAL_GROUPS = ['bm25', 'seeds', 'spread', 'edge', 'actr', 'ppr'].map((g) => ({
  name: g,
  parameters: [`${g}.*`],
}))

function ktRetrieval(): PlanEngine {
  const prepared = new WeakMap<MemoryDataset, PreparedEvaluation>()
  return {
    ref: 'kt:retrieval',
    name: 'retrieval',
    space: RETRIEVAL_SPACE,
    groups: resolveGroups(KT_RETRIEVAL_GROUPS, configKeys(RETRIEVAL_SPACE), 'kt:retrieval'),
    linked: simplexSets(RETRIEVAL_SPACE),
    scoresQuestions: true,
    latency: 'cost_model',
    objectives: (metric) => [metric, 'p99_ms'],
    // the same suite as any retrieval service, answered in this process (src/adapters/kt-retrieval.ts)
    properties: async (input) => {
      const conformance = await engineConformance(ktRetrievalService(), input)
      return {properties: [], passed: conformance.passed, conformance}
    },
    profileRef: () => undefined,
    async score(dataset, config) {
      let p = prepared.get(dataset)
      if (!p) prepared.set(dataset, (p = prepareEvaluation(dataset)))
      const rows = evaluateSystem(p, 'engine', {...defaultConfig(RETRIEVAL_SPACE), ...config}).rows
      return {rows, categories: p.selection.queries.map((q) => q.category)}
    },
  }
}

/** The engine a plan names: a built-in one by name, otherwise an engine file relative to the plan. */
export function planEngine(ref: string, resolvePath: (p: string) => string, field: string): PlanEngine {
  if (ref === 'kt:retrieval') return ktRetrieval()
  if (ref.startsWith('kt:'))
    throw new InputError(
      field,
      'an engine file, or kt:retrieval (kt:importance has no conversations)',
      describeValue(ref),
    )
  const spec = loadEngineFile(resolvePath(ref))
  const service = spec.evaluate.kind === 'retrieval-service' ? serviceSpecOf(spec) : undefined
  return {
    ref,
    name: spec.name,
    space: spec.space,
    groups: spec.groups,
    linked: simplexSets(spec.space),
    file: spec.file,
    // an http engine's server is the user's: the engine file's folder holds its program, if anywhere
    dir: 'cwd' in spec.evaluate ? spec.evaluate.cwd : dirname(spec.file),
    scoresQuestions: service !== undefined,
    latency: spec.evaluate.kind === 'retrieval-service' ? spec.evaluate.latency : 'measured',
    objectives: () => spec.objectives.map((o) => o.metric),
    properties: async (input) => {
      const conformance = await engineConformance(spec, input)
      return {properties: [], passed: conformance.passed, conformance}
    },
    profileRef: (dir) => engineRefFor(spec, dir),
    async score(dataset, config) {
      if (!service) throw new Error(`${spec.file}: a ${spec.evaluate.kind} engine scores no questions`)
      // latency is not what is scored here: one pass over the questions
      const {rows} = await evaluateService(service, dataset, {...defaultConfig(spec.space), ...config}, {minTimings: 1})
      return {rows, categories: selectScoredQueries(dataset).queries.map((q) => q.category)}
    },
  }
}

function simplexSets(space: ParamSpace): ParameterGroup[] {
  return space.params.flatMap((p) =>
    p.kind === 'simplex' ? [{name: p.name, parameters: p.members.map((m) => m.name)}] : [],
  )
}
