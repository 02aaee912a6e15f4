/**
 * kt's retrieval engine's domain profiles (issue 4): the metric and parameter names of its
 * objective (src/eval/retrieval-objective.ts) and space, and the three rules. For the retrieval
 * objective p99_ms is the cost-model estimate (src/engine/retrieval/cost.ts), so latency
 * constraints such as P99 <= 50 ms read the deterministic estimate, not a timing. The profile
 * machinery itself (src/search/profiles.ts) knows no engine.
 */
import type {MetricNames, ProfileRule} from '../search/profiles.js'

/** Metric names of kt's retrieval objective (src/eval/retrieval-objective.ts) and the retrieval space. */
export const RETRIEVAL_METRIC_NAMES: MetricNames = {
  quality: 'quality',
  latency: 'p99_ms',
  entity: 'quality.entity_lookup',
  temporalParam: 'edge.temporal',
}

/** The priorities of issue 4. */
const FINANCIAL_P99_MS = 50
const HIGH_THROUGHPUT_QUALITY_SHARE = 0.8
const CODING_P99_MS = 20
/** Quality within this of the best counts as a near-tie for a favoured parameter (one query in 200 at recall). */
const FAVOUR_TOLERANCE = 0.005

export function domainRules(names: MetricNames = RETRIEVAL_METRIC_NAMES): ProfileRule[] {
  return [
    {
      name: 'financial-compliance',
      description: `accuracy first, P99 <= ${FINANCIAL_P99_MS} ms, temporal weight favoured`,
      primary: {metric: names.quality, sense: 'max', label: 'accuracy'},
      constraints: [{metric: names.latency, op: '<=', value: FINANCIAL_P99_MS, label: `P99 <= ${FINANCIAL_P99_MS} ms`}],
      favour: {
        param: names.temporalParam,
        direction: 'high',
        tolerance: FAVOUR_TOLERANCE,
        label: 'temporal weight favoured',
      },
    },
    {
      name: 'high-throughput',
      description: `latency first, accuracy >= ${HIGH_THROUGHPUT_QUALITY_SHARE} of the best`,
      primary: {metric: names.latency, sense: 'min', label: 'P99 latency'},
      constraints: [
        {
          metric: names.quality,
          op: '>=',
          fractionOfBest: HIGH_THROUGHPUT_QUALITY_SHARE,
          label: `accuracy >= ${HIGH_THROUGHPUT_QUALITY_SHARE} x best`,
        },
      ],
    },
    {
      name: 'coding-assistant',
      description: `entity lookup first, P99 <= ${CODING_P99_MS} ms`,
      primary: {metric: names.entity, sense: 'max', label: 'entity-lookup accuracy'},
      constraints: [{metric: names.latency, op: '<=', value: CODING_P99_MS, label: `P99 <= ${CODING_P99_MS} ms`}],
    },
  ]
}

/** The retrieval space's switch for per-type routing (src/engine/retrieval/space.ts). */
export const RETRIEVAL_ROUTER_PARAM = 'router.enabled'
