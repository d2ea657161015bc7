import { randomUUID } from 'node:crypto';

/**
 * `req_`, the time in milliseconds (base 36, so ids sort by time), then 62
 * random bits from a UUID's last two groups. Time-ordered ids append to the
 * traces' primary-key index instead of landing at random pages of it.
 */
export function newRequestId(): string {
  const random = randomUUID();
  return `req_${Date.now().toString(36).padStart(9, '0')}${random.slice(19, 23)}${random.slice(24)}`;
}
