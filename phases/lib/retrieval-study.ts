import {join} from 'node:path'
import {runRoutedSweeps} from '../../src/study/sweeps.js'
import {retrievalObjectives} from '../../src/search/retrieval.js'
import {qualityAtFullBudget} from '../../src/search/routed.js'
import {RETRIEVAL_SPACE} from '../../src/engine/retrieval/space.js'
import {defaultConfig} from '../../src/space/space.js'
import type {Plan} from '../plan.js'
import type {PhaseContext} from './context.js'
import {displayPath} from './context.js'
import type {RetrievalSearchResult} from '../report-types.js'

/** Study names in the run's store start with this. */
const STUDY_PREFIX = 'retrieval'

/**
 * The retrieval engine tuned on a memory dataset's fidelity tiers: one bi-objective study over all
 * queries (quality vs P99 latency) and one per query type, bundled into a routed profile; the
 * Pareto front with its hypervolume and the domain profiles chosen from it.
 */
export async function retrievalStudy(ctx: PhaseContext, settings: NonNullable<Plan['retrieval']>, storage: string): Promise<RetrievalSearchResult> {
  const data = ctx.plan.resolvePath(settings.data)
  const lines: string[] = []
  const result = await runRoutedSweeps({
    data, metric: settings.metric, storage, studyPrefix: STUDY_PREFIX, optimizer: settings.optimizer, seed: ctx.seed, maxBudget: settings.budget,
    log: (line) => {
      lines.push(line)
      ctx.progress(`phase 4: ${line}`)
    },
  })
  const analysis = result.analysis
  if (!analysis) throw new Error('the retrieval study produced no bi-objective trials')
  const {objectiveFor} = retrievalObjectives({data, metric: settings.metric})
  const overall = objectiveFor(undefined).instance
  const defaults = defaultConfig(RETRIEVAL_SPACE)
  const point = (p: {trialId: number; quality: number; latencyMs: number}) => ({trial: p.trialId, quality: p.quality, p99_ms: p.latencyMs})
  return {
    data: displayPath(data),
    metric: settings.metric,
    optimizer: settings.optimizer,
    budget: settings.budget,
    studies: result.studies,
    missing_types: result.missing_types,
    default_quality: await qualityAtFullBudget(overall, defaults, ctx.seed, 'defaults'),
    front: {
      reference: {quality: analysis.front.reference.quality, p99_ms: analysis.front.reference.latencyMs, rule: analysis.front.reference.rule},
      points: analysis.front.front.map(point),
      dominated: analysis.front.dominated.map(point),
      hypervolume: analysis.front.hypervolume,
      hypervolume_share: analysis.front.hypervolumeShare,
    },
    profiles: analysis.profiles.map((p) => ({
      name: p.profile, description: p.description, trial: p.trialId, config: p.config, metrics: p.metrics, on_front: p.onFront, rationale: p.rationale,
    })),
    routed: {base: result.routed.base, overrides: result.routed.overrides, per_type: result.routed.per_type, min_gain: result.routed.min_gain},
  }
}

