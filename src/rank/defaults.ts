/**
 * Defaults the rerank commands declare in their flags, kept apart from the heavy modules so a
 * command's flag table loads without them.
 */

/** Default reranker registry folder, relative to the working directory (reports/ is git-ignored). */
export const DEFAULT_REGISTRY = 'reports/reranker'
