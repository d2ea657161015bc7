/** `/readyz`: the store answers and every engine answers, each within a short timeout. */
import type { Engine } from '../engines/engine.js';
import type { Store } from '../store/store.js';

export interface ReadinessReport {
  ready: boolean;
  store: string;
  engines: Record<string, string>;
}

export async function checkReadiness(store: Store, engines: readonly Engine[], timeoutMs = 2_000): Promise<ReadinessReport> {
  const signal = AbortSignal.timeout(timeoutMs);
  const describe = (promise: Promise<void>) =>
    promise.then(
      () => 'ok',
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
  const [storeState, ...engineStates] = await Promise.all([describe(store.ping()), ...engines.map((engine) => describe(engine.checkReady(signal)))]);
  const engineReport: Record<string, string> = {};
  engines.forEach((engine, index) => (engineReport[engine.id] = engineStates[index] as string));
  return { ready: storeState === 'ok' && engineStates.every((state) => state === 'ok'), store: storeState as string, engines: engineReport };
}
