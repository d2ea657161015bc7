/** Times in query strings: how far back from now, epoch seconds, or ISO 8601. */
import { InvalidRequestError } from '../api/errors.js';

const units: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `24h`, `7d`, `30m` (before now), epoch seconds, or an ISO 8601 time. */
export function parseTime(text: string, now: number, param: string): number {
  const relative = /^(\d+)([mhd])$/.exec(text);
  if (relative !== null) return now - Number(relative[1]) * units[relative[2]!]!;
  if (/^\d{9,11}$/.test(text)) return Number(text) * 1000;
  const parsed = Date.parse(text);
  if (Number.isNaN(parsed))
    throw new InvalidRequestError(`${param} must be a duration back from now (30m, 24h, 7d), epoch seconds or an ISO 8601 time.`, param);
  return parsed;
}
