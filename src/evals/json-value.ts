/**
 * JSON helpers shared by the evaluators: parsing that reports instead of
 * throwing, and a canonical serialisation for comparing values regardless of
 * key order.
 */

export type ParsedJson = { ok: true; value: unknown } | { ok: false; error: string };

export function parseJson(text: string): ParsedJson {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    // V8 quotes the start of the input in its message; the reason quotes it anyway, on one line.
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, error: message.replace(/, ".*" is not valid JSON$/s, '').replace(/\s+/g, ' ') };
  }
}

export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The value serialised with object keys sorted at every depth, so two values
 * are deep-equal (ignoring key order) exactly when their canonical forms are
 * equal. Array order counts. Keys are read with Object.keys, so a parsed
 * `"__proto__"` key is compared like any other.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isJsonObject(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(',')}}`;
  }
  // Parsed JSON only holds strings, finite numbers, booleans and null; anything else serialises as null.
  return JSON.stringify(value) ?? 'null';
}
