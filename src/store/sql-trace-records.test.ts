import { describe, expect, it } from 'vitest';
import { traceProperties, traceValues } from './sql-trace-records.js';
import type { Trace } from './store.js';

describe('traceValues', () => {
  it('gives every property in traceProperties order, metadata as JSON', () => {
    // Every property a value of its own, so a value in the wrong place shows.
    const trace = Object.fromEntries(traceProperties.map((property, index) => [property, `value-${index}`])) as unknown as Trace;
    trace.metadata = { team: 'search' };
    const expected = traceProperties.map((property) =>
      property === 'stream' ? 'stream as stored' : property === 'metadata' ? JSON.stringify(trace.metadata) : trace[property]);
    expect(traceValues(trace, 'stream as stored')).toStrictEqual(expected);
    expect(expected).toContain('{"team":"search"}');
  });
});
