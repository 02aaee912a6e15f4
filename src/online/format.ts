/** Plain-text tables for the online commands: columns padded, numbers right-aligned. */
export function renderTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? '').length)))
  const numeric = (cell: string): boolean => /^[-+]?[\d.]/.test(cell)
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, c) => (c === 0 || !numeric(cell) ? cell.padEnd(widths[c]) : cell.padStart(widths[c])))
      .join('  ')
      .trimEnd()
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n')
}

/** A number with `digits` decimals, or '-' when missing. */
export function fixed(x: number | null | undefined, digits: number): string {
  return x === null || x === undefined || Number.isNaN(x) ? '-' : x.toFixed(digits)
}
