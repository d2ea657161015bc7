/**
 * Which process leads the router: exactly one at a time across every process
 * on the store, through a lease (`lease-store.ts`). The leader renews it every
 * `renewMs`; a leader that dies loses it after `ttlMs`, and the next process
 * to ask takes it (within `ttlMs + renewMs`). A leader that cannot renew (the
 * store is away) steps down before its lease could have run out, so two
 * processes never both believe they lead. A clean stop releases it at once.
 */
import { randomBytes } from 'node:crypto';
import { errorFields, type LogFields, type Logger } from '../log/logger.js';
import type { LeaseStore } from '../store/lease-store.js';

export interface Leadership {
  /** This process's name in the lease. */
  readonly holder: string;
  isLeader(): boolean;
  /** Called with the new role each time it changes. */
  onChange(listener: (leader: boolean) => void): void;
  /** Asks for the lease once now (call before serving), then keeps asking on the timer. */
  start(): Promise<void>;
  /** Stops asking and releases the lease if held. */
  close(): Promise<void>;
}

export interface LeadershipOptions {
  leases: LeaseStore;
  logger: Logger;
  name?: string;
  ttlMs?: number;
  renewMs?: number;
  now?: () => number;
}

export function createLeadership(options: LeadershipOptions): Leadership {
  const { leases, logger } = options;
  const name = options.name ?? 'router';
  const ttlMs = options.ttlMs ?? 15_000;
  const renewMs = options.renewMs ?? 5_000;
  const now = options.now ?? Date.now;
  const holder = `${process.pid}-${randomBytes(6).toString('hex')}`;
  const listeners: Array<(leader: boolean) => void> = [];
  let leader = false;
  let renewedAt = Number.NEGATIVE_INFINITY;
  let timer: NodeJS.Timeout | null = null;
  let asking: Promise<void> | null = null;

  function become(isLeader: boolean): void {
    if (isLeader === leader) return;
    leader = isLeader;
    logger.info(isLeader ? 'router: this process leads' : 'router: this process follows', { holder });
    for (const listener of listeners) listener(isLeader);
  }

  /** Leads on only while the last sure renewal still covers us, with a renewal's margin. */
  function stepDownIfUncovered(why: LogFields): void {
    if (leader && now() - renewedAt > ttlMs - renewMs) {
      logger.warn('router: lease not renewed; stepping down', why);
      become(false);
    }
  }

  async function ask(): Promise<void> {
    const askedAt = now();
    try {
      const held = await leases.acquire(name, holder, ttlMs);
      if (held) renewedAt = askedAt;
      become(held);
    } catch (error) {
      // Unsure whether the renewal landed.
      stepDownIfUncovered(errorFields(error));
    }
  }

  const askOnce = (): Promise<void> => (asking ??= ask().finally(() => (asking = null)));

  return {
    holder,
    isLeader: () => leader,
    onChange(listener) {
      listeners.push(listener);
    },
    async start() {
      await askOnce();
      timer = setInterval(() => {
        // A renewal that hangs (a store that takes the query and never answers) must not keep us leading either.
        if (asking !== null) stepDownIfUncovered({ error: 'the lease renewal has not answered' });
        void askOnce();
      }, renewMs);
      timer.unref();
    },
    async close() {
      if (timer !== null) clearInterval(timer);
      timer = null;
      // A renewal in flight could take the lease again after the release: wait for it, but not for one that hangs.
      if (asking !== null) await Promise.race([asking, new Promise((resolve) => setTimeout(resolve, renewMs).unref())]);
      if (!leader) return;
      become(false);
      await leases.release(name, holder).catch((error: unknown) => logger.warn('router: lease not released', errorFields(error)));
    },
  };
}
