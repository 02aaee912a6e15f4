import type {Config} from '../../space/types.js'

/**
 * A rule-based query classifier (no model call): five query types decided from the query's
 * words and lookups in the conversation's entity index. Rules are checked in the order below;
 * the first that fires decides.
 1. temporal: asks for a time ("when", "what year", "how long ago"); a date or "after" used
 *    only as a constraint ("what did X buy in May") does not make a query temporal;
 * 2. multi-hop: names two or more known entities, or asks for a comparison or an inference
 *    ("both", "in common", "why", "would", "likely");
 * 3. entity lookup: asks for an entity ("who", "which", "whose", "name");
 * 4. exploratory: asks for a kind, list or description ("what kind of", "what activities",
 *    "describe", a plural noun after "what", or a present perfect "what has X done", which
 *    gathers several occasions);
 * 5. simple factual: everything else ("what did X buy?").
 */
export const QUERY_TYPES = ['entity_lookup', 'temporal', 'multi_hop', 'simple_factual', 'exploratory'] as const
export type QueryType = (typeof QUERY_TYPES)[number]

const TEMPORAL_FIRST = new Set(['when'])
const TEMPORAL_PHRASES = [
  'what year',
  'which year',
  'what month',
  'which month',
  'what date',
  'what day',
  'what time of',
  'how long ago',
  'how many years ago',
  'since when',
  'what week',
]
const MULTI_HOP_WORDS = new Set([
  'both',
  'common',
  'compare',
  'similar',
  'why',
  'would',
  'likely',
  'might',
  'because',
  'reason',
])
const MULTI_HOP_PHRASES = ['relationship between', 'in common']
const ENTITY_FIRST = new Set(['who', 'whom', 'whose', 'which'])
const ENTITY_WORDS = new Set(['name', 'named', 'called', 'who'])
const EXPLORATORY_PHRASES = [
  'what kind',
  'what kinds',
  'what type',
  'what types',
  'what sort',
  'tell me about',
  'what are some',
  'what else',
]
const EXPLORATORY_WORDS = new Set([
  'describe',
  'activities',
  'hobbies',
  'interests',
  'things',
  'ways',
  'events',
  'plans',
  'kinds',
  'types',
  'feel',
  'feelings',
])
/** Words after "what" that end in s but are not plural nouns. */
const NOT_PLURAL = new Set(['is', 'was', 'has', 'does', 'this', 'his', 'its', 'as', 'us'])
/** Present perfect after a wh-word ("what has", "where have"): asks about every occasion. */
const PERFECT = new Set(['has', 'have'])
const WH_WORDS = new Set(['what', 'where'])
const QUERY_WORD = /[a-z0-9]+/g

/** Entity index lookups the classifier needs: is this lower-case word a known name? */
export interface EntityLookup {
  isName(word: string): boolean
}

export function classifyQuery(query: string, entities: EntityLookup): QueryType {
  const lower = query.toLowerCase().replace(/['\u2019]s\b/g, '')
  const ws: string[] = lower.match(QUERY_WORD) ?? []
  if (ws.length === 0) return 'simple_factual'
  if (TEMPORAL_FIRST.has(ws[0]) || hasPhrase(lower, TEMPORAL_PHRASES)) return 'temporal'
  let names = 0
  let lastName = ''
  for (const w of ws) {
    if (w !== lastName && entities.isName(w)) {
      names++
      lastName = w
    }
  }
  if (names >= 2 || hasAny(ws, MULTI_HOP_WORDS) || hasPhrase(lower, MULTI_HOP_PHRASES)) return 'multi_hop'
  if (ENTITY_FIRST.has(ws[0]) || hasAny(ws, ENTITY_WORDS)) return 'entity_lookup'
  if (hasPhrase(lower, EXPLORATORY_PHRASES) || hasAny(ws, EXPLORATORY_WORDS)) return 'exploratory'
  const afterWhat = ws[0] === 'what' && ws.length > 1 ? ws[1] : ''
  if (afterWhat.length > 3 && afterWhat.endsWith('s') && !afterWhat.endsWith('ss') && !NOT_PLURAL.has(afterWhat))
    return 'exploratory'
  if (WH_WORDS.has(ws[0]) && ws.length > 1 && PERFECT.has(ws[1])) return 'exploratory'
  return 'simple_factual'
}

function hasAny(ws: readonly string[], set: ReadonlySet<string>): boolean {
  for (const w of ws) if (set.has(w)) return true
  return false
}

function hasPhrase(text: string, phrases: readonly string[]): boolean {
  for (const p of phrases) if (text.includes(p)) return true
  return false
}

/** Per-type parameter overrides: a routed configuration is the base configuration plus these. */
export type RoutedOverrides = Partial<Record<QueryType, Config>>

/**
 * Default overrides: hand-set starting points that change a few knobs of whatever base
 * configuration is in use (tuning per type refines them): temporal queries lean on temporal and
 * episodic edges and on recency; multi-hop and exploratory queries seed wider and spread
 * further; entity lookups seed the named entities harder.
 */
export const DEFAULT_OVERRIDES: RoutedOverrides = {
  temporal: {'edge.temporal': 0.8, 'edge.episodic': 0.8},
  multi_hop: {'spread.max_depth': 4, 'seeds.count': 15},
  entity_lookup: {'seeds.entity': 0.5, 'edge.associative': 0.4},
  exploratory: {'seeds.count': 15, 'spread.max_depth': 4},
}

/** The configuration used for a query of the given type. */
export function routedConfig(base: Config, type: QueryType, overrides: RoutedOverrides = DEFAULT_OVERRIDES): Config {
  const o = overrides[type]
  return o ? {...base, ...o} : base
}
