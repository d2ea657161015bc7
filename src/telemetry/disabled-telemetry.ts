/**
 * Telemetry off: one no-op object per span kind, shared by every call, so the
 * hot path allocates nothing and never touches OpenTelemetry (which is not
 * even loaded: `create-telemetry.ts`). On, a caller's sampled-out trace gets
 * the same no-op spans.
 */
import type { CallSpan, EngineSpan, Telemetry } from './telemetry.js';

export function createUnrecordedSpans(): { callSpan: CallSpan; engineSpan: EngineSpan } {
  const engineSpan: EngineSpan = { end() {} };
  const callSpan: CallSpan = {
    origin: (requestId) => ({ requestId, span: null }),
    setRouteReason() {},
    startEngineCall: () => engineSpan,
    end() {},
  };
  return { callSpan, engineSpan };
}

export function createDisabledTelemetry(): Telemetry {
  const { callSpan, engineSpan } = createUnrecordedSpans();
  return {
    enabled: false,
    startCall: () => callSpan,
    startReplay: () => engineSpan,
    stats: () => ({ exported: 0, dropped: 0, queued: 0 }),
    flush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  };
}
