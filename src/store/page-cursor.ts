/**
 * Keyset pages, as every SQL back end serves them (`Page`, `PageRequest` in
 * `store.ts`). The cursor is the last item's sort key `[time, id]`, so rows
 * written while a client pages never shift what it sees next (no duplicates,
 * no gaps); it is opaque to clients (base64url of JSON).
 *
 * A page is read in two halves around the back end's own query, which may be
 * synchronous (SQLite) or not (PostgreSQL): `openPage` reads the request,
 * the back end fetches `limit + 1` rows after `after`, and `closePage` keeps
 * `limit` of them and encodes the cursor of the next page when the extra row
 * says there is one.
 */
import { InvalidRequestError } from '../api/errors.js';
import type { Page, PageRequest } from './store.js';

/** A page's sort key; `[time, id]` is both the ORDER BY and what a cursor encodes. */
export type Position = [number, string];

export interface OpenedPage {
  /** The page size asked for, clamped to 1..100 (100 when not a number). */
  limit: number;
  /** Where the previous page ended; null for the first page. */
  after: Position | null;
}

/** The clamped limit and the decoded cursor; a cursor that is not one of ours is a 400 `invalid_cursor`. */
export function openPage(page: PageRequest): OpenedPage {
  return {
    limit: Number.isFinite(page.limit) ? Math.min(100, Math.max(1, Math.trunc(page.limit))) : 100,
    after: page.cursor === undefined || page.cursor === null ? null : decodeCursor(page.cursor),
  };
}

/** The page of `rows` (fetched with `limit + 1`), and the cursor after its last item when more follow. */
export function closePage<Row>(rows: Row[], opened: OpenedPage, positionOf: (row: Row) => Position): Page<Row> {
  const more = rows.length > opened.limit;
  const kept = more ? rows.slice(0, opened.limit) : rows;
  const last = kept[kept.length - 1];
  return { items: kept, nextCursor: more && last !== undefined ? encodeCursor(positionOf(last)) : null };
}

/** The error for a cursor a back end cannot page from. */
export function invalidCursorError(): InvalidRequestError {
  return new InvalidRequestError('The cursor is not valid; pass the nextCursor of a previous page.', 'cursor', 'invalid_cursor');
}

function encodeCursor(position: Position): string {
  return Buffer.from(JSON.stringify(position), 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): Position {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    value = null;
  }
  if (Array.isArray(value) && value.length === 2 && Number.isFinite(value[0]) && typeof value[1] === 'string') {
    return [value[0] as number, value[1]];
  }
  throw invalidCursorError();
}
