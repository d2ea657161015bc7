/**
 * The dashboard's tables, from column definitions. Every cell carries its
 * column's name in `data-label`: where a table's box is too narrow for its
 * columns (a phone), the stylesheet lays each row out as a block of labelled
 * values instead of letting the table run past the screen or scroll sideways.
 */
import { html, type HtmlValue, type SafeHtml } from './html.js';

/**
 * How a column's values behave when space runs short. Any cell's text may
 * break anywhere rather than widen the table (ids and model names have no
 * spaces to break at). Beyond that:
 * - `text` wraps, between words where it can;
 * - `number` is right-aligned, with tabular figures, and never wraps;
 * - `fixed` never wraps in a table (a time, a badge);
 * - `long` (model names, messages) takes a line of its own when rows are stacked;
 * - `id` (a request id) is `long`, and a table keeps room for a usual one, so
 *   that only an unusually long id breaks.
 */
export type ColumnKind = 'text' | 'number' | 'fixed' | 'long' | 'id';

export interface Column<Row> {
  /** The header, and each cell's `data-label`. */
  label: string;
  cell: (row: Row) => HtmlValue;
  kind?: ColumnKind;
  /** The cell's `data-field`, which tests read. */
  field?: string;
  /** A further class for the cell, per row (`bad` for errors). */
  tone?: (row: Row) => string | undefined;
}

export type Breadth = 'compact' | 'medium' | 'wide';

export interface TableOptions<Row> {
  columns: ReadonlyArray<Column<Row>>;
  rows: readonly Row[];
  /** The `<table>`'s id. */
  id?: string;
  /**
   * How wide a box the table needs to stay a table (narrower, its rows are
   * stacked; the widths are in the stylesheet): `compact` (a few short
   * columns, the default), `medium` (many number columns), `wide` (ids,
   * times and messages side by side).
   */
  breadth?: Breadth;
  /** The row's own attributes, e.g. html` data-model="${model}"`. */
  rowAttributes?: (row: Row) => SafeHtml;
}

const kindClass: Record<ColumnKind, string | null> = { text: null, number: 'num', fixed: 'fixed', long: 'long', id: 'long id' };

function classAttribute(...names: Array<string | null | undefined>): SafeHtml | null {
  const classes = names.filter((name): name is string => name !== null && name !== undefined && name !== '');
  return classes.length === 0 ? null : html` class="${classes.join(' ')}"`;
}

export function renderTable<Row>({ columns, rows, id, breadth = 'compact', rowAttributes }: TableOptions<Row>): SafeHtml {
  const head = columns.map((column) => html`<th${classAttribute(column.kind === 'number' ? 'num' : null)}>${column.label}</th>`);
  const body = rows.map(
    (row) =>
      html`<tr${rowAttributes?.(row) ?? null}>${columns.map(
        (column) =>
          html`<td${classAttribute(kindClass[column.kind ?? 'text'], column.tone?.(row))} data-label="${column.label}"${column.field === undefined ? null : html` data-field="${column.field}"`}>${column.cell(row)}</td>`,
      )}</tr>`,
  );
  return html`<div class="${breadth === 'compact' ? 'table' : `table ${breadth}`}"><table${id === undefined ? null : html` id="${id}"`}>
<thead><tr>${head}</tr></thead>
<tbody>${body}</tbody></table></div>`;
}
