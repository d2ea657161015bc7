/** Number formats and Markdown tables for the real-data report. */
export const percent = (value: number, digits = 1): string => (Number.isFinite(value) ? `${(value * 100).toFixed(digits)}%` : 'n/a');
export const usd = (value: number): string => `$${value < 10 ? value.toFixed(3) : value.toFixed(2)}`;
export const count = (value: number): string => Math.round(value).toLocaleString('en-US');
export const row = (cells: Array<string | number>): string => `| ${cells.join(' | ')} |`;
export const table = (head: string[], rows: Array<Array<string | number>>): string =>
  [row(head), row(head.map(() => '---')), ...rows.map(row)].join('\n');
