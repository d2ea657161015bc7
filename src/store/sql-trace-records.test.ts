import { describe, expect, it } from 'vitest';
import { fromTraceRow, traceProperties, traceValues } from './sql-trace-records.js';
import type { Trace } from './store.js';
import { traceFixture } from './trace-fixture.js';

describe('traceValues', () => {
  it('gives every property in traceProperties order, metadata and attempts as JSON', () => {
    // Every property a value of its own, so a value in the wrong place shows.
    const trace = Object.fromEntries(traceProperties.map((property, index) => [property, `value-${index}`])) as unknown as Trace;
    trace.metadata = { team: 'search' };
    trace.attempts = [{ replica: 'gpu-a', outcome: 'engine_unavailable' }, { replica: 'gpu-b', outcome: 'ok' }];
    const asJson = new Set<string>(['metadata', 'attempts']);
    const expected = traceProperties.map((property) =>
      property === 'stream' ? 'stream as stored' : asJson.has(property) ? JSON.stringify(trace[property]) : trace[property]);
    expect(traceValues(trace, 'stream as stored')).toStrictEqual(expected);
    expect(expected).toContain('{"team":"search"}');
    expect(expected).toContain('[{"replica":"gpu-a","outcome":"engine_unavailable"},{"replica":"gpu-b","outcome":"ok"}]');
  });

  it('reads null attempts as null, and a list of attempts back as it was', () => {
    const row = { ...traceFixture(), stream: 0, metadata: null, attempts: null };
    expect(fromTraceRow(row, false).attempts).toBeNull();
    const attempts = [{ replica: 'gpu-a', outcome: 'engine_connection_closed' }, { replica: 'gpu-b', outcome: 'ok' }];
    expect(fromTraceRow({ ...row, attempts: JSON.stringify(attempts) }, false)).toEqual(traceFixture({ attempts }));
  });
});
