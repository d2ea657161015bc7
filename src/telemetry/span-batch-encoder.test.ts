/**
 * The span encoders against the official serializers of
 * `@opentelemetry/otlp-transformer`: the same spans, written through our
 * encoder and given to the official one as SDK spans, decode to the same
 * request, for both protocols (protobuf decoded with the full OTLP trace
 * schema, written here; JSON parsed).
 */
import { SpanKind, SpanStatusCode, type AttributeValue, type Attributes } from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { createJsonSpanEncoder } from './json-span-encoder.js';
import { createProtobufSpanEncoder } from './protobuf-span-encoder.js';
import { AttributeGroup, AttributeKey } from './span-attributes.js';
import { parseSpanId, parseTraceId, spanIdHex, traceIdHex } from './span-ids.js';
import {
  secondsAndNanos,
  type SpanBatchEncoder,
  type SpanHead,
  type SpanLink,
  type SpanSource,
  type SpanTail,
} from './span-batch-encoder.js';

const otlpSchema = protobuf
  .parse(
    `
syntax = "proto3";
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; ArrayValue array_value = 5; bytes bytes_value = 7; } }
message ArrayValue { repeated AnyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
message InstrumentationScope { string name = 1; string version = 2; repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4; }
message Status { string message = 2; int32 code = 3; }
message Link { bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; repeated KeyValue attributes = 4; uint32 dropped_attributes_count = 5; fixed32 flags = 6; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; string name = 5; int32 kind = 6;
  fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8; repeated KeyValue attributes = 9; uint32 dropped_attributes_count = 10;
  uint32 dropped_events_count = 12; repeated Link links = 13; uint32 dropped_links_count = 14; Status status = 15; fixed32 flags = 16;
}
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; string schema_url = 3; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
`,
  )
  .root.lookupType('ExportTraceServiceRequest');

type OfficialSpan = Parameters<typeof ProtobufTraceSerializer.serializeRequest>[0][number];

/** A span's head with its ids in hex, as the official side takes them. */
type HexHead = Omit<SpanHead, 'traceId' | 'spanId' | 'parentSpanId'> & { traceId: string; spanId: string; parentSpanId: string | null };

/** A span as both sides take it. */
interface TestSpan {
  head: HexHead;
  attributes: Attributes;
  tail: SpanTail;
}

const source: SpanSource = {
  resource: { 'service.name': 'taskgate', 'telemetry.sdk.language': 'nodejs', 'telemetry.sdk.version': '2.12.1' },
  scope: { name: 'taskgate' },
};

const traceId = '0af7651916cd43dd8448eb211c80319c';
const link: SpanLink = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1, isRemote: true };

const spans: TestSpan[] = [
  {
    // A call continuing a caller's trace, with every kind of attribute value.
    head: {
      traceId,
      spanId: 'b7ad6b7169203331',
      parentSpanId: '53995c3f42cd8ad8',
      traceState: 'vendor=opaque,other=1',
      name: 'chat big',
      kind: SpanKind.SERVER,
      // eslint-disable-next-line no-loss-of-precision -- epoch milliseconds as the double a clock gives, digits past its precision included
      startTime: 1_764_000_000_123.456_7,
      endTime: 1_764_000_000_130.001,
    },
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'big',
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.input_tokens': 12,
      'taskgate.cost_usd': 0.000_123,
      'taskgate.stream': false,
      'taskgate.note': 'héllo wörld ✓',
      'taskgate.long': 'x'.repeat(300),
      'taskgate.large': 2 ** 40 + 3,
      'taskgate.negative': -5,
      'taskgate.empty': [],
    },
    tail: { status: SpanStatusCode.UNSET, statusMessage: undefined, links: [], traceFlags: 1, parentIsRemote: true },
  },
  {
    // Its engine call, failed.
    head: {
      traceId,
      spanId: '1122334455667788',
      parentSpanId: 'b7ad6b7169203331',
      traceState: 'vendor=opaque,other=1',
      name: 'chat big',
      kind: SpanKind.CLIENT,
      startTime: 1_764_000_000_124,
      endTime: 1_764_000_000_129.5,
    },
    attributes: { 'error.type': 'engine_unavailable', 'taskgate.replica': 'local' },
    tail: { status: SpanStatusCode.ERROR, statusMessage: 'No engine answered in time.', links: [], traceFlags: 1, parentIsRemote: false },
  },
  {
    // A replay: a root span of its own trace, linked to the call.
    head: {
      traceId: 'ffeeddccbbaa99887766554433221100',
      spanId: '0102030405060708',
      parentSpanId: null,
      traceState: null,
      name: 'chat tiny',
      kind: SpanKind.CLIENT,
      startTime: 1_764_000_001_000,
      endTime: 1_764_000_001_250.25,
    },
    attributes: { 'taskgate.replay': true },
    tail: { status: SpanStatusCode.UNSET, statusMessage: undefined, links: [link], traceFlags: 1, parentIsRemote: false },
  },
];

/** The head as our encoders take it: ids as numbers. */
function head(hex: HexHead): SpanHead {
  return {
    ...hex,
    traceId: parseTraceId(hex.traceId),
    spanId: parseSpanId(hex.spanId),
    parentSpanId: hex.parentSpanId === null ? null : parseSpanId(hex.parentSpanId),
  };
}

function write(encoder: SpanBatchEncoder, span: TestSpan): void {
  encoder.beginSpan(head(span.head));
  for (const [name, value] of Object.entries(span.attributes)) encoder.attribute(new AttributeKey(name), value as AttributeValue);
  encoder.endSpan(span.tail);
}

/** One resource object for every span: the official serializer groups spans by the resource's identity. */
const officialResource = { attributes: source.resource } as unknown as OfficialSpan['resource'];

function official(span: TestSpan): OfficialSpan {
  const time = (epochMilliseconds: number) => secondsAndNanos(epochMilliseconds);
  const { head, tail } = span;
  return {
    name: head.name,
    kind: head.kind,
    spanContext: () => ({
      traceId: head.traceId,
      spanId: head.spanId,
      traceFlags: tail.traceFlags,
      ...(head.traceState === null ? {} : { traceState: new TraceState(head.traceState) }),
    }),
    ...(head.parentSpanId === null
      ? {}
      : {
          parentSpanContext: {
            traceId: head.traceId,
            spanId: head.parentSpanId,
            traceFlags: tail.traceFlags,
            isRemote: tail.parentIsRemote,
          },
        }),
    startTime: time(head.startTime),
    endTime: time(head.endTime),
    duration: [0, 0],
    ended: true,
    status: { code: tail.status, ...(tail.statusMessage === undefined ? {} : { message: tail.statusMessage }) },
    attributes: span.attributes,
    links: tail.links.map(({ traceId: linkedTrace, spanId, traceFlags, isRemote }) => ({
      context: { traceId: linkedTrace, spanId, traceFlags, isRemote },
    })),
    events: [],
    resource: officialResource,
    instrumentationScope: source.scope,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  } as OfficialSpan;
}

const decodeProtobuf = (body: Uint8Array) => otlpSchema.toObject(otlpSchema.decode(body), { longs: String, bytes: String, defaults: true });
const decodeJson = (body: Uint8Array) => JSON.parse(Buffer.from(body).toString('utf8')) as unknown;

/** The spans of a decoded request (one resource, one scope). */
function spansIn(request: unknown): unknown[] {
  const { resourceSpans } = request as { resourceSpans: Array<{ scopeSpans: Array<{ spans?: unknown[] }> }> };
  return resourceSpans.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans ?? []));
}

const protocols = [
  { name: 'http/protobuf', create: createProtobufSpanEncoder, reference: ProtobufTraceSerializer, decode: decodeProtobuf },
  { name: 'http/json', create: createJsonSpanEncoder, reference: JsonTraceSerializer, decode: decodeJson },
];

describe.each(protocols)('the $name span encoder', ({ create, reference, decode }) => {
  it('writes the request the official serializer makes from the same spans', () => {
    const encoder = create(source);
    for (const span of spans) write(encoder, span);
    expect(encoder.spanCount).toBe(3);
    const batch = encoder.take();
    expect(batch.spanCount).toBe(3);
    expect(decode(batch.body)).toEqual(decode(reference.serializeRequest(spans.map(official)) as Uint8Array));
    expect(encoder.spanCount).toBe(0);
  });

  it('starts a new batch after each take, and leaves a batch not yet released intact', () => {
    const encoder = create(source);
    write(encoder, spans[0] as TestSpan);
    const first = encoder.take();
    const firstBytes = Buffer.from(first.body);
    write(encoder, spans[1] as TestSpan);
    write(encoder, spans[2] as TestSpan);
    const second = encoder.take();
    expect(Buffer.from(first.body).equals(firstBytes)).toBe(true);
    expect(decode(second.body)).toEqual(decode(reference.serializeRequest(spans.slice(1).map(official)) as Uint8Array));
    // A released buffer is written again: the next batch is whole.
    first.release();
    second.release();
    write(encoder, spans[2] as TestSpan);
    expect(decode(encoder.take().body)).toEqual(decode(reference.serializeRequest([official(spans[2] as TestSpan)]) as Uint8Array));
  });

  it('forgets a span abandoned half-written', () => {
    const encoder = create(source);
    write(encoder, spans[0] as TestSpan);
    encoder.beginSpan(head((spans[1] as TestSpan).head));
    encoder.attribute(new AttributeKey('half'), 'written');
    encoder.abandonSpan();
    write(encoder, spans[2] as TestSpan);
    expect(encoder.spanCount).toBe(2);
    expect(decode(encoder.take().body)).toEqual(
      decode(reference.serializeRequest([spans[0], spans[2]].map((span) => official(span as TestSpan))) as Uint8Array),
    );
  });

  it('writes a whole request with no span when nothing was written', () => {
    const encoder = create(source);
    expect(spansIn(decode(encoder.take().body))).toEqual([]);
    write(encoder, spans[0] as TestSpan);
    expect(spansIn(decode(encoder.take().body))).toHaveLength(1);
  });

  it('writes a group of attributes the same when its values repeat, change, or are left out', () => {
    const encoder = create(source);
    const keys = [
      'gen_ai.request.model',
      'gen_ai.response.finish_reasons',
      'taskgate.project',
      'taskgate.stream',
      'http.response.status_code',
    ].map((name) => new AttributeKey(name));
    const group = new AttributeGroup(keys);
    // Repeats (written as a copy of the last bytes), a changed array item, a value left out, a changed number, and the first values again.
    const valuesOfCalls: (AttributeValue | undefined)[][] = [
      ['big', ['stop'], 'bench', false, 200],
      ['big', ['stop'], 'bench', false, 200],
      ['big', ['length'], 'bench', false, 200],
      ['big', ['length'], undefined, false, 200],
      ['big', ['length'], undefined, false, 503],
      ['big', ['stop'], 'bench', false, 200],
      ['big', ['stop', 'length'], 'bénch', true, 200],
    ];
    const written = valuesOfCalls.map((values, call) => {
      const span: TestSpan = {
        ...(spans[1] as TestSpan),
        attributes: {
          'taskgate.request_id': `req_${call}`,
          ...Object.fromEntries(keys.flatMap((key, index) => (values[index] === undefined ? [] : [[key.name, values[index]]]))),
        },
      };
      encoder.beginSpan(head(span.head));
      encoder.attribute(new AttributeKey('taskgate.request_id'), `req_${call}`);
      values.forEach((value, index) => (group.values[index] = value));
      encoder.attributes(group);
      encoder.endSpan(span.tail);
      return span;
    });
    expect(decode(encoder.take().body)).toEqual(decode(reference.serializeRequest(written.map(official)) as Uint8Array));
  });

  it('fills batches larger than a buffer, with spans over 16 KiB', () => {
    const encoder = create(source);
    const big: TestSpan = { ...(spans[1] as TestSpan), attributes: { 'taskgate.body': 'y'.repeat(20_000) } };
    const batch = [...Array.from({ length: 200 }, () => spans[0] as TestSpan), big];
    for (const span of batch) write(encoder, span);
    expect(decode(encoder.take().body)).toEqual(decode(reference.serializeRequest(batch.map(official)) as Uint8Array));
  });
});

describe('span and trace ids', () => {
  it('turn into hex and back, leading zeros and all bits kept', () => {
    for (const hex of ['00f067aa0ba902b7', 'ffffffffffffffff', '0000000000000001', '8000000000000000'])
      expect(spanIdHex(parseSpanId(hex))).toBe(hex);
    for (const hex of ['4bf92f3577b34da6a3ce929d0e0e4736', '0000000000000000000000000000ffff', 'ffffffffffffffffffffffffffffffff'])
      expect(traceIdHex(parseTraceId(hex))).toBe(hex);
  });
});

describe('secondsAndNanos', () => {
  it('splits epoch milliseconds into seconds and nanoseconds exactly', () => {
    // eslint-disable-next-line no-loss-of-precision -- epoch milliseconds as the double a clock gives, digits past its precision included
    for (const milliseconds of [0, 1, 999.999_999, 1_764_000_000_123.456, 1_764_000_000_999.999_9, 4_102_444_800_000.25]) {
      const [seconds, nanoseconds] = secondsAndNanos(milliseconds);
      expect(Number.isInteger(seconds) && Number.isInteger(nanoseconds)).toBe(true);
      expect(nanoseconds).toBeGreaterThanOrEqual(0);
      expect(nanoseconds).toBeLessThan(1e9);
      expect(Math.abs(seconds * 1000 + nanoseconds / 1e6 - milliseconds)).toBeLessThan(1e-3);
    }
  });
});
