/**
 * The records a tenant's calls take and return (library.ts): what the CLI's --json and the HTTP
 * service print, snake_case keys, so one shape is documented once.
 */
import type {Config} from '../space/types.js'
import type {PriorOrigin, Verdict} from './tenant.js'

export interface ChooseRequest {
  /**
   * Your id for the query (printable ASCII, at most 128 characters, not a bare integer); default
   * kt's own (1, 2, ...). Choosing an id again while the query is remembered (the label window,
   * an hour) returns the same configuration: a retry after a lost answer is safe.
   */
  query_id?: string
  /** The query's type (the retrieval classifier's: entity_lookup, temporal, multi_hop, simple_factual, exploratory); per-type tenants play that type's bandits. */
  type?: string
  /** Event time, ms since the epoch (default now). */
  now?: number
}

export interface Choice {
  /** The id to name in feedback: yours if you gave one, else kt's. */
  query_id: string
  /** kt's own number for the query. */
  kt_query_id: number
  type: string | null
  /** Arm index per bandit dimension (0-based). */
  arms: number[]
  /** The configuration to run the query with (every parameter of the space). */
  config: Config
  /** Present (true) when the query_id was chosen before: the recorded configuration is returned again, nothing new is logged. */
  repeated?: true
}

export interface FeedbackRequest {
  query_id: string | number
  /** Implicit feedback: a node retrieved for the query was used. */
  used?: boolean
  /** Explicit feedback: graded relevance 0..levels-1. */
  label?: number
  now?: number
}

export interface FeedbackOutcome {
  query_id: string
  /** applied, or duplicate / late (counted and ignored: the query was already settled). */
  verdict: Verdict
}

export interface TenantStatus {
  tenant: string
  queries: number
  pending: number
  /** The learner's Counters, snake_case (bad_label, not_accepted, ...). */
  counters: Record<string, number>
  /** What opening found (replayed, rebuilt, torn_bytes, journaled). */
  open: Record<string, unknown>
  /** The tenant's BanditSettings, snake_case. */
  settings: Record<string, unknown>
  dimensions: Array<{key: string; best_bin: number; best_value: unknown; best_mean_reward: number; evidence: number[]}>
  /** Per-type tenants: the queries each type's bandits have played and their best bins. */
  types?: Record<string, {queries: number; best_bins: number[]}>
  /** The deployed profile behind the prior, as the deploy gate judged it (forced: with its reason), and a routed profile's overrides; null: the space's defaults or a configuration given as such. */
  prior: (PriorOrigin & {overrides: Record<string, Config>}) | null
}
