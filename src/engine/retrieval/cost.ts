/**
 * A deterministic latency model for the retrieval engine. Wall-clock latency changes from run to
 * run (and with the machine's load), so a search that ranked configurations by measured P99
 * would not repeat. Instead each query counts its work (RetrievalEngine.lastWork: the inner-loop
 * steps of the query) and its latency is estimated as
 *
 *   estimatedLatencyMs(work) = work * NS_PER_WORK_UNIT / 1e6 + FIXED_QUERY_OVERHEAD_MS.
 *
 * The two constants are a least-squares fit of measured wall time against counted work on one
 * machine (see below); `kt bench latency-model` re-measures the fit on any machine and prints the
 * ratio to the committed constants. The estimate ranks configurations by how much they scan; its
 * absolute milliseconds hold for the machine of the fit.
 */

/** Inner-loop steps of one query, by stage. */
export interface QueryWork {
  /** BM25 postings scanned (one per query term occurrence in a document). */
  readonly bm25Postings: number
  /** Vector-index postings scanned (documents compared, for a brute-force index). */
  readonly vectorPostings: number
  /** Edges scanned by spreading activation (the fan-out edges of every node that fired). */
  readonly activationEdges: number
  /** Edge visits of personalized PageRank over all its iterations (0 when it is off). */
  readonly pprEdges: number
  /** Candidates whose fused score was computed. */
  readonly candidatesFused: number
}

/** The work count: every inner-loop step costs one unit. */
export function totalWork(work: QueryWork): number {
  return work.bm25Postings + work.vectorPostings + work.activationEdges + work.pprEdges + work.candidatesFused
}

/*
 * Source of both constants: a least-squares fit by `kt bench latency-model` on a quiet machine;
 * the sitting, its load and the model's error are in docs/measurements.md ("Retrieval latency cost model").
 */
/** Nanoseconds of wall time per unit of work (the slope of the fit above). */
export const NS_PER_WORK_UNIT = 5.31
/** Milliseconds a query costs whatever it scans (the intercept of the fit above). */
export const FIXED_QUERY_OVERHEAD_MS = 0.0425

/** NS_PER_WORK_UNIT is in nanoseconds; latencies are in milliseconds. */
const NS_PER_MS = 1e6

/** Estimated wall-clock latency of a query that did `work` units of work, in milliseconds. */
export function estimatedLatencyMs(work: number): number {
  return (work * NS_PER_WORK_UNIT) / NS_PER_MS + FIXED_QUERY_OVERHEAD_MS
}

/** A least-squares line ms = work * nsPerWorkUnit / 1e6 + fixedOverheadMs, with its R^2. */
export interface LatencyFit {
  readonly nsPerWorkUnit: number
  readonly fixedOverheadMs: number
  /** Coefficient of determination, 1 - SS_res / SS_tot (null when work does not vary). */
  readonly rSquared: number | null
  readonly points: number
}

/** Ordinary least-squares fit of wall time (ms) against work (units); null with fewer than two distinct work values. */
export function fitLatencyModel(work: ArrayLike<number>, ms: ArrayLike<number>): LatencyFit | null {
  const n = work.length
  if (n !== ms.length) throw new RangeError(`fitLatencyModel: ${n} work values but ${ms.length} timings`)
  if (n < 2) return null
  let mx = 0
  let my = 0
  for (let i = 0; i < n; i++) {
    mx += work[i]
    my += ms[i]
  }
  mx /= n
  my /= n
  let sxx = 0
  let sxy = 0
  let syy = 0
  for (let i = 0; i < n; i++) {
    const dx = work[i] - mx
    const dy = ms[i] - my
    sxx += dx * dx
    sxy += dx * dy
    syy += dy * dy
  }
  if (!(sxx > 0)) return null
  const slope = sxy / sxx
  const intercept = my - slope * mx
  // SS_res = SS_tot - slope * S_xy for the least-squares line.
  const rSquared = syy > 0 ? 1 - (syy - slope * sxy) / syy : null
  return {nsPerWorkUnit: slope * NS_PER_MS, fixedOverheadMs: intercept, rSquared, points: n}
}
