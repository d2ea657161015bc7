/**
 * Requests generated from OpenAI's `CreateChatCompletionRequest`
 * (test/fixtures/openai-openapi/) and mutations of them, through the real
 * HTTP server, with fixed seeds: every valid request is served, only what
 * cannot be served is refused (naming the field), no mutant gets a 5xx, every
 * error is OpenAI-shaped with a request id, and every schema-invalid request
 * is a 400 naming a field. The rules OpenAI states only in descriptions are in
 * test/helpers/chat-request-arbitrary.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mutantArbitrary, requestArbitrary, unservableFieldsOf, type JsonObject } from './helpers/chat-request-arbitrary.js';
import { expectConformingReply, useConformanceGateway, type Sent } from './helpers/conformance-gateway.js';
import { validateRequestLeniently } from './helpers/openai-schemas.js';

const gateway = useConformanceGateway();
const send = (body: unknown) => gateway.send(body);

describe("generated requests (property-based, from OpenAI's CreateChatCompletionRequest)", () => {
  /** The status and shape rules every answer obeys, and the reply's conformance when it is a 200. */
  function checkAnswer(sent: Sent): void {
    expect(sent.status, JSON.stringify(sent.body)).toBeLessThan(500);
    expect(sent.headers.get('x-request-id')).toMatch(/^req_/);
    if (sent.status === 200) {
      expectConformingReply(sent);
      return;
    }
    const error = sent.body?.error as Record<string, unknown> | undefined;
    expect(error, JSON.stringify(sent.body)).toBeDefined();
    expect(typeof error!.message).toBe('string');
    expect(typeof error!.type).toBe('string');
    expect(error!.param === null || typeof error!.param === 'string').toBe(true);
    expect(typeof error!.code).toBe('string');
  }

  it('serves every valid request, and refuses only what cannot be served, by name', async () => {
    gateway.engine.script({ kind: 'reply' });
    let served = 0;
    await fc.assert(
      fc.asyncProperty(requestArbitrary('vision-model', { unservable: true }), async (request) => {
        expect(validateRequestLeniently(request), JSON.stringify(validateRequestLeniently.errors)).toBe(true);
        const sent = await send(request);
        checkAnswer(sent);
        const unservable = unservableFieldsOf(request);
        if (unservable.length > 0) {
          expect(sent.status).toBe(400);
          expect(unservable).toContain((sent.body?.error as JsonObject).param);
        } else {
          expect(sent.status, JSON.stringify({ request, answer: sent.body })).toBe(200);
          served += 1;
        }
      }),
      { seed: 20_250_913, numRuns: 400 },
    );
    expect(served).toBeGreaterThan(300);
  }, 60_000);

  it('never answers a mutated request with a 5xx, and refuses every schema-invalid one with a 400', async () => {
    gateway.engine.script({ kind: 'reply' });
    const refusedByKind = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(mutantArbitrary(requestArbitrary('vision-model', { unservable: false })), async (mutant) => {
        const sent = await send(mutant.body);
        checkAnswer(sent);
        const param = (sent.body?.error as JsonObject | undefined)?.param;
        if (mutant.expect !== undefined) {
          expect(sent.status, JSON.stringify({ mutant, answer: sent.body })).toBe(mutant.expect.status);
          if (mutant.expect.status === 400 && mutant.expect.param !== undefined) {
            if (typeof mutant.expect.param === 'string') expect(param).toBe(mutant.expect.param);
            else expect(param).toMatch(mutant.expect.param);
          }
        } else if (typeof mutant.body === 'object' && !validateRequestLeniently(withoutEmptyStop(mutant.body))) {
          // Invalid by OpenAI's schema: always a 400 that names a field.
          expect(sent.status, JSON.stringify({ mutant, errors: validateRequestLeniently.errors, answer: sent.body })).toBe(400);
          expect(typeof param).toBe('string');
        }
        if (sent.status === 400) refusedByKind.set(mutant.kind, (refusedByKind.get(mutant.kind) ?? 0) + 1);
      }),
      { seed: 20_250_914, numRuns: 800 },
    );
    for (const kind of ['unknown-field', 'wrong-type', 'out-of-range', 'bad-part', 'remove-required'])
      expect(refusedByKind.get(kind) ?? 0).toBeGreaterThan(20);
    expect((await fetch(`${gateway.taskgate.origin}/healthz`)).status).toBe(200);
  }, 120_000);
});

/** taskgate takes `stop: []` as no stop sequences (clients send it); OpenAI's schema wants at least one. */
function withoutEmptyStop(body: JsonObject): JsonObject {
  return Array.isArray(body.stop) && body.stop.length === 0 ? { ...body, stop: undefined } : body;
}
