/**
 * Defaults the rerank commands declare in their flags, kept apart from the heavy modules so a
 * command's flag table loads without them.
 */

/** Default reranker registry folder, relative to the working directory (reports/ is git-ignored). */
export const DEFAULT_REGISTRY = 'reports/reranker'

/**
 * Early-stopping patience when a validation split is given: trees without a validation NDCG@10
 * gain before training stops and keeps the best prefix. At learning rate 0.1, 20 trees move the
 * scores by about two full steps, enough to cross a plateau of noise; LightGBM and XGBoost leave
 * it to the user, and kt stops by default because an unregularised model memorises real logs
 * (training NDCG@10 1.000 on LoCoMo engine logs).
 */
export const DEFAULT_EARLY_STOP = 20

/**
 * The deploy gate's non-inferiority margin, absolute NDCG@10: a candidate is deployed only if the
 * lower bound of the paired bootstrap interval of (candidate - baseline) on held-out data is at
 * least -margin, against the engine's own order and against the current model. The same rule and
 * value as the retrieval profiles' holdout-noninferior verdict (NONINFERIORITY_MARGIN = 0.01 in
 * src/eval/holdout-validation.ts: "a profile may not be shown to lose more than one question in a
 * hundred"; a product choice, small enough to go unnoticed, large enough that a reranker that
 * truly equals its baseline can pass on a few hundred held-out queries). Kept here as its own
 * name because src/rank may not import src/eval (eval imports rank); a test checks they agree.
 */
export const RERANKER_NONINFERIORITY_MARGIN = 0.01

/**
 * Below this many judged held-out queries the gate's percentile bootstrap interval is rough (it
 * undercovers: src/stats/bootstrap.ts, bootstrapCI, "treat intervals from fewer than ~20 rows as
 * rough"), so the deploy output says so beside the verdict.
 */
export const GATE_ROUGH_BELOW_QUERIES = 20
