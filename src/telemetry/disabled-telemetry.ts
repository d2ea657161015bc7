/**
 * Telemetry off: one no-op object per span kind, shared by every call, so the
 * hot path allocates nothing and never touches the OpenTelemetry SDK (which
 * is not even loaded: `create-telemetry.ts`).
 */
import type { CallSpan, EngineSpan, Telemetry } from './telemetry.js';

export function createDisabledTelemetry(): Telemetry {
  const engineSpan: EngineSpan = { end() {} };
  const callSpan: CallSpan = {
    origin: (requestId) => ({ requestId, span: null }),
    setRouteReason() {},
    engineCall: (_model, _attempt, _reask, work) => work,
    startEngineCall: () => engineSpan,
    end() {},
  };
  return {
    enabled: false,
    startCall: () => callSpan,
    startReplay: () => engineSpan,
    stats: () => ({ exported: 0, dropped: 0, queued: 0 }),
    flush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  };
}
