/**
 * OpenTelemetry export end to end: the real gateway and a scripted engine,
 * and an OTLP/HTTP receiver this test starts on 127.0.0.1 that decodes what
 * taskgate sends, over both protocols: http/json as the OTLP JSON mapping
 * says, http/protobuf with a minimal schema of the OTLP trace messages
 * written here (only the fields read), which the body must decode with.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import protobuf from 'protobufjs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { callFeatures } from '../src/routing/call-features.js';
import { startScriptedEngine, type ScriptedEngine } from './helpers/scripted-engine.js';
import { ADMIN_KEY, startTestGateway, type TestGateway } from './helpers/test-gateway.js';

/** The OTLP trace messages (opentelemetry-proto `trace/v1`, `common/v1`, `resource/v1`), the fields this test reads. */
const otlpSchema = protobuf
  .parse(
    `
syntax = "proto3";
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; ArrayValue array_value = 5; } }
message ArrayValue { repeated AnyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message Resource { repeated KeyValue attributes = 1; }
message Status { string message = 2; int32 code = 3; }
message Link { bytes trace_id = 1; bytes span_id = 2; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; string name = 5; int32 kind = 6;
  repeated KeyValue attributes = 9; repeated Link links = 13; Status status = 15;
}
message ScopeSpans { repeated Span spans = 2; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
`,
  )
  .root.lookupType('ExportTraceServiceRequest');

/** A received span, protocol aside. Kinds: 2 SERVER, 3 CLIENT; status code 2 is ERROR. */
interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  traceState: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  links: Array<{ traceId: string; spanId: string }>;
  statusCode: number;
  serviceName: unknown;
}

interface ExportRequest {
  path: string;
  headers: IncomingHttpHeaders;
  spans: ReceivedSpan[];
}

type JsonValue = {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string;
  doubleValue?: number;
  arrayValue?: { values?: JsonValue[] };
};
type ProtoValue = {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: { toNumber(): number } | number;
  doubleValue?: number;
  arrayValue?: { values?: ProtoValue[] };
};
type Pair<Value> = { key: string; value?: Value };

function jsonValue(value: JsonValue | undefined): unknown {
  if (value === undefined) return undefined;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(jsonValue);
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.boolValue ?? value.doubleValue;
}

function protoValue(value: ProtoValue | undefined): unknown {
  if (value === undefined) return undefined;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(protoValue);
  if (value.intValue !== undefined) return typeof value.intValue === 'number' ? value.intValue : value.intValue.toNumber();
  return value.stringValue ?? value.boolValue ?? value.doubleValue;
}

function attributesOf<Value>(pairs: Array<Pair<Value>> | undefined, read: (value: Value | undefined) => unknown): Record<string, unknown> {
  return Object.fromEntries((pairs ?? []).map((pair) => [pair.key, read(pair.value)]));
}

const hex = (bytes: Uint8Array | undefined) => Buffer.from(bytes ?? []).toString('hex');

interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  traceState?: string;
  name: string;
  kind: number;
  attributes?: Array<Pair<JsonValue>>;
  links?: Array<{ traceId: string; spanId: string }>;
  status?: { code?: number };
}
interface JsonRequest {
  resourceSpans: Array<{ resource?: { attributes?: Array<Pair<JsonValue>> }; scopeSpans: Array<{ spans?: JsonSpan[] }> }>;
}
interface ProtoSpan {
  traceId: Uint8Array;
  spanId: Uint8Array;
  parentSpanId?: Uint8Array;
  traceState?: string;
  name: string;
  kind?: number;
  attributes?: Array<Pair<ProtoValue>>;
  links?: Array<{ traceId: Uint8Array; spanId: Uint8Array }>;
  status?: { code?: number };
}
interface ProtoRequest {
  resourceSpans?: Array<{ resource?: { attributes?: Array<Pair<ProtoValue>> }; scopeSpans?: Array<{ spans?: ProtoSpan[] }> }>;
}

function decodeJson(body: Buffer): ReceivedSpan[] {
  const request = JSON.parse(body.toString('utf8')) as JsonRequest;
  return request.resourceSpans.flatMap((resourceSpans) =>
    resourceSpans.scopeSpans.flatMap((scopeSpans) =>
      (scopeSpans.spans ?? []).map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ?? '',
        traceState: span.traceState ?? '',
        name: span.name,
        kind: span.kind,
        attributes: attributesOf(span.attributes, jsonValue),
        links: (span.links ?? []).map((link) => ({ traceId: link.traceId, spanId: link.spanId })),
        statusCode: span.status?.code ?? 0,
        serviceName: attributesOf(resourceSpans.resource?.attributes, jsonValue)['service.name'],
      })),
    ),
  );
}

function decodeProtobuf(body: Buffer): ReceivedSpan[] {
  const request = otlpSchema.toObject(otlpSchema.decode(body), { defaults: false }) as ProtoRequest;
  return (request.resourceSpans ?? []).flatMap((resourceSpans) =>
    (resourceSpans.scopeSpans ?? []).flatMap((scopeSpans) =>
      (scopeSpans.spans ?? []).map((span) => ({
        traceId: hex(span.traceId),
        spanId: hex(span.spanId),
        parentSpanId: hex(span.parentSpanId),
        traceState: span.traceState ?? '',
        name: span.name,
        kind: span.kind ?? 0,
        attributes: attributesOf(span.attributes, protoValue),
        links: (span.links ?? []).map((link) => ({ traceId: hex(link.traceId), spanId: hex(link.spanId) })),
        statusCode: span.status?.code ?? 0,
        serviceName: attributesOf(resourceSpans.resource?.attributes, protoValue)['service.name'],
      })),
    ),
  );
}

interface Receiver {
  url: string;
  requests: ExportRequest[];
  spans(): ReceivedSpan[];
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const requests: ExportRequest[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const json = request.headers['content-type'] === 'application/json';
      requests.push({ path: request.url ?? '', headers: request.headers, spans: json ? decodeJson(body) : decodeProtobuf(body) });
      response.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
      response.end(json ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    spans: () => requests.flatMap((request) => request.spans),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const prices = `
  - { id: big, served_by: [{ engine: scripted, name: big }], price: { input: 10, output: 10 }, context_window: 8192 }
  - { id: tiny, served_by: [{ engine: scripted, name: tiny }], price: { input: 0.1, output: 0.1 }, context_window: 8192 }`;

function configFor(engine: ScriptedEngine, telemetry: string): string {
  return `engines:\n  - { id: scripted, type: openai, base_url: "${engine.baseUrl}" }\nmodels:${prices}\n${telemetry}`;
}

async function management(taskgate: TestGateway, method: string, path: string, body: unknown): Promise<number> {
  const response = await fetch(`${taskgate.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return response.status;
}

let engine: ScriptedEngine;

beforeAll(async () => {
  engine = await startScriptedEngine();
  // big answers right, tiny wrong: a guard asking for 42 re-asks big.
  engine.script((body) => ({
    kind: 'reply',
    content: body.model === 'tiny' ? '41' : '42',
    usage: { prompt_tokens: 11, completion_tokens: 1, total_tokens: 12 },
  }));
});
afterAll(async () => {
  await engine?.close();
});

describe.each(['http/protobuf', 'http/json'] as const)('OpenTelemetry export over %s', (protocol) => {
  let receiver: Receiver;
  let taskgate: TestGateway;

  beforeAll(async () => {
    receiver = await startReceiver();
    // Endpoint and headers from the config; the service name from the environment's OTEL_SERVICE_NAME.
    const telemetry = `telemetry: { otlp: { endpoint: "${receiver.url}", protocol: ${protocol}, headers: { x-collector-key: "\${COLLECTOR_KEY}" } } }`;
    taskgate = await startTestGateway(configFor(engine, telemetry), { COLLECTOR_KEY: 'secret-1', OTEL_SERVICE_NAME: 'gateway-under-test' });
  });
  afterAll(async () => {
    await taskgate?.stop();
    await receiver?.close();
  });

  /** Flushes the export, then the spans of one call: its own, and its children. */
  async function spansOf(requestId: string | null): Promise<{ call: ReceivedSpan; children: ReceivedSpan[] }> {
    await taskgate.gateway.telemetry.flush();
    const spans = receiver.spans();
    const call = spans.find((span) => span.attributes['taskgate.request_id'] === requestId && span.kind === 2);
    if (call === undefined) throw new Error(`no span of call ${requestId}`);
    return { call, children: spans.filter((span) => span.parentSpanId === call.spanId) };
  }

  it("sends a span per JSON call, with the GenAI attributes and a child for the engine call, continuing the caller's traceparent", async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parentId = '00f067aa0ba902b7';
    const response = await taskgate.postChat(
      { model: 'big', messages: [{ role: 'user', content: 'What is 20 + 22?' }] },
      { headers: { 'x-taskgate-workload': 'plain', traceparent: `00-${traceId}-${parentId}-01`, tracestate: 'vendor=opaque' } },
    );
    expect(response.status).toBe(200);
    const { call, children } = await spansOf(response.headers.get('x-request-id'));

    expect(call).toMatchObject({
      traceId,
      parentSpanId: parentId,
      traceState: 'vendor=opaque',
      name: 'chat big',
      statusCode: 0,
      serviceName: 'gateway-under-test',
    });
    expect(call.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'taskgate',
      'gen_ai.request.model': 'big',
      'gen_ai.response.model': 'big',
      'gen_ai.usage.input_tokens': 11,
      'gen_ai.usage.output_tokens': 1,
      'gen_ai.response.finish_reasons': ['stop'],
      'taskgate.project': 'default',
      'taskgate.workload': 'plain',
      'taskgate.route.reason': 'requested',
      'taskgate.stream': false,
      'http.response.status_code': 200,
    });
    expect(children).toHaveLength(1);
    expect(children[0]).toMatchObject({ traceId, kind: 3, name: 'chat big' });
    expect(children[0]?.attributes).toMatchObject({
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'big',
      'taskgate.replica': 'scripted',
      'gen_ai.usage.output_tokens': 1,
    });

    const request = receiver.requests.at(-1);
    expect(request?.path).toBe('/v1/traces');
    expect(request?.headers['content-type']).toBe(protocol === 'http/json' ? 'application/json' : 'application/x-protobuf');
    expect(request?.headers['x-collector-key']).toBe('secret-1');
  });

  it("starts a trace of its own for a call without a traceparent, and ends a stream's spans with the stream", async () => {
    const response = await taskgate.postChat(
      { model: 'big', stream: true, messages: [{ role: 'user', content: 'What is 20 + 22?' }] },
      { headers: { 'x-taskgate-workload': 'streamed' } },
    );
    expect(await response.text()).toContain('[DONE]');
    const { call, children } = await spansOf(response.headers.get('x-request-id'));
    expect(call.parentSpanId).toBe('');
    expect(call.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(call.attributes).toMatchObject({
      'taskgate.stream': true,
      'taskgate.workload': 'streamed',
      'gen_ai.request.model': 'big',
      'gen_ai.response.finish_reasons': ['stop'],
    });
    expect(children).toHaveLength(1);
    expect(children[0]?.attributes).toMatchObject({ 'taskgate.replica': 'scripted', 'gen_ai.response.finish_reasons': ['stop'] });
  });

  it("marks the guard's re-ask with a child span of its own", async () => {
    expect(
      await management(taskgate, 'PUT', '/projects/default/workloads/guarded/eval', {
        checks: [{ type: 'regex', pattern: '^42$' }],
        sample_rate: 0,
      }),
    ).toBe(200);
    expect(await management(taskgate, 'PUT', '/projects/default/workloads/guarded/routes/big/pin', { model: 'tiny' })).toBe(200);
    const response = await taskgate.postChat(
      { model: 'big', messages: [{ role: 'user', content: 'What is 20 + 22?' }] },
      { headers: { 'x-taskgate-workload': 'guarded' } },
    );
    expect(((await response.json()) as { model: string }).model).toBe('big');
    const { call, children } = await spansOf(response.headers.get('x-request-id'));
    expect(call.attributes).toMatchObject({
      'gen_ai.request.model': 'big',
      'gen_ai.response.model': 'big',
      'taskgate.route.reason': 'guard_fallback',
    });
    const byModel = new Map(children.map((child) => [child.attributes['gen_ai.request.model'], child]));
    expect(byModel.get('tiny')?.attributes['taskgate.guard.reask']).toBeUndefined();
    expect(byModel.get('big')?.attributes['taskgate.guard.reask']).toBe(true);
  });

  it("serves the calls a route's per-call policy picks on its model, with the reason `policy` and the share, and leaves the others", async () => {
    const workload = 'policed';
    const account = await taskgate.gateway.store.accounts.ensureAccount('default');
    await taskgate.gateway.store.projects.ensureScope({ accountId: account.id, project: 'default', workload });
    // No replays: the route stays as stored.
    expect(await management(taskgate, 'PUT', `/projects/default/workloads/${workload}/eval`, { sample_rate: 0 })).toBe(200);
    // A policy that picks the calls that say "easy" (P(loss) ≈ 0 there, ≈ 0.88 elsewhere; threshold 0.01 × the request's size, under 0.5 for these prompts), and a share of all of its picks, so the draw never decides.
    const easy = callFeatures({ messages: [{ role: 'user', content: 'easy' }] });
    const weights = new Array<number>(easy.dimension).fill(0);
    weights[easy.indices[0] ?? 0] = -20;
    const policy = { epoch: 1, dimension: easy.dimension, weights, bias: 2, threshold: 0.01, routedShare: 0.5 };
    const now = Date.now();
    await taskgate.gateway.store.routing.saveRoute(
      {
        scope: { accountId: account.id, project: 'default', workload },
        requestedModel: 'big',
        servedModel: 'big',
        pinnedModel: null,
        certificate: null,
        cooldowns: {},
        fallbacks: [],
        split: {
          shares: [{ model: 'tiny', share: 1, diffLower: 0, samples: 100, policy }],
          requestedLower: 0.9,
          qualityBar: 0.95,
          confidence: 0.95,
          contractVersion: 0,
          at: now,
        },
        updatedAt: now,
      },
      null,
    );
    const ask = async (content: string) => {
      const response = await taskgate.postChat(
        { model: 'big', messages: [{ role: 'user', content }] },
        { headers: { 'x-taskgate-workload': workload } },
      );
      expect(response.status).toBe(200);
      return { model: ((await response.json()) as { model: string }).model, requestId: response.headers.get('x-request-id') };
    };

    // The route reaches this process's route table on the change feed's next poll.
    const picked = await vi.waitFor(
      async () => {
        const call = await ask('An easy one: what is 20 + 22?');
        expect(call.model).toBe('tiny');
        return call;
      },
      { timeout: 10_000, interval: 50 },
    );
    const { call } = await spansOf(picked.requestId);
    expect(call.attributes).toMatchObject({
      'gen_ai.request.model': 'big',
      'gen_ai.response.model': 'tiny',
      'taskgate.route.reason': 'policy',
    });
    expect(await taskgate.traceOf(picked.requestId)).toMatchObject({ servedModel: 'tiny', routeReason: 'policy', routeShare: 1 });

    const kept = await ask('A hard one: what is 20 + 22?');
    expect(kept.model).toBe('big');
    expect((await spansOf(kept.requestId)).call.attributes['taskgate.route.reason']).toBe('requested');
    expect(await taskgate.traceOf(kept.requestId)).toMatchObject({ servedModel: 'big', routeReason: 'requested', routeShare: null });
  });

  it('sends a shadow replay as a trace of its own, marked, naming and linking the call it replays', async () => {
    // Every call sampled, and a contract whose verdict a few tests reach: the router replays the first call on tiny.
    expect(
      await management(taskgate, 'PUT', '/projects/default/workloads/replayed/eval', {
        checks: [{ type: 'regex', pattern: '^4\\d$' }],
        pass_rate: 0.5,
        min_samples: 1,
        sample_rate: 1,
      }),
    ).toBe(200);
    const response = await taskgate.postChat(
      { model: 'big', messages: [{ role: 'user', content: 'What is 20 + 22?' }] },
      { headers: { 'x-taskgate-workload': 'replayed' } },
    );
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id');
    await taskgate.gateway.router.idle();
    const { call } = await spansOf(requestId);
    expect(call.attributes['taskgate.route.reason']).toBe('requested');

    const replays = receiver
      .spans()
      .filter((span) => span.attributes['taskgate.replay'] === true && span.attributes['taskgate.request_id'] === requestId);
    expect(replays.length).toBeGreaterThan(0);
    const replay = replays.find((span) => span.attributes['gen_ai.request.model'] === 'tiny');
    expect(replay).toMatchObject({ parentSpanId: '', links: [{ traceId: call.traceId, spanId: call.spanId }] });
    expect(replay?.traceId).not.toBe(call.traceId);
    expect(replay?.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'taskgate.workload': 'replayed',
      'taskgate.replica': 'scripted',
    });
  });

  it("marks a failed call's span as an error with the error's code, and counts exported spans in /metrics", async () => {
    engine.scriptNext({ kind: 'status', status: 400, body: { error: { message: 'no such thing' } } });
    const response = await taskgate.postChat({ model: 'big', messages: [{ role: 'user', content: 'hi' }] });
    expect(response.status).toBe(400);
    const { call, children } = await spansOf(response.headers.get('x-request-id'));
    expect(call.statusCode).toBe(2);
    expect(call.attributes).toMatchObject({ 'http.response.status_code': 400 });
    expect(call.attributes['error.type']).toEqual(expect.any(String));
    expect(children[0]?.statusCode).toBe(2);

    const metrics = await (await fetch(`${taskgate.origin}/metrics`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).text();
    const exported = Number(/^taskgate_telemetry_spans_exported_total (\d+)$/m.exec(metrics)?.[1]);
    expect(exported).toBeGreaterThanOrEqual(receiver.spans().length);
    expect(metrics).toMatch(/^taskgate_telemetry_spans_dropped_total 0$/m);
  });
});

describe('OpenTelemetry export', () => {
  it('is off without an endpoint: nothing is sent, and /metrics counts no span', async () => {
    const receiver = await startReceiver();
    const taskgate = await startTestGateway(configFor(engine, ''));
    try {
      expect(taskgate.gateway.telemetry.enabled).toBe(false);
      const response = await taskgate.postChat(
        { model: 'big', messages: [{ role: 'user', content: 'What is 20 + 22?' }] },
        { headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } },
      );
      expect(response.status).toBe(200);
      const metrics = await (await fetch(`${taskgate.origin}/metrics`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).text();
      expect(metrics).toMatch(/^taskgate_telemetry_spans_exported_total 0$/m);
    } finally {
      await taskgate.stop();
      await receiver.close();
    }
    expect(receiver.requests).toHaveLength(0);
  });

  it("takes the endpoint from OTEL_EXPORTER_OTLP_TRACES_ENDPOINT over the config, and drops a caller's unsampled trace", async () => {
    const receiver = await startReceiver();
    const taskgate = await startTestGateway(configFor(engine, 'telemetry: { otlp: { endpoint: "http://127.0.0.1:9" } }'), {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/custom/traces`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    });
    try {
      const unsampled = await taskgate.postChat(
        { model: 'big', messages: [{ role: 'user', content: 'hi' }] },
        { headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00' } },
      );
      const sampled = await taskgate.postChat({ model: 'big', messages: [{ role: 'user', content: 'hi' }] });
      await taskgate.gateway.telemetry.flush();
      // Calls' spans only: a replay of the unsampled call is a trace of its own, recorded.
      const ids = receiver
        .spans()
        .filter((span) => span.kind === 2)
        .map((span) => span.attributes['taskgate.request_id']);
      expect(ids).toContain(sampled.headers.get('x-request-id'));
      expect(ids).not.toContain(unsampled.headers.get('x-request-id'));
      expect(
        receiver.requests.every((request) => request.path === '/custom/traces' && request.headers['content-type'] === 'application/json'),
      ).toBe(true);
      expect(receiver.spans().find((span) => span.kind === 2)?.serviceName).toBe('taskgate');
    } finally {
      await taskgate.stop();
      await receiver.close();
    }
  });
});
