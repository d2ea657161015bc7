import { describe, expect, it } from 'vitest';
import { fromTraceRow, traceProperties, traceValues } from './sql-trace-records.js';
import type { Trace } from './store.js';
import { traceFixture } from '../../test/contracts/store/trace-fixture.js';

describe('traceValues', () => {
  it('gives every property in traceProperties order, metadata and attempts as JSON, stream and cached as the dialect keeps them', () => {
    // Every property a value of its own, so a value in the wrong place shows.
    const trace = Object.fromEntries(traceProperties.map((property, index) => [property, `value-${index}`])) as unknown as Trace;
    trace.metadata = { team: 'search' };
    trace.attempts = [
      { replica: 'gpu-a', outcome: 'engine_unavailable' },
      { replica: 'gpu-b', outcome: 'ok' },
    ];
    const asJson = new Set<string>(['metadata', 'attempts']);
    const expected = traceProperties.map((property) =>
      property === 'stream'
        ? 'stream as stored'
        : property === 'cached'
          ? 'cached as stored'
          : asJson.has(property)
            ? JSON.stringify(trace[property])
            : trace[property],
    );
    expect(traceValues(trace, 'stream as stored', 'cached as stored')).toStrictEqual(expected);
    expect(expected).toContain('{"team":"search"}');
    expect(expected).toContain('[{"replica":"gpu-a","outcome":"engine_unavailable"},{"replica":"gpu-b","outcome":"ok"}]');
  });

  it('reads null attempts as null, and a list of attempts back as it was', () => {
    const row = { ...traceFixture(), stream: 0, cached: 0, metadata: null, attempts: null };
    expect(fromTraceRow(row, false, false).attempts).toBeNull();
    const attempts = [
      { replica: 'gpu-a', outcome: 'engine_connection_closed' },
      { replica: 'gpu-b', outcome: 'ok' },
    ];
    expect(fromTraceRow({ ...row, attempts: JSON.stringify(attempts) }, false, false)).toEqual(traceFixture({ attempts }));
  });

  it('reads a cached call as cached, with the cost it saved', () => {
    const row = { ...traceFixture({ costUsd: 0, costSavedUsd: 0.000_4 }), stream: 1, cached: 1, metadata: null, attempts: null };
    expect(fromTraceRow(row, true, true)).toEqual(traceFixture({ stream: true, cached: true, costUsd: 0, costSavedUsd: 0.000_4 }));
  });
});
