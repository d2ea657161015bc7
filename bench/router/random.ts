/**
 * Seeded randomness for the router simulation: every stream is derived from
 * the run's seed and a label, so a workload draws the same numbers whatever
 * else runs, and a run is reproducible bit for bit.
 */

/** Uniform in [0, 1). */
export type Random = () => number;

/** sfc32: fast, 128-bit state, good enough for simulation. */
export function createRandom(seed: number): Random {
  let a = 0x9e3779b9;
  let b = 0x243f6a88;
  let c = 0xb7e15162;
  let d = seed >>> 0;
  const next = (): number => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let index = 0; index < 15; index += 1) next();
  return next;
}

/** A seed from the run's seed and labels (FNV-1a over their text). */
export function seedFor(...parts: Array<string | number>): number {
  let hash = 0x811c9dc5;
  for (const character of parts.join('\u0000')) {
    hash ^= character.codePointAt(0) ?? 0;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

export function uniform(random: Random, low: number, high: number): number {
  return low + (high - low) * random();
}

export function logUniform(random: Random, low: number, high: number): number {
  return Math.exp(uniform(random, Math.log(low), Math.log(high)));
}

export function integerBetween(random: Random, low: number, high: number): number {
  return low + Math.floor(random() * (high - low + 1));
}

/** Standard normal (Box-Muller). */
export function normal(random: Random): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

export function pick<T>(random: Random, weighted: ReadonlyArray<readonly [T, number]>): T {
  const total = weighted.reduce((sum, [, weight]) => sum + weight, 0);
  let left = random() * total;
  for (const [value, weight] of weighted) {
    left -= weight;
    if (left < 0) return value;
  }
  const last = weighted[weighted.length - 1];
  if (last === undefined) throw new Error('pick from nothing');
  return last[0];
}
