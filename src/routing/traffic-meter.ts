/**
 * Each route's production traffic as the exploration plan needs it, and the
 * exploration samples it took today. Cheap enough for the hot path: one map
 * lookup and an increment per call (samples are counted off it, when they are
 * processed).
 *
 * Calls are counted in hourly buckets. The last day is the current hour,
 * the 23 before it, and the share of the hour before those still within 24
 * hours: a batch sent at the same time each day is still in the window when
 * the next one starts, not read as a quiet day. A route's first calls cannot
 * tell a burst from the start of steady traffic (16,000 calls in five
 * minutes look like 4.6 million a day when scaled up from their first
 * minute), so the estimate never scales a route's first hour up:
 *
 *   seen         the calls counted over the last day (since the route was
 *                first seen, for a route younger than a day);
 *   callsPerDay  `seen` within the route's first hour; then `seen` plus the
 *                unseen rest of its first day at the pace seen so far,
 *                weighted by how long it has been watched (none at an hour,
 *                linearly up to all of it at a day); `seen` after a day.
 *
 * A burst is thus never read as more than 1.67 times its own calls (about
 * five hours after it began), and steady traffic is underestimated during
 * its first day, both on the safe side: the rate of samples errs high and
 * the daily cap, counted against the samples actually taken
 * (`samplesToday`), stops it; the saving a test promises counts only `seen`
 * (exploration.ts).
 */
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** Hourly buckets kept: a day's and the one that is sliding out of it. */
const SLOTS = 25;
/** Below this age a route's calls are taken as they are, never scaled up to a day. */
export const UNEXTRAPOLATED_MS = HOUR_MS;

interface Buckets {
  firstSeen: number;
  /** Calls per hour, indexed by hour number modulo SLOTS. */
  counts: Float64Array;
  /** The hour number each slot last counted. */
  hours: Float64Array;
  /** Exploration samples of the UTC day `sampleDay` (days since the epoch). */
  sampleDay: number;
  samples: number;
}

export interface RouteTraffic {
  /** Calls counted over the last day: what the route did, not extrapolated. */
  seen: number;
  /** Calls per day, estimated as the header says (`seen` within the first hour). */
  callsPerDay: number;
  /** Since the route was first seen, ms, at most a day. */
  ageMs: number;
  /** Exploration samples taken this UTC day, for the daily cap. */
  samplesToday: number;
}

export interface TrafficMeter {
  /** `count` calls of the route at `at` (a follower's tally brings several). */
  observe(key: string, at: number, count?: number): void;
  /** An exploration sample of the route taken at `at` (replayed on candidates), counted against the daily cap. */
  observeSample(key: string, at: number): void;
  callsPerDay(key: string, at: number): number;
  traffic(key: string, at: number): RouteTraffic;
}

export function createTrafficMeter(): TrafficMeter {
  const routes = new Map<string, Buckets>();
  const bucketsOf = (key: string, at: number): Buckets => {
    let buckets = routes.get(key);
    if (buckets === undefined)
      routes.set(
        key,
        (buckets = { firstSeen: at, counts: new Float64Array(SLOTS), hours: new Float64Array(SLOTS).fill(-1), sampleDay: -1, samples: 0 }),
      );
    return buckets;
  };
  const traffic = (key: string, at: number): RouteTraffic => {
    const buckets = routes.get(key);
    if (buckets === undefined) return { seen: 0, callsPerDay: 0, ageMs: 0, samplesToday: 0 };
    const hour = Math.floor(at / HOUR_MS);
    const sliding = 1 - (at - hour * HOUR_MS) / HOUR_MS;
    let seen = 0;
    for (let slot = 0; slot < SLOTS; slot++) {
      const counted = buckets.hours[slot] ?? -1;
      if (counted > hour - 24) seen += buckets.counts[slot] ?? 0;
      else if (counted === hour - 24) seen += sliding * (buckets.counts[slot] ?? 0);
    }
    const ageMs = Math.min(DAY_MS, Math.max(0, at - buckets.firstSeen));
    const weight = Math.min(1, Math.max(0, (ageMs - UNEXTRAPOLATED_MS) / (DAY_MS - UNEXTRAPOLATED_MS)));
    const unseen = weight > 0 ? (weight * seen * (DAY_MS - ageMs)) / ageMs : 0;
    return { seen, callsPerDay: seen + unseen, ageMs, samplesToday: buckets.sampleDay === Math.floor(at / DAY_MS) ? buckets.samples : 0 };
  };
  return {
    observe(key, at, count = 1) {
      const buckets = bucketsOf(key, at);
      const hour = Math.floor(at / HOUR_MS);
      const slot = hour % SLOTS;
      if (buckets.hours[slot] !== hour) {
        buckets.hours[slot] = hour;
        buckets.counts[slot] = 0;
      }
      buckets.counts[slot] = (buckets.counts[slot] ?? 0) + count;
    },
    observeSample(key, at) {
      const buckets = bucketsOf(key, at);
      const day = Math.floor(at / DAY_MS);
      if (buckets.sampleDay !== day) {
        buckets.sampleDay = day;
        buckets.samples = 0;
      }
      buckets.samples += 1;
    },
    callsPerDay: (key, at) => traffic(key, at).callsPerDay,
    traffic,
  };
}
