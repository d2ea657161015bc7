/**
 * What the request thread hands the span worker for each call: the facts its
 * spans are made of, as one record in the shared ring (`record-ring.ts`).
 * `writeCallRecord` and `writeEngineCallRecord` run on the request thread;
 * `readSpanRecord` runs in the worker and fills a reused `SpanRecord`, which
 * `span-writers.ts` turns into OTLP spans.
 *
 * Most of a call's strings (models, project, workload, replica, reasons) are
 * those of the call before it, so each is sent only when it changed: the
 * writer and the reader each keep the last value of every string slot, and a
 * record says "the same" in one byte. The record's request id and times,
 * tokens and cost always travel. Span ids travel only when the request
 * thread already has them (a caller's `traceparent`, a call the router
 * sampled and linked to); the worker draws the rest.
 */
import type { ScopeNames } from '../api/scope.js';
import type { GatewayError } from '../api/errors.js';
import type { Trace } from '../store/store.js';
import { RecordRingWriter, type RecordRingReader } from './record-ring.js';
import type { SpanId, TraceId } from './span-ids.js';
import type { EngineOutcome, RouteReason } from './telemetry.js';

/** One engine call: a child of its call, or a replay's root. */
export interface EngineCallFacts {
  model: string;
  /** The guard's re-ask. */
  reask: boolean;
  startTime: number;
  endTime: number;
  outcome: EngineOutcome;
}

/** The trace a call belongs to: the caller's (from its `traceparent`), or taskgate's own. */
export interface CallTraceFacts {
  /** Known when the caller sent it or the router asked for the call's origin; else the worker draws it. */
  traceId: TraceId | null;
  traceState: string | null;
  traceFlags: number;
}

export interface CallFacts {
  trace: CallTraceFacts;
  /** Known when the router asked for the call's origin; else the worker draws it. */
  spanId: SpanId | null;
  /** The caller's span. */
  parent: SpanId | null;
  startTime: number;
  endTime: number;
  routeReason: RouteReason | null;
  finished: Trace;
  error: GatewayError | null;
  engineCalls: readonly EngineCallFacts[];
}

/**
 * An engine call written on its own: a replay (the root of a trace of its
 * own, linked to the call it replays), or, rarely, an engine call that ended
 * after its call (a child of the call's span, whose ids it then carries).
 */
export interface LoneEngineCallFacts {
  engineCall: EngineCallFacts;
  /** The call it belongs to (null for a replay). */
  parent: { trace: CallTraceFacts & { traceId: TraceId }; spanId: SpanId } | null;
  /** A replay's: the replayed call's request id and scope. */
  requestId: string | undefined;
  scope: ScopeNames | undefined;
  /** The replayed call's span, when it was traced. */
  link: { traceId: TraceId; spanId: SpanId; traceFlags: number } | null;
}

/** A record as the worker reads it: one object, filled anew for each record. */
export interface SpanRecord {
  /** A call (with its engine calls), or an engine call alone (a replay, or a call's late engine call, `parent` set). */
  kind: 'call' | 'engine-call';
  traceId: TraceId | null;
  traceState: string | null;
  traceFlags: number;
  spanId: SpanId | null;
  parent: SpanId | null;
  startTime: number;
  endTime: number;
  requestedModel: string | null;
  servedModel: string | null;
  finishReason: string | null;
  project: string | null;
  workload: string | null;
  routeReason: string | null;
  replica: string | null;
  environment: string | null;
  requestId: string | null;
  succeeded: boolean;
  stream: boolean;
  httpStatus: number;
  promptTokens: number;
  completionTokens: number;
  costUsd: number;
  errorCode: string | null;
  errorMessage: string | null;
  /** The call's engine calls (the first `engineCallCount`), or the replay's one. */
  engineCalls: EngineCallRecord[];
  engineCallCount: number;
  link: { traceId: TraceId; spanId: SpanId; traceFlags: number } | null;
}

export interface EngineCallRecord {
  model: string | null;
  reask: boolean;
  startTime: number;
  endTime: number;
  replica: string | null;
  failed: boolean;
  /** Usage (prompt, completion) when the reply had it. */
  hasUsage: boolean;
  promptTokens: number;
  completionTokens: number;
  finishReason: string | null;
  errorType: string | null;
  errorMessage: string | null;
}

/** String slots sent only when they change. */
const enum Slot {
  RequestedModel,
  ServedModel,
  FinishReason,
  Project,
  Workload,
  RouteReason,
  Replica,
  Environment,
  EngineModel,
  EngineReplica,
  EngineFinishReason,
  Count,
}

const enum Tag {
  Same = 0,
  Null = 1,
  Value = 2,
}

const enum RecordKind {
  Call = 1,
  EngineCall = 2,
}

/** Flags of a record. */
const TRACE_ID = 1;
const SPAN_ID = 2;
const PARENT = 4;
const TRACE_STATE = 8;
const SUCCEEDED = 16;
const STREAM = 32;
const ERROR = 64;
const LINK = 128;

/** Flags of an engine call. */
const REASK = 1;
const FAILED = 2;
const USAGE = 4;

/** Bytes of a record besides its strings: kind, flags, slots, ids, times, numbers, counts (generous). */
const FIXED_BYTES = 256;
/** Error messages and trace states past this many characters are cut (a span attribute, not a log). */
const MAX_TEXT = 4096;

/** The last value of each string slot, on one side of the ring. */
export type StringSlots = (string | null)[];

export function createStringSlots(): StringSlots {
  return new Array<string | null>(Slot.Count).fill(null);
}

/** Writes a call's record; false when the ring is full (the call's spans are dropped). */
export function writeCallRecord(writer: RecordRingWriter, slots: StringSlots, call: CallFacts): boolean {
  const { finished, error, trace } = call;
  let maxBytes =
    FIXED_BYTES +
    stringBytes(finished.requestId) +
    stringBytes(finished.requestedModel) +
    stringBytes(finished.servedModel) +
    stringBytes(finished.finishReason) +
    stringBytes(finished.project) +
    stringBytes(finished.workload) +
    stringBytes(finished.replica) +
    stringBytes(finished.environment) +
    stringBytes(call.routeReason) +
    textBytes(trace.traceState);
  if (error !== null) maxBytes += stringBytes(error.code) + textBytes(error.message);
  for (const engineCall of call.engineCalls) maxBytes += engineCallBytes(engineCall);
  if (!writer.begin(maxBytes)) return false;
  writer.u8(RecordKind.Call);
  writer.u8(
    (trace.traceId === null ? 0 : TRACE_ID) |
      (call.spanId === null ? 0 : SPAN_ID) |
      (call.parent === null ? 0 : PARENT) |
      (trace.traceState === null ? 0 : TRACE_STATE) |
      (finished.status === 'ok' ? SUCCEEDED : 0) |
      (finished.stream ? STREAM : 0) |
      (error === null ? 0 : ERROR),
  );
  writer.u8(trace.traceFlags);
  if (trace.traceId !== null) writeTraceId(writer, trace.traceId);
  if (call.spanId !== null) writeSpanId(writer, call.spanId);
  if (call.parent !== null) writeSpanId(writer, call.parent);
  if (trace.traceState !== null) writer.string(trace.traceState.slice(0, MAX_TEXT));
  writer.f64(call.startTime);
  writer.f64(call.endTime);
  slot(writer, slots, Slot.RequestedModel, finished.requestedModel);
  slot(writer, slots, Slot.ServedModel, finished.servedModel);
  slot(writer, slots, Slot.FinishReason, finished.finishReason);
  slot(writer, slots, Slot.Project, finished.project);
  slot(writer, slots, Slot.Workload, finished.workload);
  slot(writer, slots, Slot.RouteReason, call.routeReason);
  slot(writer, slots, Slot.Replica, finished.replica);
  slot(writer, slots, Slot.Environment, finished.environment);
  writer.string(finished.requestId);
  writer.u32(finished.httpStatus);
  writer.f64(finished.promptTokens);
  writer.f64(finished.completionTokens);
  writer.f64(finished.costUsd);
  if (error !== null) {
    writer.string(error.code);
    writer.string(error.message.slice(0, MAX_TEXT));
  }
  writer.u8(call.engineCalls.length);
  for (const engineCall of call.engineCalls) writeEngineCall(writer, slots, engineCall);
  writer.commit();
  return true;
}

/** Writes the record of an engine call alone; false when the ring is full. */
export function writeEngineCallRecord(writer: RecordRingWriter, slots: StringSlots, lone: LoneEngineCallFacts): boolean {
  const maxBytes =
    FIXED_BYTES +
    stringBytes(lone.requestId ?? null) +
    stringBytes(lone.scope?.project ?? null) +
    stringBytes(lone.scope?.workload ?? null) +
    textBytes(lone.parent?.trace.traceState ?? null) +
    engineCallBytes(lone.engineCall);
  if (!writer.begin(maxBytes)) return false;
  const { parent, link } = lone;
  writer.u8(RecordKind.EngineCall);
  writer.u8((link === null ? 0 : LINK) | (parent === null ? 0 : PARENT));
  if (link !== null) {
    writeTraceId(writer, link.traceId);
    writeSpanId(writer, link.spanId);
    writer.u8(link.traceFlags);
  }
  if (parent !== null) {
    writeTraceId(writer, parent.trace.traceId);
    writeSpanId(writer, parent.spanId);
    writer.u8(parent.trace.traceFlags);
    nullable(writer, parent.trace.traceState?.slice(0, MAX_TEXT) ?? null);
  }
  nullable(writer, lone.requestId ?? null);
  nullable(writer, lone.scope?.project ?? null);
  nullable(writer, lone.scope?.workload ?? null);
  writeEngineCall(writer, slots, lone.engineCall);
  writer.commit();
  return true;
}

/** The worker's side: a reused record and the slots it fills from. */
export function createSpanRecord(): SpanRecord {
  return {
    kind: 'call',
    traceId: null,
    traceState: null,
    traceFlags: 1,
    spanId: null,
    parent: null,
    startTime: 0,
    endTime: 0,
    requestedModel: null,
    servedModel: null,
    finishReason: null,
    project: null,
    workload: null,
    routeReason: null,
    replica: null,
    environment: null,
    requestId: null,
    succeeded: false,
    stream: false,
    httpStatus: 0,
    promptTokens: 0,
    completionTokens: 0,
    costUsd: 0,
    errorCode: null,
    errorMessage: null,
    engineCalls: [],
    engineCallCount: 0,
    link: null,
  };
}

/** Reads the next record into `record`. */
export function readSpanRecord(reader: RecordRingReader, slots: StringSlots, record: SpanRecord): void {
  const kind = reader.u8();
  const flags = reader.u8();
  if (kind === RecordKind.EngineCall) {
    record.kind = 'engine-call';
    record.link = null;
    if ((flags & LINK) !== 0) {
      const traceId = readTraceId(reader);
      const spanId = readSpanId(reader);
      record.link = { traceId, spanId, traceFlags: reader.u8() };
    }
    if ((flags & PARENT) !== 0) {
      record.traceId = readTraceId(reader);
      record.parent = readSpanId(reader);
      record.traceFlags = reader.u8();
      record.traceState = readNullable(reader);
    } else {
      record.traceId = null;
      record.parent = null;
      record.traceFlags = 1;
      record.traceState = null;
    }
    record.requestId = readNullable(reader);
    record.project = readNullable(reader);
    record.workload = readNullable(reader);
    record.engineCallCount = 1;
    readEngineCall(reader, slots, engineCallAt(record, 0));
    return;
  }
  record.kind = 'call';
  record.link = null;
  record.traceFlags = reader.u8();
  record.traceId = (flags & TRACE_ID) === 0 ? null : readTraceId(reader);
  record.spanId = (flags & SPAN_ID) === 0 ? null : readSpanId(reader);
  record.parent = (flags & PARENT) === 0 ? null : readSpanId(reader);
  record.traceState = (flags & TRACE_STATE) === 0 ? null : reader.string();
  record.succeeded = (flags & SUCCEEDED) !== 0;
  record.stream = (flags & STREAM) !== 0;
  record.startTime = reader.f64();
  record.endTime = reader.f64();
  record.requestedModel = readSlot(reader, slots, Slot.RequestedModel);
  record.servedModel = readSlot(reader, slots, Slot.ServedModel);
  record.finishReason = readSlot(reader, slots, Slot.FinishReason);
  record.project = readSlot(reader, slots, Slot.Project);
  record.workload = readSlot(reader, slots, Slot.Workload);
  record.routeReason = readSlot(reader, slots, Slot.RouteReason);
  record.replica = readSlot(reader, slots, Slot.Replica);
  record.environment = readSlot(reader, slots, Slot.Environment);
  record.requestId = reader.string();
  record.httpStatus = reader.u32();
  record.promptTokens = reader.f64();
  record.completionTokens = reader.f64();
  record.costUsd = reader.f64();
  if ((flags & ERROR) !== 0) {
    record.errorCode = reader.string();
    record.errorMessage = reader.string();
  } else {
    record.errorCode = null;
    record.errorMessage = null;
  }
  record.engineCallCount = reader.u8();
  for (let index = 0; index < record.engineCallCount; index++) readEngineCall(reader, slots, engineCallAt(record, index));
}

function engineCallAt(record: SpanRecord, index: number): EngineCallRecord {
  let engineCall = record.engineCalls[index];
  if (engineCall === undefined) {
    engineCall = {
      model: null,
      reask: false,
      startTime: 0,
      endTime: 0,
      replica: null,
      failed: false,
      hasUsage: false,
      promptTokens: 0,
      completionTokens: 0,
      finishReason: null,
      errorType: null,
      errorMessage: null,
    };
    record.engineCalls[index] = engineCall;
  }
  return engineCall;
}

function writeEngineCall(writer: RecordRingWriter, slots: StringSlots, engineCall: EngineCallFacts): void {
  const { outcome } = engineCall;
  const failed = 'error' in outcome;
  const usage = failed ? null : outcome.usage;
  writer.u8((engineCall.reask ? REASK : 0) | (failed ? FAILED : 0) | (usage === null ? 0 : USAGE));
  writer.f64(engineCall.startTime);
  writer.f64(engineCall.endTime);
  slot(writer, slots, Slot.EngineModel, engineCall.model);
  slot(writer, slots, Slot.EngineReplica, outcome.replica);
  if (failed) {
    writer.string(errorType(outcome.error));
    writer.string(errorMessage(outcome.error).slice(0, MAX_TEXT));
    return;
  }
  slot(writer, slots, Slot.EngineFinishReason, outcome.finishReason);
  if (usage !== null) {
    writer.f64(usage.prompt_tokens);
    writer.f64(usage.completion_tokens);
  }
}

function readEngineCall(reader: RecordRingReader, slots: StringSlots, engineCall: EngineCallRecord): void {
  const flags = reader.u8();
  engineCall.reask = (flags & REASK) !== 0;
  engineCall.failed = (flags & FAILED) !== 0;
  engineCall.hasUsage = (flags & USAGE) !== 0;
  engineCall.startTime = reader.f64();
  engineCall.endTime = reader.f64();
  engineCall.model = readSlot(reader, slots, Slot.EngineModel);
  engineCall.replica = readSlot(reader, slots, Slot.EngineReplica);
  if (engineCall.failed) {
    engineCall.errorType = reader.string();
    engineCall.errorMessage = reader.string();
    engineCall.finishReason = null;
    return;
  }
  engineCall.errorType = null;
  engineCall.errorMessage = null;
  engineCall.finishReason = readSlot(reader, slots, Slot.EngineFinishReason);
  engineCall.promptTokens = engineCall.hasUsage ? reader.f64() : 0;
  engineCall.completionTokens = engineCall.hasUsage ? reader.f64() : 0;
}

function engineCallBytes(engineCall: EngineCallFacts): number {
  const { outcome } = engineCall;
  const failed = 'error' in outcome;
  return (
    64 +
    stringBytes(engineCall.model) +
    stringBytes(outcome.replica) +
    (failed ? stringBytes(errorType(outcome.error)) + textBytes(errorMessage(outcome.error)) : stringBytes(outcome.finishReason))
  );
}

/** A slot's value: one byte when it is the last one sent. */
function slot(writer: RecordRingWriter, slots: StringSlots, index: Slot, value: string | null): void {
  if (value === slots[index]) {
    writer.u8(Tag.Same);
    return;
  }
  slots[index] = value;
  nullable(writer, value);
}

function readSlot(reader: RecordRingReader, slots: StringSlots, index: Slot): string | null {
  const tag = reader.u8();
  if (tag === Tag.Same) return slots[index] ?? null;
  const value = tag === Tag.Null ? null : reader.string();
  slots[index] = value;
  return value;
}

function nullable(writer: RecordRingWriter, value: string | null): void {
  if (value === null) writer.u8(Tag.Null);
  else {
    writer.u8(Tag.Value);
    writer.string(value);
  }
}

function readNullable(reader: RecordRingReader): string | null {
  return reader.u8() === Tag.Null ? null : reader.string();
}

function writeTraceId(writer: RecordRingWriter, id: TraceId): void {
  writer.u32(id.w0);
  writer.u32(id.w1);
  writer.u32(id.w2);
  writer.u32(id.w3);
}

function writeSpanId(writer: RecordRingWriter, id: SpanId): void {
  writer.u32(id.high);
  writer.u32(id.low);
}

function readTraceId(reader: RecordRingReader): TraceId {
  return { w0: reader.u32(), w1: reader.u32(), w2: reader.u32(), w3: reader.u32() };
}

function readSpanId(reader: RecordRingReader): SpanId {
  return { high: reader.u32(), low: reader.u32() };
}

function stringBytes(value: string | null): number {
  return value === null ? 1 : 1 + RecordRingWriter.stringBytes(value);
}

function textBytes(value: string | null): number {
  return value === null ? 1 : 5 + 3 * Math.min(value.length, MAX_TEXT);
}

/** `error.type`: the error's stable code when it has one, else its class name. */
function errorType(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string') return error.code;
  return error instanceof Error ? error.name : 'unknown';
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
