/**
 * kt compare's Markdown, sized for a pull-request comment: the headline and the overall table
 * first, the per-category tables, latency and what changed in one collapsed section.
 */
import type {ComparedMetric, CompareScope, RunComparison, Verdict} from './compare-runs.js'

/** The hidden marker a CI job finds its own (sticky) comment by. */
export const COMPARE_COMMENT_MARKER = '<!-- kt-compare -->'

const ICON: Record<Verdict, string> = {
  improved: '🟢 improved',
  regressed: '🔴 regressed',
  not_shown_non_inferior: '🟡 not shown non-inferior',
  no_clear_change: '⚪ no clear change',
}

function signed(x: number): string {
  return `${x >= 0 ? '+' : ''}${x.toFixed(3)}`
}

function interval(m: ComparedMetric): string {
  return m.low === null || m.high === null ? 'n/a' : `[${signed(m.low)}, ${signed(m.high)}]`
}

function scopeTable(s: CompareScope): string[] {
  return [
    '| metric | base | head | head − base | 95% CI | verdict |',
    '|---|---:|---:|---:|---|---|',
    ...s.metrics.map(
      (m) =>
        `| ${m.metric} | ${m.a.toFixed(3)} | ${m.b.toFixed(3)} | ${signed(m.delta)} | ${interval(m)} | ${ICON[m.verdict]} |`,
    ),
  ]
}

function latencyLine(label: string, l: RunComparison['latency']['base']): string {
  return l === null
    ? `| ${label} | n/a | n/a | n/a | not recorded |`
    : `| ${label} | ${l.p50?.toFixed(2) ?? 'n/a'} | ${l.p95?.toFixed(2) ?? 'n/a'} | ${l.p99.toFixed(2)} | ${l.kind === 'cost_model' ? 'cost model' : 'measured'} |`
}

/** The comparison as a PR comment (starts with COMPARE_COMMENT_MARKER). */
export function renderCompareMarkdown(c: RunComparison): string {
  const counts = (Object.entries(c.counts) as Array<[Verdict, number]>)
    .filter(([, n]) => n > 0)
    .map(([v, n]) => `${n} ${ICON[v].split(' ').slice(1).join(' ')}`)
    .join(', ')
  const overall = c.scopes[0]
  const lines = [
    COMPARE_COMMENT_MARKER,
    `### kt compare: ${ICON[c.verdict]}`,
    '',
    `**${c.engine}**, \`${c.head.system}\` of head against \`${c.base.system}\` of base on ${c.shared_questions} shared questions ` +
      `(paired bootstrap ${Math.round(100 * c.confidence)}% intervals, non-inferiority margin ${c.margin}). Verdicts: ${counts}.`,
  ]
  if (c.different_data)
    lines.push('', '> ⚠️ Base and head were evaluated on **different data** (--allow-different-data).')
  if (c.base_only + c.head_only > 0)
    lines.push('', `> ${c.base_only} questions only in base and ${c.head_only} only in head are left out.`)
  lines.push('', ...scopeTable(overall), '', '<details><summary>Per category, latency and what changed</summary>', '')
  for (const s of c.scopes.slice(1)) lines.push(`**${s.scope}** (${s.questions} questions)`, '', ...scopeTable(s), '')
  lines.push('**Latency** (ms)', '', '| side | p50 | p95 | p99 | kind |', '|---|---:|---:|---:|---|')
  lines.push(latencyLine('base', c.latency.base), latencyLine('head', c.latency.head), '')
  lines.push('**What changed**', '')
  if (c.changes.length === 0) lines.push('Nothing: same parameters, engine file, data and kt version.')
  else {
    lines.push('| what | name | base | head |', '|---|---|---|---|')
    for (const ch of c.changes) lines.push(`| ${ch.what} | ${ch.name} | ${ch.base} | ${ch.head} |`)
  }
  lines.push('', '</details>')
  return `${lines.join('\n')}\n`
}
