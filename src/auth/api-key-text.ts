/**
 * Key text: `tg_live_` (production) or `tg_test_` (staging) and 32 random bytes
 * in base64url. Only the SHA-256 of the whole text is stored; 256 random bits
 * make a slow hash pointless.
 */
import { hash, randomBytes } from 'node:crypto';
import type { Environment } from '../store/store.js';

const prefixes: Record<Environment, string> = { production: 'tg_live_', staging: 'tg_test_' };

export function generateKeyText(environment: Environment): string {
  return prefixes[environment] + randomBytes(32).toString('base64url');
}

/** One-shot `crypto.hash` is about twice as fast as a Hash object on the hot path. */
export function hashKey(text: string): string {
  return hash('sha256', text, 'hex');
}

/** What lists show: the prefix and four characters, enough to recognise a key, useless to call with. */
export function displayPrefix(text: string): string {
  const prefixLength = text.startsWith('tg_live_') || text.startsWith('tg_test_') ? 8 : 0;
  return `${text.slice(0, prefixLength + 4)}…`;
}
