/**
 * One valid trace for tests of the Store and of what feeds it (the contract
 * suites, back-end tests, the trace writer): a successful, non-streamed call
 * of project `shop`, workload `main`, with both bodies, started 2024-01-10
 * 12:00 UTC. A test overrides what it looks at.
 */
import type { Trace } from '../../../src/store/store.js';

export function traceFixture(overrides: Partial<Trace> = {}): Trace {
  return {
    requestId: 'req-1',
    accountId: 'acct-1',
    keyId: 'key-1',
    environment: 'production',
    project: 'shop',
    workload: 'main',
    user: null,
    requestedModel: 'small',
    servedModel: 'small',
    routeReason: null,
    routeShare: null,
    replica: 'cpu',
    attempts: null,
    status: 'ok',
    errorClass: null,
    errorMessage: null,
    httpStatus: 200,
    finishReason: 'stop',
    promptTokens: 12,
    completionTokens: 3,
    costUsd: 0.000_1,
    cached: false,
    costSavedUsd: null,
    engineSeconds: null,
    measuredCostUsd: null,
    latencyMs: 80,
    ttftMs: null,
    stream: false,
    metadata: null,
    startedAt: Date.UTC(2024, 0, 10, 12),
    requestBody: '{"messages":[{"role":"user","content":"hi"}]}',
    replyBody: '{"choices":[{"message":{"content":"hello"}}]}',
    ...overrides,
  };
}
