/**
 * The Store contract, dashboard sessions (`src/store/session-store.ts`):
 * every back end runs it unchanged, through the Store interface alone.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../../src/store/store.js';
import { eachTestOnAFreshStore, type OpenStore } from './store-contract-support.js';

export function describeSessionsContract(open: OpenStore): void {
  describe('sessions', () => {
    let store: Store;
    eachTestOnAFreshStore(open, (opened) => (store = opened));

    it('keeps sessions by the hash of their id until they expire or end', async () => {
      const session = { idHash: 'a'.repeat(64), keyId: 'key-1', accountId: 'acct-1', keyHash: 'b'.repeat(64), expiresAt: 10_000 };
      await store.sessions.createSession(session);
      await store.sessions.createSession({ ...session, idHash: 'c'.repeat(64), expiresAt: 5_000 });
      expect(await store.sessions.getSession('a'.repeat(64), 9_999)).toEqual(session);
      expect(await store.sessions.getSession('a'.repeat(64), 10_000)).toBeNull();
      expect(await store.sessions.getSession('d'.repeat(64), 0)).toBeNull();
      expect(await store.sessions.pruneSessions(6_000)).toBe(1);
      await store.sessions.deleteSession('a'.repeat(64));
      expect(await store.sessions.getSession('a'.repeat(64), 0)).toBeNull();
    });
  });
}
