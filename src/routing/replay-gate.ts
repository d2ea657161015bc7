/**
 * Replay slots per engine: the router's replays and judge calls on one engine
 * never exceed its bound (`replay_concurrency`, below the engine's own
 * capacity), so shadow evaluation cannot take capacity from production calls.
 * A replay waits for a slot in FIFO order.
 */
export interface ReplayGate {
  acquire(engineId: string, signal: AbortSignal): Promise<() => void>;
  /** Replays running and waiting per engine, for /metrics. */
  load(): Array<{ engine: string; running: number; waiting: number }>;
}

export function createReplayGate(limits: ReadonlyMap<string, number>, defaultLimit = 1): ReplayGate {
  const running = new Map<string, number>();
  const waiting = new Map<string, Array<() => void>>();

  function release(engineId: string): void {
    const next = waiting.get(engineId)?.shift();
    if (next !== undefined) next();
    else running.set(engineId, (running.get(engineId) ?? 1) - 1);
  }

  return {
    acquire(engineId, signal) {
      const limit = limits.get(engineId) ?? defaultLimit;
      const busy = running.get(engineId) ?? 0;
      const grant = () => {
        let released = false;
        return () => {
          if (released) return;
          released = true;
          release(engineId);
        };
      };
      if (busy < limit) {
        running.set(engineId, busy + 1);
        return Promise.resolve(grant());
      }
      return new Promise((resolve, reject) => {
        const queue = waiting.get(engineId) ?? [];
        waiting.set(engineId, queue);
        const admit = () => {
          signal.removeEventListener('abort', abort);
          resolve(grant());
        };
        const abort = () => {
          const at = queue.indexOf(admit);
          if (at !== -1) queue.splice(at, 1);
          reject(signal.reason instanceof Error ? signal.reason : new Error('replay cancelled'));
        };
        signal.addEventListener('abort', abort, { once: true });
        queue.push(admit);
      });
    },
    load() {
      return [...new Set([...running.keys(), ...waiting.keys()])].map((engine) => ({
        engine,
        running: running.get(engine) ?? 0,
        waiting: waiting.get(engine)?.length ?? 0,
      }));
    },
  };
}
