/**
 * A gateway for the OpenAI conformance tests: a scripted OpenAI-compatible
 * engine behind two models (one with vision, one without), and the checks
 * every answer is held to: replies and stream chunks validate against
 * OpenAI's schemas (test/fixtures/openai-openapi/), errors are OpenAI-shaped
 * 400s naming the field, with a request id.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import type { JsonObject } from './chat-request-arbitrary.js';
import { schemaErrors } from './openai-schemas.js';
import { startScriptedEngine, type ScriptedEngine } from './scripted-engine.js';
import { startTestGateway, type TestGateway } from './test-gateway.js';

export interface Sent {
  status: number;
  headers: Headers;
  /** The JSON body (a reply or an error). */
  body: JsonObject | null;
  /** The `data:` events of a stream, parsed, without `[DONE]`. */
  chunks: JsonObject[];
  done: boolean;
}

export interface ConformanceGateway {
  engine: ScriptedEngine;
  taskgate: TestGateway;
  send(body: unknown, headers?: Record<string, string>): Promise<Sent>;
}

function model(id: string, supports: string): string {
  return `  - { id: ${id}, provider: acme, served_by: [{ engine: scripted, name: upstream-${id} }], price: { input: 1, output: 2 }, context_window: 65536, supports: [${supports}] }`;
}

/** A raw `POST /v1/chat/completions` to `taskgate`, its answer parsed: a JSON body, or a stream's events. */
export async function sendChat(taskgate: TestGateway, body: unknown, headers: Record<string, string> = {}): Promise<Sent> {
  const response = await taskgate.postChat(body, { headers });
  const text = await response.text();
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    return {
      status: response.status,
      headers: response.headers,
      body: text === '' ? null : (JSON.parse(text) as JsonObject),
      chunks: [],
      done: false,
    };
  }
  const data = text.split('\n\n').flatMap((event) =>
    event
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => line.slice(6)),
  );
  return {
    status: response.status,
    headers: response.headers,
    body: null,
    chunks: data.filter((item) => item !== '[DONE]').map((item) => JSON.parse(item) as JsonObject),
    done: data.at(-1) === '[DONE]',
  };
}

/** Registers the test file's beforeAll/afterAll; the fields are set once beforeAll has run. */
export function useConformanceGateway(): ConformanceGateway {
  const gateway = {} as ConformanceGateway;
  beforeAll(async () => {
    gateway.engine = await startScriptedEngine();
    gateway.taskgate = await startTestGateway(`
engines:
  - { id: scripted, type: openai, base_url: "${gateway.engine.baseUrl}", connect_timeout_ms: 2000, timeout_ms: 10000, idle_timeout_ms: 10000 }
models:
${model('vision-model', 'tools, json, vision')}
${model('text-model', 'tools, json')}
limits: { requests_per_minute: 1000000 }
`);
    gateway.send = (body, headers) => sendChat(gateway.taskgate, body, headers);
  });
  afterAll(async () => {
    await gateway.taskgate?.stop();
    await gateway.engine?.close();
  });
  return gateway;
}

/** Every reply body and chunk of `sent` validates against OpenAI's schemas. */
export function expectConformingReply(sent: Sent): void {
  expect(sent.status, JSON.stringify(sent.body)).toBe(200);
  if (sent.body !== null) {
    expect(schemaErrors('CreateChatCompletionResponse', sent.body), JSON.stringify(sent.body)).toBeNull();
    return;
  }
  expect(sent.done).toBe(true);
  expect(sent.chunks.length).toBeGreaterThan(0);
  for (const chunk of sent.chunks) expect(schemaErrors('CreateChatCompletionStreamResponse', chunk), JSON.stringify(chunk)).toBeNull();
}

export function expectBadRequest(sent: Sent, param: string | RegExp): void {
  expect(sent.status, JSON.stringify(sent.body)).toBe(400);
  const error = sent.body?.error as Record<string, unknown>;
  expect(error.type).toBe('invalid_request_error');
  expect(typeof error.message).toBe('string');
  if (typeof param === 'string') expect(error.param).toBe(param);
  else expect(error.param).toMatch(param);
  expect(error.message).toContain(typeof param === 'string' ? param.split(/[.[]/)[0] : 'messages');
  expect(sent.headers.get('x-request-id')).toMatch(/^req_/);
}
