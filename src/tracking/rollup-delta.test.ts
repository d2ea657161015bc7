import { describe, expect, it } from 'vitest';
import type { Trace } from '../store/store.js';
import { foldTraces, MINUTE_MS, rollupKey } from './rollup-delta.js';

const base: Trace = {
  requestId: 'req_0', accountId: 'acct_a', keyId: 'key_a', environment: 'production', project: 'shop', workload: 'support', user: null,
  requestedModel: 'big', servedModel: 'big', replica: 'mock', status: 'ok', errorClass: null, errorMessage: null, httpStatus: 200,
  finishReason: 'stop', promptTokens: 10, completionTokens: 5, costUsd: 0.001, engineSeconds: null, measuredCostUsd: null,
  latencyMs: 100, ttftMs: null, stream: false, metadata: null, startedAt: 10 * MINUTE_MS, requestBody: null, replyBody: null,
};

describe('foldTraces', () => {
  it('gives each trace to the row of its own scope, environment, model and minute, however the batch interleaves them', () => {
    const variations: Array<Partial<Trace>> = [
      {}, {}, { workload: 'billing' }, {}, { project: null }, { workload: null }, { environment: 'staging' }, { servedModel: 'small' },
      { servedModel: null }, { accountId: 'acct_b' }, { startedAt: 11 * MINUTE_MS }, {}, { workload: 'billing' }, { workload: 'billing' }, {},
    ];
    const traces = variations.map((change, index) => ({ ...base, ...change, requestId: `req_${index}`, promptTokens: index + 1 }));
    const rows = foldTraces(traces);

    const expected = new Map<string, { calls: number; promptTokens: number }>();
    for (const trace of traces) {
      const key = rollupKey({
        accountId: trace.accountId, project: trace.project ?? '', workload: trace.workload ?? '', environment: trace.environment,
        model: trace.servedModel ?? '', minute: Math.floor(trace.startedAt / MINUTE_MS) * MINUTE_MS,
      });
      const row = expected.get(key) ?? { calls: 0, promptTokens: 0 };
      row.calls += 1;
      row.promptTokens += trace.promptTokens;
      expected.set(key, row);
    }
    expect(rows).toHaveLength(expected.size);
    for (const row of rows) {
      expect({ calls: row.calls, promptTokens: row.promptTokens, latencyCount: row.latency.count }).toEqual({ ...expected.get(rollupKey(row)), latencyCount: row.calls });
    }
  });
});
