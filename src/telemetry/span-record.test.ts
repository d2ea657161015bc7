import { describe, expect, it } from 'vitest';
import { traceFixture } from '../../test/contracts/store/trace-fixture.js';
import { EngineError, RateLimitError } from '../api/errors.js';
import type { Trace } from '../store/store.js';
import { createRecordRing, RecordRingReader, RecordRingWriter } from './record-ring.js';
import {
  createSpanRecord,
  createStringSlots,
  readSpanRecord,
  writeCallRecord,
  writeEngineCallRecord,
  type CallFacts,
  type SpanRecord,
} from './span-record.js';

const finished: Trace = traceFixture({
  requestId: 'req_0123456789abcdef',
  accountId: 'acct',
  keyId: 'key',
  workload: 'support-triage',
  requestedModel: 'auto',
  servedModel: 'qwen-0.5b',
  replica: 'cpu-1',
  promptTokens: 31,
  completionTokens: 7,
  costUsd: 0.000012,
  engineSeconds: 0.2,
  latencyMs: 210,
  stream: true,
  startedAt: 1_700_000_000_000,
  requestBody: null,
  replyBody: null,
});

const call: CallFacts = {
  trace: { traceId: { w0: 1, w1: 2, w2: 3, w3: 0xffffffff }, traceState: 'vendor=é', traceFlags: 1 },
  spanId: { high: 0xdeadbeef, low: 7 },
  parent: { high: 9, low: 10 },
  startTime: 1_700_000_000_000.25,
  endTime: 1_700_000_000_210.5,
  routeReason: 'routed',
  finished,
  error: null,
  engineCalls: [
    {
      model: 'qwen-0.5b',
      reask: false,
      startTime: 1,
      endTime: 2,
      outcome: { replica: 'cpu-1', error: new EngineError('the engine went away') },
    },
    {
      model: 'qwen-0.5b',
      reask: true,
      startTime: 3,
      endTime: 4,
      outcome: { replica: 'cpu-1', usage: { prompt_tokens: 31, completion_tokens: 7, total_tokens: 38 }, finishReason: 'stop' },
    },
  ],
};

function roundTrip(write: (writer: RecordRingWriter, slots: ReturnType<typeof createStringSlots>) => void): SpanRecord[] {
  const ring = createRecordRing(64 * 1024);
  const writer = new RecordRingWriter(ring);
  write(writer, createStringSlots());
  const slots = createStringSlots();
  const records: SpanRecord[] = [];
  new RecordRingReader(ring).drain((reader) => {
    const record = createSpanRecord();
    readSpanRecord(reader, slots, record);
    records.push(structuredClone(record));
  });
  return records;
}

describe('span records', () => {
  it("carry a call's facts and its engine calls, the failed one's error and the re-ask's usage, to the worker", () => {
    const [record] = roundTrip((writer, slots) => expect(writeCallRecord(writer, slots, call)).toBe(true));
    expect(record).toMatchObject({
      kind: 'call',
      traceId: call.trace.traceId,
      traceState: 'vendor=é',
      spanId: call.spanId,
      parent: call.parent,
      startTime: call.startTime,
      endTime: call.endTime,
      requestedModel: 'auto',
      servedModel: 'qwen-0.5b',
      project: 'shop',
      workload: 'support-triage',
      routeReason: 'routed',
      requestId: 'req_0123456789abcdef',
      succeeded: true,
      stream: true,
      httpStatus: 200,
      promptTokens: 31,
      completionTokens: 7,
      costUsd: 0.000012,
      errorCode: null,
      engineCallCount: 2,
    });
    expect(record?.engineCalls.slice(0, 2)).toMatchObject([
      { model: 'qwen-0.5b', reask: false, failed: true, errorType: 'engine_error', errorMessage: 'the engine went away', hasUsage: false },
      { model: 'qwen-0.5b', reask: true, failed: false, finishReason: 'stop', hasUsage: true, promptTokens: 31, completionTokens: 7 },
    ]);
  });

  it('send a string that repeats once, and still read it on every record; a change and a null come through', () => {
    const error = new RateLimitError(60, 2);
    const failed: Trace = { ...finished, status: 'error', workload: null, servedModel: 'other', httpStatus: 429 };
    const records = roundTrip((writer, slots) => {
      for (let index = 0; index < 3; index++)
        writeCallRecord(writer, slots, { ...call, trace: { traceId: null, traceState: null, traceFlags: 1 }, spanId: null, parent: null });
      writeCallRecord(writer, slots, { ...call, finished: failed, error, engineCalls: [] });
    });
    expect(records.map((record) => [record.workload, record.servedModel, record.project])).toEqual([
      ['support-triage', 'qwen-0.5b', 'shop'],
      ['support-triage', 'qwen-0.5b', 'shop'],
      ['support-triage', 'qwen-0.5b', 'shop'],
      [null, 'other', 'shop'],
    ]);
    expect(records[0]).toMatchObject({ traceId: null, spanId: null, parent: null, traceState: null });
    expect(records[3]).toMatchObject({
      succeeded: false,
      httpStatus: 429,
      errorCode: 'rate_limit_exceeded',
      errorMessage: error.message,
      engineCallCount: 0,
    });
  });

  it('carry a replay with the link to the call it replays, and a late engine call with its parent', () => {
    const link = { traceId: { w0: 5, w1: 6, w2: 7, w3: 8 }, spanId: { high: 1, low: 2 }, traceFlags: 1 };
    const records = roundTrip((writer, slots) => {
      writeEngineCallRecord(writer, slots, {
        engineCall: call.engineCalls[1]!,
        parent: null,
        requestId: 'req_replayed',
        scope: { project: 'shop', workload: 'triage' },
        link,
      });
      const parent = { trace: { ...call.trace, traceId: link.traceId }, spanId: { high: 3, low: 4 } };
      writeEngineCallRecord(writer, slots, {
        engineCall: call.engineCalls[0]!,
        parent,
        requestId: undefined,
        scope: undefined,
        link: null,
      });
    });
    expect(records[0]).toMatchObject({
      kind: 'engine-call',
      link,
      parent: null,
      traceId: null,
      requestId: 'req_replayed',
      project: 'shop',
      workload: 'triage',
      engineCallCount: 1,
    });
    expect(records[0]?.engineCalls[0]).toMatchObject({ reask: true, finishReason: 'stop', promptTokens: 31 });
    expect(records[1]).toMatchObject({
      kind: 'engine-call',
      link: null,
      traceId: link.traceId,
      parent: { high: 3, low: 4 },
      traceState: 'vendor=é',
      requestId: null,
    });
    expect(records[1]?.engineCalls[0]).toMatchObject({ failed: true, errorType: 'engine_error' });
  });
});
