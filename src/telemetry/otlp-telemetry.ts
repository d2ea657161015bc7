/**
 * Telemetry on: each chat call, engine call and replay leaves a short record
 * of its facts in a ring of shared memory as it ends (`span-record.ts`), and
 * the span worker, a thread of its own (`span-export-worker.ts`), writes
 * them as OTLP spans and ships them through the official OTLP/HTTP export
 * delegate. The request thread does no span encoding and no network I/O for
 * telemetry: a call costs it a few allocations and a record of some hundred
 * bytes. Loaded only when an endpoint is configured.
 *
 * Official packages do what they are for: the W3C propagator reads the
 * caller's `traceparent` / `tracestate`, the resource is the SDK's default
 * (`telemetry.sdk.*`) with `service.name`, and the export delegate brings the
 * endpoint, `OTEL_EXPORTER_OTLP_HEADERS` merged into the configured headers,
 * the timeout, retries with backoff on 429/502/503/504 and gzip when
 * `OTEL_EXPORTER_OTLP_COMPRESSION` asks. Sampling is the SDK default's
 * (parent-based, always on): a caller's sampled-out trace is not recorded.
 *
 * Every span is counted once: dropped here when the ring is full (the worker
 * fell behind) or the worker is gone, else exported or dropped by the worker.
 */
import type { ScopeNames } from '../api/scope.js';
import { existsSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { defaultTextMapGetter, isSpanContextValid, ROOT_CONTEXT, trace, TraceFlags, type SpanContext } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { GatewayError } from '../api/errors.js';
import type { Trace } from '../store/store.js';
import type { TelemetryOptions } from './create-telemetry.js';
import { createUnrecordedSpans } from './disabled-telemetry.js';
import { createRecordRing, RecordRingWriter } from './record-ring.js';
import {
  createSpanIdSource,
  parseSpanId,
  parseTraceId,
  spanIdHex,
  traceIdHex,
  type SpanId,
  type SpanIdSource,
  type TraceId,
} from './span-ids.js';
import {
  createStringSlots,
  writeCallRecord,
  writeEngineCallRecord,
  type CallTraceFacts,
  type EngineCallFacts,
  type StringSlots,
} from './span-record.js';
import { COUNTER_SLOTS, Counter, type FromSpanWorker, type SpanWorkerData, type ToSpanWorker } from './span-worker-protocol.js';
import type { CallOrigin, CallSpan, EngineOutcome, EngineSpan, RouteReason, Telemetry, TelemetrySettings } from './telemetry.js';

/**
 * The ring's size: some 7,000 calls' records, over a second of a saturated
 * gateway, should the worker stall. Small enough to stay in the CPU's
 * caches: a larger ring made each record's bytes cold.
 */
const RING_BYTES = 1024 * 1024;
/** How long `shutdown` waits for the worker to export what it holds (its exports time out at 10 s). */
const SHUTDOWN_WAIT_MS = 15_000;

const timeOrigin = performance.timeOrigin;
const now = () => timeOrigin + performance.now();

export function createOtlpTelemetry(settings: TelemetrySettings, options: TelemetryOptions): Telemetry {
  const ring = createRecordRing(RING_BYTES);
  const counters = new Int32Array(new SharedArrayBuffer(COUNTER_SLOTS * 4));
  const data: SpanWorkerData = { settings, ring, counters: counters.buffer as SharedArrayBuffer, engineTypes: [...options.engineTypes] };
  const worker = new Worker(workerEntry(), { workerData: data, name: 'taskgate-spans' });
  // The worker never keeps the process alive: `shutdown` is how it ends.
  worker.unref();

  const recorder: SpanRecorder = {
    ids: createSpanIdSource(),
    ring: new RecordRingWriter(ring),
    slots: createStringSlots(),
    running: true,
    written: 0,
    dropped: 0,
  };
  const replies = new Map<number, () => void>();
  let nextMessage = 0;
  const ask = (type: ToSpanWorker['type']) =>
    new Promise<void>((resolve) => {
      if (!recorder.running) return resolve();
      const id = nextMessage++;
      replies.set(id, resolve);
      worker.postMessage({ type, id } satisfies ToSpanWorker);
    });
  const stopped = () => {
    recorder.running = false;
    for (const resolve of replies.values()) resolve();
    replies.clear();
  };
  worker.on('message', (message: FromSpanWorker) => {
    replies.get(message.id)?.();
    replies.delete(message.id);
  });
  worker.on('error', (error) => {
    options.logger.error('telemetry: the span worker failed; spans are dropped from now on', { error: error.message });
    stopped();
  });
  worker.on('exit', stopped);

  const propagator = new W3CTraceContextPropagator();
  const unrecorded = createUnrecordedSpans();
  options.logger.info('telemetry: exporting spans over OTLP/HTTP', {
    url: settings.tracesUrl,
    protocol: settings.protocol,
    service_name: settings.serviceName,
  });

  return {
    enabled: true,
    startCall(headers, startedAt) {
      const caller = callerSpanContext(propagator, headers);
      if (caller !== null && (caller.traceFlags & TraceFlags.SAMPLED) === 0) return unrecorded.callSpan;
      return new RecordingCallSpan(recorder, caller, startedAt);
    },
    startReplay(model, origin, scope) {
      const link =
        origin?.span == null
          ? null
          : { traceId: parseTraceId(origin.span.traceId), spanId: parseSpanId(origin.span.spanId), traceFlags: origin.span.traceFlags };
      return new RecordingEngineSpan(recorder, null, model, false, { requestId: origin?.requestId, scope, link });
    },
    stats: () => ({
      exported: Atomics.load(counters, Counter.Exported),
      dropped: Atomics.load(counters, Counter.Dropped) + recorder.dropped,
      queued: Atomics.load(counters, Counter.Queued) + recorder.written - Atomics.load(counters, Counter.Read),
    }),
    flush: () => ask('flush'),
    async shutdown() {
      const done = ask('shutdown');
      const timer = setTimeout(() => void worker.terminate(), SHUTDOWN_WAIT_MS);
      await done;
      clearTimeout(timer);
      await worker.terminate();
    },
  };
}

/** The worker's file: beside this one, or, when the tests run the TypeScript sources, the built one (`npm test` builds first). */
function workerEntry(): URL {
  const beside = new URL('./span-export-worker.js', import.meta.url);
  return existsSync(fileURLToPath(beside)) ? beside : new URL('../../dist/telemetry/span-export-worker.js', import.meta.url);
}

/** The caller's span context from a valid `traceparent` (and its `tracestate`), else null. */
function callerSpanContext(propagator: W3CTraceContextPropagator, headers: IncomingHttpHeaders): SpanContext | null {
  if (headers.traceparent === undefined) return null;
  const context = trace.getSpanContext(propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter));
  return context !== undefined && isSpanContextValid(context) ? context : null;
}

/** What every recording span shares: the ring's writing end and the ids for origins. */
interface SpanRecorder {
  ids: SpanIdSource;
  ring: RecordRingWriter;
  slots: StringSlots;
  /** False once the worker is gone: records are dropped. */
  running: boolean;
  /** Spans in the records written to the ring (the worker counts those it has read). */
  written: number;
  /** Spans dropped here: the ring full, or the worker gone. */
  dropped: number;
}

/** Counts a record's spans as written, or as dropped when the ring had no room. */
function recorded(recorder: SpanRecorder, written: boolean, spanCount: number): void {
  if (written) recorder.written += spanCount;
  else recorder.dropped += spanCount;
}

/** What marks a replay's span: the call it replays (its request id and a link to its span, when known) and the call's scope. */
interface ReplayOf {
  requestId: string | undefined;
  scope: ScopeNames | undefined;
  link: { traceId: TraceId; spanId: SpanId; traceFlags: number } | null;
}

/**
 * The span of one chat call (kind SERVER), the caller's child when it sent a
 * `traceparent`. Its engine calls that end before it go in its record; its
 * ids are drawn by the worker unless the router asks for its origin (or an
 * engine call outlives it), which needs them here.
 */
class RecordingCallSpan implements CallSpan {
  private readonly trace: CallTraceFacts;
  private spanId: SpanId | null = null;
  /** The caller's span, this one's parent. */
  private readonly parent: SpanId | null;
  private readonly engineCalls: EngineCallFacts[] = [];
  /** Engine calls started and not ended. */
  private openEngineCalls = 0;
  private routeReason: RouteReason | null = null;
  private ended = false;

  constructor(
    private readonly recorder: SpanRecorder,
    caller: SpanContext | null,
    private readonly startTime: number,
  ) {
    if (caller === null) {
      this.trace = { traceId: null, traceState: null, traceFlags: TraceFlags.SAMPLED };
      this.parent = null;
    } else {
      this.trace = {
        traceId: parseTraceId(caller.traceId),
        traceState: caller.traceState?.serialize() ?? null,
        traceFlags: caller.traceFlags,
      };
      this.parent = parseSpanId(caller.spanId);
    }
  }

  origin(requestId: string): CallOrigin {
    const { traceId, spanId } = this.ids();
    return { requestId, span: { traceId: traceIdHex(traceId), spanId: spanIdHex(spanId), traceFlags: this.trace.traceFlags } };
  }

  setRouteReason(reason: RouteReason): void {
    this.routeReason = reason;
  }

  startEngineCall(model: string, reask = false): EngineSpan {
    this.openEngineCalls += 1;
    return new RecordingEngineSpan(this.recorder, this, model, reask, null);
  }

  end(finished: Trace, error: GatewayError | null): void {
    if (this.ended) return;
    this.ended = true;
    // An engine call still open will be written alone, as this span's child: it needs the ids now.
    if (this.openEngineCalls > 0) this.ids();
    const { recorder } = this;
    if (!recorder.running) {
      recorder.dropped += 1 + this.engineCalls.length;
      return;
    }
    const written = writeCallRecord(recorder.ring, recorder.slots, {
      trace: this.trace,
      spanId: this.spanId,
      parent: this.parent,
      startTime: this.startTime,
      endTime: now(),
      routeReason: this.routeReason,
      finished,
      error,
      engineCalls: this.engineCalls,
    });
    recorded(recorder, written, 1 + this.engineCalls.length);
  }

  /** An engine call that ended: in this span's record, or alone once this span has ended (then true is not returned). */
  engineCallEnded(engineCall: EngineCallFacts): boolean {
    this.openEngineCalls -= 1;
    if (this.ended) return false;
    this.engineCalls.push(engineCall);
    return true;
  }

  /** The trace and span ids, drawn here on first use. */
  ids(): { trace: CallTraceFacts & { traceId: TraceId }; traceId: TraceId; spanId: SpanId } {
    this.trace.traceId ??= this.recorder.ids.traceId();
    this.spanId ??= this.recorder.ids.spanId();
    const traceId = this.trace.traceId;
    return { trace: { ...this.trace, traceId }, traceId, spanId: this.spanId };
  }
}

/** An engine call's span (kind CLIENT): a call's child, or the root of a replay's own trace. */
class RecordingEngineSpan implements EngineSpan, EngineCallFacts {
  readonly startTime = now();
  endTime = 0;
  outcome: EngineOutcome = { replica: null, usage: null, finishReason: null };
  private ended = false;

  constructor(
    private readonly recorder: SpanRecorder,
    private readonly call: RecordingCallSpan | null,
    readonly model: string,
    readonly reask: boolean,
    private readonly replay: ReplayOf | null,
  ) {}

  end(outcome: EngineOutcome): void {
    if (this.ended) return;
    this.ended = true;
    this.outcome = outcome;
    this.endTime = now();
    if (this.call !== null && this.call.engineCallEnded(this)) return;
    const { recorder } = this;
    if (!recorder.running) {
      recorder.dropped += 1;
      return;
    }
    const parent = this.call === null ? null : this.call.ids();
    const written = writeEngineCallRecord(recorder.ring, recorder.slots, {
      engineCall: this,
      parent: parent === null ? null : { trace: parent.trace, spanId: parent.spanId },
      requestId: this.replay?.requestId,
      scope: this.replay?.scope,
      link: this.replay?.link ?? null,
    });
    recorded(recorder, written, 1);
  }
}
