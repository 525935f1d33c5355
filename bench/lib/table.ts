/** Plain-text tables for the terminal: left-aligned first column, right-aligned numbers. */

export interface Table {
  title: string;
  columns: string[];
  rows: string[][];
}

export function renderTable(table: Table): string {
  const widths = table.columns.map((c, i) => Math.max(c.length, ...table.rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ').trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [table.title, line(table.columns), rule, ...table.rows.map(line)].join('\n');
}

/** A number for a table cell; "-" for missing or NaN. */
export function fmt(value: number | undefined, digits = 2): string {
  return value === undefined || !Number.isFinite(value) ? '-' : value.toFixed(digits);
}

/** Signed, for differences ("+0.12"). */
export function fmtDelta(value: number | undefined, digits = 3): string {
  if (value === undefined || !Number.isFinite(value)) return '-';
  return `${value >= 0 ? '+' : ''}${value.toFixed(digits)}`;
}
