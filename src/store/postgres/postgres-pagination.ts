/**
 * Keyset pages, as SQLite's: the cursor is the last item's sort key
 * `[time, id]`, so rows written while a client pages never shift what it sees
 * next (no duplicates, no gaps).
 */
import { InvalidRequestError } from '../../api/errors.js';
import type { Page, PageRequest } from '../store.js';

/** A page's sort key; `[time, id]` is both the ORDER BY and what a cursor encodes. */
export type Position = [number, string];

/** Fetches one row more than asked, to learn whether another page follows. */
export async function paginate<Row>(
  page: PageRequest,
  positionOf: (row: Row) => Position,
  fetch: (limit: number, after: Position | null) => Promise<Row[]>,
): Promise<Page<Row>> {
  const limit = clampLimit(page.limit);
  const after = page.cursor === undefined || page.cursor === null ? null : decodeCursor(page.cursor);
  const rows = await fetch(limit + 1, after);
  const more = rows.length > limit;
  const kept = more ? rows.slice(0, limit) : rows;
  const last = kept[kept.length - 1];
  return { items: kept, nextCursor: more && last !== undefined ? encodeCursor(positionOf(last)) : null };
}

function clampLimit(limit: number): number {
  if (!Number.isFinite(limit)) return 100;
  return Math.min(100, Math.max(1, Math.trunc(limit)));
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
  if (Array.isArray(value) && value.length === 2 && Number.isSafeInteger(value[0]) && typeof value[1] === 'string') {
    return [value[0] as number, value[1]];
  }
  throw new InvalidRequestError('The cursor is not valid; pass the nextCursor of a previous page.', 'cursor', 'invalid_cursor');
}
