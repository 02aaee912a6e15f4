/** Decimal places of NDCG values in human tables (every rerank table; --json keeps full precision). */
export const METRIC_DIGITS = 4

/** An NDCG value for a human table ('-' when absent). */
export function formatMetric(x: number | undefined): string {
  return x === undefined ? '-' : x.toFixed(METRIC_DIGITS)
}

/** A signed difference for a human table ('-' when absent or NaN). */
export function signed(x: number | null): string {
  return x === null || Number.isNaN(x) ? '-' : `${x >= 0 ? '+' : ''}${x.toFixed(METRIC_DIGITS)}`
}

/**
 * A plain text table: text columns left-aligned, the rest (numbers) right-aligned. `textColumns` is
 * a count of leading text columns or the list of their indices.
 */
export function table(header: string[], rows: string[][], textColumns: number | readonly number[] = 1): string {
  const isText = (c: number): boolean => (typeof textColumns === 'number' ? c < textColumns : textColumns.includes(c))
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? '').length)))
  const line = (cells: string[]): string =>
    cells
      .map((cell, c) => (isText(c) ? cell.padEnd(widths[c]) : cell.padStart(widths[c])))
      .join('  ')
      .trimEnd()
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n')
}
