import type {HoldoutReport} from '../search/holdout.js'
import type {FrontTrialRecord} from '../eval/retrieval-analysis.js'
import type {FrontLatencyReport} from '../eval/latency-check.js'
import type {HoldoutValidation} from '../eval/holdout-validation.js'
import type {AblationDelta, EngineAblation} from '../eval/ablation.js'
/**
 * The report schema (report.json, `schema: "kt.report"`, `version` below). Every number in
 * report.md and every chart is read from here. Field names are snake_case; deltas carry `kind`
 * ('absolute' or 'relative') and their unit.
 */
export const REPORT_SCHEMA = 'kt.report'
export const REPORT_VERSION = 1

export const PHASE_NAMES = [
  'properties',
  'synthetic',
  'ablation',
  'search',
  'validation',
  'deploy',
  'visualize',
] as const
export type PhaseName = (typeof PHASE_NAMES)[number]

export type WeightsRecord = {decay: number; surprise: number; relevance: number; habituation: number}

/** A point estimate with a bootstrap percentile interval; estimate null = undefined statistic. */
export interface Interval {
  estimate: number | null
  low: number | null
  high: number | null
  confidence: number
  resamples: number
  undefined_resamples: number
  note?: string
}

export interface DeltaInterval extends Omit<Interval, 'note'> {
  kind: 'absolute'
  unit: string
}

export interface PropertyResult {
  id: string
  description: string
  cases: number
  violations: number
  counterexample: string | null
  seed: number
}

export interface PropertiesResult {
  properties: PropertyResult[]
  /** Every property holds, kt's own and (when present) the engine's conformance checks. */
  passed: boolean
  /** The conformance suite of the engine file the plan names (src/adapters/conformance.ts); absent for kt's own engines. */
  conformance?: EngineConformance
}

export interface EngineConformance {
  engine: string
  file: string
  kind: string
  /** The conversations kt drove through a retrieval service (absent for command and HTTP engines). */
  data?: string
  /** As the engine file declares it: false skips the determinism checks. */
  deterministic: boolean
  checks: PropertyResult[]
  passed: boolean
}

interface SignalAuditRecord {
  signal: string
  /** too-few-rows: fewer rows than the audit needs to flag an exact copy of the label (LEAKAGE_MIN_ROWS); not a pass. */
  verdict: 'ok' | 'leak' | 'constant' | 'too-few-rows'
  dependence: number | null
  spearman: number | null
  reason: string
}

export interface DatasetSummary {
  id: string
  file: string
  role: 'tune' | 'holdout' | 'imported'
  sha256: string
  turns: number
  reference_time: string
  generator: Record<string, string | number> | null
  /** Regenerated from its recorded generator options: identical to the committed file? null if not synthetic. */
  regenerates_identically: boolean | null
  truth: {mean: number; quantiles: {p10: number; p50: number; p90: number}}
  signals: Record<string, {mean: number; min: number; max: number}>
  leakage: SignalAuditRecord[]
}

/** Held-out conversations against the tuning ones (the plan's split): text a tuned engine may have seen. */
export interface ConversationLeakage {
  tuning_conversations: number
  holdout_conversations: number
  holdout_turns: number
  /** Held-out turns whose text (trimmed, lower-cased) is also a turn of the tuning conversations. */
  turns_also_in_tuning: number
  holdout_questions: number
  /** Held-out scored questions with an evidence turn whose text is also in the tuning conversations. */
  questions_with_evidence_in_tuning: number
  verdict: 'ok' | 'leak'
}

/** Phase 2 for the engine a plan names: kt's synthetic conversations with planted evidence, scored through it. */
export interface EngineSyntheticResult {
  engine: string
  generator: {kind: string; seed: number; conversations: number; sessions: number; turns_per_session: number}
  /** sha256 of the generated LoCoMo-shaped JSON. */
  sha256: string
  regenerates_identically: boolean
  conversations: number
  turns: number
  /** The plan's own conversations (retrieval.data): fingerprint and size. */
  data: {file: string; sha256: string; conversations: number; questions: number}
  /** With the plan's split. */
  leakage?: ConversationLeakage
  /** The engine at its defaults on every scored synthetic question; null when kt cannot drive it (note says why). */
  scored: {
    config: 'defaults'
    questions: number
    /** Questions with at least one planted evidence turn in the top k. */
    found: number
    k: number
    metrics: Record<string, number>
    by_category: Array<{category: string; questions: number; found: number} & Record<string, number | string>>
  } | null
  note?: string
}

export interface SyntheticResult {
  datasets: DatasetSummary[]
  /** The engine file the plan names, through kt's synthetic conversations (absent for kt's own engines). */
  engine?: EngineSyntheticResult
  /** Signals with the verdict leak or constant (too-few-rows is reported on its own, not counted here). */
  leaks_found: number
}

export interface AblationConfig {
  id: string
  kind: 'baseline' | 'alone' | 'without' | 'pair'
  weights: WeightsRecord
  pearson: Interval
  spearman: Interval
  /** Spearman of this configuration minus the baseline's, paired bootstrap on the same resamples (absent for the baseline and in older reports). */
  spearman_change?: DeltaInterval
}

interface AblationDataset {
  dataset: string
  configs: AblationConfig[]
}

export interface AblationResult {
  datasets: AblationDataset[]
  headline: string
}

export interface ScoredPoint {
  weights: WeightsRecord
  objective: number | null
  token_budget: number
}

export interface SearchResult {
  dataset: string
  objective: 'spearman' | 'pearson'
  grid: {step: number; points: number; evaluated: number; best: ScoredPoint}
  refine: {step: number; radius: number; points: number; best: ScoredPoint}
  random: {samples: number; best: ScoredPoint}
  /** BOHB (src/search) on the weight simplex with multi-fidelity subsamples of the tuning set. */
  bohb: {
    evaluations: number
    budget_used: number
    budget_unit: string
    study: {file: string; name: string}
    best: ScoredPoint
  }
  /** The acceptance criterion the optimum must meet on the tuning set, and whether it changed the pick. */
  constraint: {
    description: string
    token_budget_max: number | null
    feasible_points: number
    evaluated_points: number
    unconstrained_best: ScoredPoint & {source: string}
    binds: boolean
  }
  optimum: {weights: WeightsRecord; source: string; objective: Interval; token_budget: number}
  baseline: {weights: WeightsRecord; objective: Interval; token_budget: number}
  top: ScoredPoint[]
  /** A null component (and then a null norm) is undefined: a neighbour's objective is undefined (undefined_because says which). */
  smoothness: {
    gradient: Record<string, number | null>
    gradient_norm: number | null
    step: number
    note: string
    undefined_because?: Record<string, string>
  }
  slices: Array<{
    x: string
    y: string
    cells: Array<{x: number; y: number; objective: number | null}>
    aggregation: string
  }>
  landscape: Array<{signal: string; points: Array<{weight: number; objective: number | null}>}>
  front: Array<{weights: WeightsRecord; objective: number; token_budget: number}>
  retrieval?: RetrievalSearchResult
}

interface RetrievalFrontPoint {
  trial: number
  quality: number
  p99_ms: number
}

/** One scored trial of the retrieval study as charted (see frontTrialRecords). */
type RetrievalTrialRecord = FrontTrialRecord

/** Phase 4's retrieval-engine study (present when the plan has a `retrieval` section). */
export interface RetrievalSearchResult {
  data: string
  metric: string
  optimizer: string
  /** In units of the largest fidelity tier, per study. */
  budget: number
  studies: string[]
  /** The SQLite study store in the run folder that holds every trial. */
  store: string
  missing_types: string[]
  /** The engine's default configuration on every query (the largest tier). */
  default_quality: number
  front: {
    reference: {quality: number; p99_ms: number; rule: string}
    points: RetrievalFrontPoint[]
    dominated: RetrievalFrontPoint[]
    hypervolume: number
    hypervolume_share: number
  }
  /**
   * Every successful trial of the all-queries study (and the defaults, trial -1) with its budget,
   * configuration and deterministic metrics: the front chart shows them all, the lower budgets
   * faintly (they score fewer queries, so they cannot be on the front). Absent in older reports.
   */
  trials?: RetrievalTrialRecord[]
  profiles: Array<{
    name: string
    description: string
    trial: number | null
    config: Record<string, number | string | boolean> | null
    metrics: Readonly<Record<string, number>> | null
    on_front: boolean | null
    rationale: string[]
  }>
  /** kt's own engine only: base configuration plus per-query-type overrides. */
  routed?: {
    base: Record<string, number | string | boolean>
    overrides: Record<string, Record<string, number | string | boolean>>
    per_type: Array<{
      type: string
      base_score: number
      best_score: number
      gain: number
      override: boolean
      keys: string[]
      reason: string
    }>
    min_gain: number
    quality?: number | null
  }
  /**
   * Present when the plan tunes an external engine (retrieval section `engine`): its name, its file,
   * and where its latency comes from ("measured": wall time on kt's side, so the front and the
   * profiles differ between runs; "cost_model": the engine's declared deterministic cost).
   */
  engine?: {name: string; file: string; latency: 'measured' | 'cost_model'}
  /** With a split: the front's and profiles' configurations (and the defaults, trial -1) on the held-out conversations. */
  holdout?: HoldoutReport
  /**
   * kt's own engine with a split: every deployable profile (retrieval-<domain>, retrieval-routed)
   * against the defaults on the held-out conversations, paired over questions, with the interval
   * and the non-inferiority verdict Phase 6 writes into the profile.
   */
  validation?: HoldoutValidation
  /** Timings: moved to report.timing.retrieval_latency_check by the runner (never kept here). */
  latency_check?: FrontLatencyReport
}

export interface CriterionVerdict {
  id: string
  description: string
  metric: string
  op: string
  threshold: number
  /** null: the metric is undefined on this dataset (evaluable false, note says why). */
  value: number | null
  /** Never true when the criterion could not be evaluated. */
  passed: boolean
  /** False when the metric is undefined here (e.g. a relative token change from a baseline of 0 tokens): not a pass. Absent in older reports. */
  evaluable?: boolean
  note?: string
  /** For a metric read from an interval (spearman_delta_abs_ci_low): that interval's confidence level, the plan's bootstrap.confidence. */
  confidence?: number
}

export interface ValidationDataset {
  dataset: string
  role: string
  turns: number
  mean_change: {kind: 'absolute'; unit: string; value: number; low: number; high: number; confidence: number}
  share_positive: {value: number; low: number; high: number; confidence: number}
  baseline: {pearson: Interval; spearman: Interval; token_budget: number}
  optimum: {pearson: Interval; spearman: Interval; token_budget: number}
  delta: {pearson: DeltaInterval; spearman: DeltaInterval}
  /** null value (with a note) when the baseline keeps 0 tokens: a relative change from 0 is undefined. */
  token_budget_change: {kind: 'relative'; unit: '%'; value: number | null; note?: string}
  levels: {order: string[]; baseline_counts: number[]; optimum_counts: number[]; transitions: number[][]}
  scatter: Array<{truth: number; baseline: number; optimum: number}>
  verdicts: CriterionVerdict[]
}

export interface ValidationResult {
  optimum: WeightsRecord
  baseline: WeightsRecord
  datasets: ValidationDataset[]
  /** pass: every criterion held on every dataset and the leakage audit flagged nothing; fail: one did not or a signal was flagged; not-validated: nothing to validate on. */
  verdict: 'pass' | 'fail' | 'not-validated'
  /** verdict === 'pass' (a boolean, for CI scripts). */
  passed: boolean
  /** Signals the leakage audit (phase 2) flagged as functions of the label: any makes the verdict a fail. */
  leakage_flagged: Array<{dataset: string; signal: string; dependence: number | null}>
  /** Why the verdict is not a pass although no criterion failed (e.g. nothing to validate on), or why a leak fails it. */
  note?: string
}

export interface DeployResult {
  /** verdict: the profile's validation (the deploy gate refuses all but pass without --force). */
  profiles: Array<{name: string; weights: WeightsRecord; files: string[]; verdict: 'pass' | 'fail' | 'not-validated'}>
  rollout: Array<{stage: number; traffic_percent: number; gate: string}>
  /** Retrieval profiles from the Phase 4 retrieval study: one per domain, and the routed profile. */
  retrieval?: {
    domain: Array<{name: string; trial: number | null; files: string[]; verdict: 'pass' | 'fail' | 'not-validated'}>
    routed: string | null
    routed_files: string[]
    routed_verdict: 'pass' | 'fail' | 'not-validated' | null
    overridden_types: string[]
  }
}

export interface ChartRecord {
  id: string
  title: string
  spec: string
  svg: string
  png: string
}

export interface VisualizeResult {
  charts: ChartRecord[]
  font: string
  /** The engine file the plan names: what its own charts show (absent for kt's own engines). */
  engine?: EngineVisualization
}

/** Phase 7's numbers for the engine a plan names, computed from phase 4's trials. */
export interface EngineVisualization {
  engine: string
  /** Where the study's P99 came from, as the study recorded it, and that in words (the charts' label). */
  latency: 'measured' | 'cost_model'
  latency_label: string
  /** The numeric parameters the slices chart shows. */
  numeric: string[]
  /** fANOVA importance of the parameters for each of the engine file's objectives (src/search/parameter-importance.ts). */
  importance: Array<{
    objective: string
    method: string
    trials_used: number
    params: Array<{param: string; importance: number}>
    note: string | null
  }>
}

export interface PhaseResults {
  properties: PropertiesResult
  synthetic: SyntheticResult
  ablation: AblationResult
  search: SearchResult
  validation: ValidationResult
  deploy: DeployResult
  visualize: VisualizeResult
}

/** The search and validation re-run for other seeds (kt run --seeds): how far the optimum moves, and whether the verdict holds on each. */
export interface SeedRobustness {
  seeds: number[]
  /** The run's own validation verdict (its seed), which each seed's verdict is compared with. */
  run_verdict: ValidationResult['verdict']
  per_seed: Array<{
    seed: number
    /** The importance weights, or an engine's tuned numeric parameters. */
    optimum: Record<string, number>
    objective: number | null
    validation_passed: boolean
    verdict: ValidationResult['verdict']
    failed: string[]
    note?: string
  }>
  /** Per weight: min, max, range, mean and sample sd of the optimum over the seeds (sd null for one seed: undefined). */
  spread: Record<string, {min: number; max: number; range: number; mean: number; sd: number | null}>
  /** Seeds whose validation verdict is the run's own (run_verdict), pass or not. */
  verdict_held: number
  verdict_holds_on_every_seed: boolean
}

/**
 * A `kt search` study on its own (report.json in its --out folder; no phases): any objective, an
 * engine file's or kt's, its front over the objectives it was tuned on and its profiles, with the
 * held-out check when it had a split.
 */
export interface StudyReportSection {
  name: string
  /** The study's objective name: engine, retrieval, or a benchmark function. */
  objective: string
  /** An engine file's study: its name, its file (relative to the report's folder) and where its latency comes from. */
  engine?: {name: string; file: string; latency: 'measured' | 'cost_model' | null}
  /** The data file's name (never a path). */
  data?: string
  optimizer: string
  seed: number
  trials: {finished: number; ok: number; failed: number}
  best: {trial: number; loss: number | null; budget: number; config: Record<string, number | string | boolean>} | null
  /** The Pareto front over the study's objectives (null with one objective). */
  front: {
    objectives: Array<{metric: string; direction: 'maximize' | 'minimize'; reference: number | null; rule: string}>
    points: Array<{trial: number; values: number[]}>
    dominated: number
    hypervolume: number | null
    hypervolume_share: number | null
  } | null
  profiles: Array<{name: string; description: string; trial: number | null; rationale: string[]}>
  holdout?: HoldoutReport
  validation?: HoldoutValidation
}

/** One configuration against the plan's reference on the held-out questions, overall and per category. */
export interface EngineComparison {
  name: string
  /** What it is compared with: "defaults" or the reference profile's file. */
  against: string
  queries: number
  reference_quality: number
  delta: AblationDelta
  categories: Array<{category: string; queries: number; reference_quality: number; delta: AblationDelta}>
  /** The plan's acceptance rule on the overall interval. */
  passed: boolean
}

/** Phase 5 of a format-2 plan: the tuned and the minimal profile against the reference on the held-out questions. */
export interface EngineValidation {
  split: string
  metric: string
  confidence: number
  resamples: number
  rule: string
  tuned: EngineComparison
  minimal: EngineComparison
  /** The tuned profile's verdict under the plan's acceptance rule: the run's verdict. */
  verdict: 'pass' | 'fail'
}

/** What a format-2 plan's run found for its engine (phases 3-6); absent for the importance study. */
export interface EngineReport {
  engine: {ref: string; name: string; latency: 'cost_model' | 'measured'}
  data: string
  metric: string
  /**
   * The ablated (tuned) profile: the study's best trial on the tuning conversations, or the profile
   * file the plan's ablation.profile names (trial and tuning quality null, `profile` its file).
   */
  tuned?: {
    trial: number | null
    config: Record<string, number | string | boolean>
    tuning_quality: number | null
    profile?: string
  }
  /** Phase 3 (each part absent when its phase did not run: kt phase N). */
  ablation?: EngineAblation
  /** Phase 4. */
  search?: RetrievalSearchResult
  /** Phase 5. */
  validation?: EngineValidation
  /** Phase 6: the tuned and the minimal profile, and the engine's own domain profiles. */
  deploy?: {profiles: Array<{name: string; files: string[]; verdict: string}>}
  /** The phases that do not apply to this engine, with the reason (a command or http engine scores no questions). */
  not_applicable?: Partial<Record<PhaseName, string>>
}

export interface Report {
  schema: typeof REPORT_SCHEMA
  version: typeof REPORT_VERSION
  run: {
    id: string
    seed: number
    plan: {name: string; file: string; sha256_12: string}
    phases_requested: PhaseName[]
    phases_run: PhaseName[]
    kt_version: string
    /**
     * False when a number above the timing section was measured on the clock (an external engine
     * with evaluate.latency "measured"; src/report/reproducibility.ts): the same seed can then give
     * a different report. Absent in reports written before this field (read as true).
     */
    reproducible?: boolean
    /** Why the run is not reproducible (null when it is). */
    reproducible_reason?: string | null
    /** About the inputs, e.g. held-out turns whose text is also in the tuning set (absent when there is none). */
    warnings?: string[]
  }
  phases: Partial<PhaseResults>
  /** A `kt search` study's report (phases then empty). */
  study?: StudyReportSection
  /** Present when the run re-checked its optimum and verdict on other seeds (kt run --seeds). */
  seeds?: SeedRobustness
  /** A format-2 plan's engine: its ablation, search, validation and profiles. */
  engine?: EngineReport
  /**
   * sha256 of the report's content (schema, version, run and phases as written; see
   * reportContentHash): `kt report` re-renders only a report.json whose content is what kt wrote.
   */
  content_sha256?: string
  /** Wall-clock timings: the one part of the report that differs between identical runs. */
  timing: {
    total_ms: number
    phases_ms: Partial<Record<PhaseName, number>>
    /** The retrieval front's cost-model P99 beside the same configurations measured on the clock, and the model's error. */
    retrieval_latency_check?: FrontLatencyReport
  }
}
