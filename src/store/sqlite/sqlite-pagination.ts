/** Keyset pages (`page-cursor.ts`) on SQLite. */
import { closePage, openPage, type Position } from '../page-cursor.js';
import type { Page, PageRequest } from '../store.js';

/** Fetches one row more than asked, to learn whether another page follows. */
export function paginate<Row>(
  page: PageRequest,
  positionOf: (row: Row) => Position,
  fetch: (limit: number, after: Position | null) => Row[],
): Page<Row> {
  const opened = openPage(page);
  return closePage(fetch(opened.limit + 1, opened.after), opened, positionOf);
}
