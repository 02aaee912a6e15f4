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
