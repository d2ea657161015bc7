/**
 * PostgreSQL's text types cannot hold U+0000, and the Store contract stores
 * strings as given, NUL characters included. So every string crosses the
 * driver through an escape: U+0000 becomes U+0001 U+0001, U+0001 becomes
 * U+0001 U+0002, everything else is unchanged.
 *
 * The escape keeps equality (it is one-to-one) and order: under `COLLATE "C"`
 * an escaped string sorts where the original would, because U+0001 sorts
 * below every character other than the two it stands for. JSON columns never
 * see it (JSON.stringify writes control characters as `\u0000`).
 */

/* eslint-disable no-control-regex -- these patterns exist to find the control characters PostgreSQL text cannot hold */
const needsEscape = /[\u0000\u0001]/;
const escaped = /[\u0000\u0001]/g;
const needsUnescape = /\u0001/;
const unescaped = /\u0001([\u0001\u0002])/g;
/* eslint-enable no-control-regex */

export function encodeText(text: string): string {
  return needsEscape.test(text) ? text.replace(escaped, (character) => (character === '\u0000' ? '\u0001\u0001' : '\u0001\u0002')) : text;
}

/** The inverse of `encodeText`; a lone U+0001 (written by someone else) is left as it is. */
export function decodeText(text: string): string {
  return needsUnescape.test(text) ? text.replace(unescaped, (_, code: string) => (code === '\u0001' ? '\u0000' : '\u0001')) : text;
}

/** A query parameter with its strings (also inside arrays) escaped. */
export function encodeParameter(value: unknown): unknown {
  if (typeof value === 'string') return encodeText(value);
  if (Array.isArray(value)) return value.map(encodeParameter);
  return value;
}

/** A result row with its strings unescaped, in place. */
export function decodeRow<Row extends object>(row: Row): Row {
  const record = row as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const value = record[key];
    if (typeof value === 'string') record[key] = decodeText(value);
  }
  return row;
}
