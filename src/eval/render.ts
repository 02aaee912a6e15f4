import {QUERY_TYPES} from '../engine/retrieval/classifier.js'
import type {EvalOutput} from './harness.js'
import type {RerankedOutput} from './reranked.js'
import {NDCG_K, type MetricReport} from '../data/conversations/metrics.js'
import {fmt, renderTable} from './table.js'

/** The human-readable report of `kt eval`. */
export function renderEvalReport(o: EvalOutput): string {
  const lines: string[] = []
  lines.push(
    `${o.data}: ${o.conversations} conversations, ${o.turns} turns, ${o.queries} scored queries (skipped: ${o.skipped.adversarial} adversarial, ${o.skipped.no_evidence} without evidence)`,
  )
  const warnings = Object.entries(o.warnings)
  if (warnings.length > 0) lines.push(`loader: ${warnings.map(([k, v]) => `${v} ${k}`).join('; ')}`)
  lines.push('')
  const metricKeys = [...o.ks.map((k) => `recall@${k}`), ...o.ks.map((k) => `hit@${k}`), `ndcg@${NDCG_K}`, 'mrr']
  const systems: Array<[string, MetricReport]> = [
    ['engine', o.engine],
    ...(o.reranked ? [[o.reranked.system, o.reranked] as [string, MetricReport]] : []),
    ['bm25', o.baselines.bm25],
    ['vector', o.baselines.vector],
  ]
  const groups = ['overall', ...Object.keys(o.engine.by_category)]
  const rows: string[][] = []
  for (const g of groups) {
    for (const [name, report] of systems) {
      const m = g === 'overall' ? report.overall : report.by_category[g]
      rows.push([name === 'engine' ? g : '', name, String(m.n), ...metricKeys.map((k) => fmt(m[k]))])
    }
  }
  lines.push(renderTable(['category', 'system', 'n', ...metricKeys], rows))
  if (o.reranked) lines.push('', ...renderRerankedComparison(o.reranked))
  lines.push('')
  lines.push(
    `latency per query (engine, warm, in-process): p50 ${o.latency_ms.p50.toFixed(3)} ms, p95 ${o.latency_ms.p95.toFixed(3)} ms, p99 ${o.latency_ms.p99.toFixed(3)} ms; index build ${o.build_ms.toFixed(0)} ms`,
  )
  if (o.reranked) {
    const l = o.reranked.latency_ms
    lines.push(
      `latency per query (${o.reranked.system}, pool ${o.reranked.pool}): p50 ${l.p50.toFixed(3)} ms, p95 ${l.p95.toFixed(3)} ms, p99 ${l.p99.toFixed(3)} ms; of which reranking (query columns, ${o.reranked.trees} trees, sort) p50 ${l.model.p50.toFixed(3)} ms, p99 ${l.model.p99.toFixed(3)} ms; engine search at pool depth + feature rows p50 ${l.candidates.p50.toFixed(3)} ms, p99 ${l.candidates.p99.toFixed(3)} ms`,
    )
  }
  lines.push('')
  lines.push(
    `query classifier vs LoCoMo category (agreement ${(100 * o.classifier.agreement).toFixed(1)}%, ${o.classifier.us_per_query.toFixed(1)} us/query):`,
  )
  const confusion = Object.entries(o.classifier.matrix).map(([cat, row]) => [
    cat,
    ...QUERY_TYPES.map((t) => String(row[t])),
  ])
  lines.push(renderTable(['category', ...QUERY_TYPES], confusion))
  return lines.join('\n')
}

/** The reranker's identity and its paired difference from the engine. */
function renderRerankedComparison(r: RerankedOutput): string[] {
  const model = r.version === undefined ? r.model : `${r.model} (registry ${r.version})`
  const lines = [
    `${r.system}: ${model}, ${r.trees} trees, ${r.feature_names.length} features, reorders the engine's top ${r.pool}`,
  ]
  const rows = r.vs_engine.map((d) => [
    d.metric,
    fmt(d.engine),
    fmt(d.reranked),
    signed(d.delta),
    d.low === null || d.high === null ? '-' : `[${signed(d.low)}, ${signed(d.high)}]`,
    String(d.better),
    String(d.worse),
  ])
  const level = r.vs_engine[0] ? `${Math.round(100 * r.vs_engine[0].confidence)}%` : ''
  lines.push(
    renderTable(
      ['metric', 'engine', r.system, 'delta', `${level} CI (paired bootstrap)`, 'queries better', 'worse'],
      rows,
    ),
  )
  return lines
}

function signed(x: number): string {
  return `${x >= 0 ? '+' : ''}${x.toFixed(3)}`
}
