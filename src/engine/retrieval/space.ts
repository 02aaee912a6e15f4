import type {Config, ParamSpace} from '../../space/types.js'
import {validateConfig} from '../../space/space.js'
import {EDGE_TYPES} from './graph.js'
import type {FusionWeights} from './fusion.js'

/**
 * The retrieval engine's parameters: the ONE table that search, bandits, profiles, env loading
 * and docs read. All are query-time parameters (no index rebuild when they change).
 *
 * Defaults: the best of 500 random configurations (src/search RandomOptimizer, seed 9) by the
 * mean of overall and multi-hop evidence recall@10 on LoCoMo conversation conv-26 alone, rounded
 * to three significant digits; conv-41 was held out to check that they transfer (recall@10 .719
 * there against .637 for plain BM25). Literature values (BM25 k1 1.2 / b .75, ACT-R d .5, PageRank
 * teleport .15) are in the descriptions; the data preferred little length normalisation, strong
 * lateral inhibition and a speaker prior.
 *
 * `online: true` marks what the per-tenant bandits tune by default: eleven parameters that
 * plausibly differ between query mixes (text matching, entity seeding, how far activation spreads,
 * temporal edges, recency, and the fusion weights; the fusion simplex is one parameter with three
 * bandit dimensions, so 13 dimensions). The rest stay at the deployed profile's values. Eleven is
 * the size the online issue's sampling budget (5 µs per query) is stated for.
 */
export const RETRIEVAL_SPACE: ParamSpace = {
  id: 'retrieval',
  params: [
    {
      kind: 'float',
      name: 'bm25.k1',
      env: 'KT_BM25_K1',
      low: 0.2,
      high: 3,
      scale: 'linear',
      default: 1.61,
      online: true,
      description: 'BM25 term-frequency saturation k1 (Robertson & Zaragoza 2009 suggest 1.2-2.0).',
    },
    {
      kind: 'float',
      name: 'bm25.b',
      env: 'KT_BM25_B',
      low: 0,
      high: 1,
      scale: 'linear',
      default: 0.111,
      online: true,
      description: 'BM25 document-length normalisation b (0 none, 1 full; 0.75 is the usual default).',
    },
    {
      kind: 'int',
      name: 'seeds.count',
      env: 'KT_SEEDS_COUNT',
      low: 1,
      high: 50,
      scale: 'log',
      default: 9,
      online: true,
      description: 'How many top text-matching turns seed the spreading activation and PageRank.',
    },
    {
      kind: 'float',
      name: 'seeds.entity',
      env: 'KT_SEEDS_ENTITY',
      low: 0,
      high: 1,
      scale: 'linear',
      default: 0.173,
      online: true,
      description:
        'Activation given to entity nodes the query names (scaled by entity rarity); 0 turns entity seeding off.',
    },
    {
      kind: 'float',
      name: 'spread.retention',
      env: 'KT_SPREAD_RETENTION',
      low: 0.05,
      high: 0.95,
      scale: 'linear',
      default: 0.663,
      online: true,
      description: 'Share of activation a node passes on per hop.',
    },
    {
      kind: 'int',
      name: 'spread.max_depth',
      env: 'KT_SPREAD_MAX_DEPTH',
      low: 1,
      high: 6,
      scale: 'linear',
      default: 3,
      online: true,
      description: 'Maximum number of hops activation travels from a seed.',
    },
    {
      kind: 'int',
      name: 'spread.fan_out',
      env: 'KT_SPREAD_FAN_OUT',
      low: 2,
      high: 64,
      scale: 'log',
      default: 11,
      description: 'A firing node passes activation along at most this many of its strongest edges.',
    },
    {
      kind: 'float',
      name: 'spread.threshold',
      env: 'KT_SPREAD_THRESHOLD',
      low: 0.001,
      high: 0.5,
      scale: 'log',
      default: 0.00238,
      description: 'Firing threshold: a node spreads only if it received at least this much activation.',
    },
    {
      kind: 'float',
      name: 'spread.inhibition',
      env: 'KT_SPREAD_INHIBITION',
      low: 0,
      high: 1,
      scale: 'linear',
      default: 0.872,
      online: true,
      description: 'Lateral inhibition strength: turns below the mean of the leading turns lose this share of the gap.',
    },
    {
      kind: 'float',
      name: 'edge.episodic',
      env: 'KT_EDGE_EPISODIC',
      low: 0,
      high: 1,
      scale: 'linear',
      default: 0.712,
      description: 'Weight of episodic edges (a turn and the next turn of its session).',
    },
    {
      kind: 'float',
      name: 'edge.semantic',
      env: 'KT_EDGE_SEMANTIC',
      low: 0,
      high: 1,
      scale: 'linear',
      default: 0.224,
      description: 'Weight of semantic edges (turns sharing an entity and close in content).',
    },
    {
      kind: 'float',
      name: 'edge.temporal',
      env: 'KT_EDGE_TEMPORAL',
      low: 0,
      high: 1,
      scale: 'linear',
      default: 0.629,
      online: true,
      description: 'Weight of temporal edges (sessions near each other in time).',
    },
    {
      kind: 'float',
      name: 'edge.hierarchical',
      env: 'KT_EDGE_HIERARCHICAL',
      low: 0,
      high: 1,
      scale: 'linear',
      default: 0.127,
      description: 'Weight of hierarchical edges (session to turn, entity to mention).',
    },
    {
      kind: 'float',
      name: 'edge.associative',
      env: 'KT_EDGE_ASSOCIATIVE',
      low: 0,
      high: 1,
      scale: 'linear',
      default: 0.179,
      description: 'Weight of associative edges (entities that co-occur).',
    },
    {
      kind: 'float',
      name: 'actr.decay',
      env: 'KT_ACTR_DECAY',
      low: 0.1,
      high: 1,
      scale: 'linear',
      default: 0.551,
      online: true,
      description: 'ACT-R base-level decay d (0.5 in ACT-R, Anderson & Lebiere 1998).',
    },
    {
      kind: 'float',
      name: 'actr.alpha',
      env: 'KT_ACTR_ALPHA',
      low: 0,
      high: 1,
      scale: 'linear',
      default: 0.049,
      online: true,
      description: 'Graph score = alpha x structural relevance + (1 - alpha) x ACT-R recency, over activated turns.',
    },
    {
      kind: 'categorical',
      name: 'ppr.enabled',
      env: 'KT_PPR_ENABLED',
      choices: [false, true],
      default: false,
      description: 'Whether personalized PageRank joins spreading activation in the graph score.',
    },
    {
      kind: 'float',
      name: 'ppr.teleport',
      env: 'KT_PPR_TELEPORT',
      low: 0.05,
      high: 0.6,
      scale: 'linear',
      default: 0.111,
      description: 'PageRank teleport probability back to the seeds (0.15 = damping 0.85, Page et al. 1999).',
    },
    {
      kind: 'int',
      name: 'ppr.iterations',
      env: 'KT_PPR_ITERATIONS',
      low: 1,
      high: 30,
      scale: 'linear',
      default: 18,
      description: 'Power iterations of personalized PageRank.',
    },
    {
      kind: 'float',
      name: 'ppr.mix',
      env: 'KT_PPR_MIX',
      low: 0,
      high: 1,
      scale: 'linear',
      default: 0.404,
      description:
        'Share of PageRank in the structural graph score when PageRank is on (the rest is spreading activation).',
    },
    {
      kind: 'simplex',
      name: 'fusion',
      online: true,
      description:
        'Fusion weights of the max-normalised BM25, vector and graph scores; they sum to 1, each at least 0.05.',
      floor: 0.05,
      members: [
        {name: 'fusion.bm25', env: 'KT_FUSION_BM25', default: 0.785, description: 'Weight of the BM25 score.'},
        {
          name: 'fusion.vector',
          env: 'KT_FUSION_VECTOR',
          default: 0.094,
          description: 'Weight of the vector similarity.',
        },
        {
          name: 'fusion.graph',
          env: 'KT_FUSION_GRAPH',
          default: 0.121,
          description: 'Weight of the graph score (activation, PageRank, recency).',
        },
      ],
    },
    {
      kind: 'float',
      name: 'speaker.boost',
      env: 'KT_SPEAKER_BOOST',
      low: 0,
      high: 1,
      scale: 'linear',
      default: 0.649,
      description:
        'Speaker prior: turns spoken by a speaker the query names get their fused score multiplied by 1 + this.',
    },
    {
      kind: 'categorical',
      name: 'router.enabled',
      env: 'KT_ROUTER_ENABLED',
      choices: [false, true],
      default: false,
      description: 'Whether the query classifier routes each query to its type-specific overrides.',
    },
  ],
}

/** Parameters resolved into a typed record for the hot path. */
export interface RetrievalParams {
  readonly k1: number
  readonly b: number
  readonly seedCount: number
  readonly entitySeed: number
  readonly retention: number
  readonly maxDepth: number
  readonly fanOut: number
  readonly threshold: number
  readonly inhibition: number
  /** Indexed like EDGE_TYPES. */
  readonly edgeWeights: Float64Array
  readonly decay: number
  readonly alpha: number
  readonly pprEnabled: boolean
  readonly teleport: number
  readonly pprIterations: number
  readonly pprMix: number
  readonly fusion: FusionWeights
  readonly speakerBoost: number
  readonly routerEnabled: boolean
}

/** Typed parameters from a (validated) configuration. */
export function resolveParams(config: Config): RetrievalParams {
  const n = (key: string): number => config[key] as number
  return {
    k1: n('bm25.k1'),
    b: n('bm25.b'),
    seedCount: n('seeds.count'),
    entitySeed: n('seeds.entity'),
    retention: n('spread.retention'),
    maxDepth: n('spread.max_depth'),
    fanOut: n('spread.fan_out'),
    threshold: n('spread.threshold'),
    inhibition: n('spread.inhibition'),
    edgeWeights: Float64Array.from(EDGE_TYPES.map((t) => n(`edge.${t}`))),
    decay: n('actr.decay'),
    alpha: n('actr.alpha'),
    pprEnabled: config['ppr.enabled'] === true,
    teleport: n('ppr.teleport'),
    pprIterations: n('ppr.iterations'),
    pprMix: n('ppr.mix'),
    fusion: {bm25: n('fusion.bm25'), vector: n('fusion.vector'), graph: n('fusion.graph')},
    speakerBoost: n('speaker.boost'),
    routerEnabled: config['router.enabled'] === true,
  }
}

/** Validates a retrieval configuration (throws a one-line InputError naming `where`). */
export function validateRetrievalConfig(config: Config, where: string): void {
  validateConfig(RETRIEVAL_SPACE, config, where)
}

/**
 * The twelve per-candidate features a learned reranker trains on (src/rank), in column order.
 * Rows come from `candidateFeatures` (features.ts).
 */
export const CANDIDATE_FEATURES = [
  'bm25',
  'vector',
  'activation',
  'base_level_boost',
  'inhibition_penalty',
  'hops',
  'access_count',
  'age_days',
  'last_access_days',
  'content_tier',
  'path_edge_types',
  'fan_in',
] as const
