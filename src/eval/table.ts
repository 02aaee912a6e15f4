/** Plain-text tables for command output: columns padded, numbers right-aligned. */
export function renderTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? '').length)))
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, c) => (c === 0 || !/^[-+]?[\d.]/.test(cell) ? cell.padEnd(widths[c]) : cell.padStart(widths[c])))
      .join('  ')
      .trimEnd()
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n')
}

/** A metric value with three decimals. */
export function fmt(x: number | undefined): string {
  return x === undefined || Number.isNaN(x) ? '-' : x.toFixed(3)
}
