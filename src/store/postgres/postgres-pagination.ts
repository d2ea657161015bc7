/** Keyset pages (`page-cursor.ts`) on PostgreSQL. */
import { closePage, invalidCursorError, openPage, type Position } from '../page-cursor.js';
import type { Page, PageRequest } from '../store.js';

/** Fetches one row more than asked, to learn whether another page follows. */
export async function paginate<Row>(
  page: PageRequest,
  positionOf: (row: Row) => Position,
  fetch: (limit: number, after: Position | null) => Promise<Row[]>,
): Promise<Page<Row>> {
  const opened = openPage(page);
  // Times are BIGINT here (SQLite compares any number): a cursor time that is no safe integer could not be bound.
  if (opened.after !== null && !Number.isSafeInteger(opened.after[0])) throw invalidCursorError();
  return closePage(await fetch(opened.limit + 1, opened.after), opened, positionOf);
}
