/**
 * JSON in one canonical form: every object's keys in sorted order (by UTF-16
 * code units, as `Array.prototype.sort` orders strings), at every depth, and
 * members whose value is undefined left out. Equal values give equal text
 * however their objects were built, so the text can be hashed into a cache
 * key. Otherwise as `JSON.stringify` writes (arrays in order, an undefined
 * array element as null, numbers as JSON writes them: -0 as 0, and the
 * non-finite ones, which validated requests never hold, as null).
 *
 * For plain data: no `toJSON`, no Maps. Objects without a prototype (the
 * validated `logit_bias`) are read like any other.
 */
export function canonicalJson(value: unknown): string {
  const parts: string[] = [];
  write(value, parts);
  return parts.join('');
}

function write(value: unknown, parts: string[]): void {
  switch (typeof value) {
    case 'string':
      parts.push(JSON.stringify(value));
      return;
    case 'number':
      parts.push(Number.isFinite(value) ? JSON.stringify(value) : 'null');
      return;
    case 'boolean':
      parts.push(value ? 'true' : 'false');
      return;
    case 'object':
      if (value === null) parts.push('null');
      else if (Array.isArray(value)) writeArray(value, parts);
      else writeObject(value as Record<string, unknown>, parts);
      return;
    case 'undefined':
      parts.push('null');
      return;
    default:
      // Functions, symbols and bigints are not data: a caller that hashes one has a bug.
      throw new TypeError(`canonicalJson: cannot write a ${typeof value}`);
  }
}

function writeArray(values: readonly unknown[], parts: string[]): void {
  parts.push('[');
  for (let index = 0; index < values.length; index++) {
    if (index > 0) parts.push(',');
    write(values[index], parts);
  }
  parts.push(']');
}

function writeObject(object: Record<string, unknown>, parts: string[]): void {
  parts.push('{');
  let first = true;
  for (const key of Object.keys(object).sort()) {
    const member = object[key];
    if (member === undefined) continue;
    if (!first) parts.push(',');
    first = false;
    parts.push(JSON.stringify(key), ':');
    write(member, parts);
  }
  parts.push('}');
}
