import { describe, expect, it } from 'vitest';
import { CounterFamily, HistogramFamily, observe } from './metric-families.js';

describe('metric families', () => {
  it('counts a value in the first bucket whose bound it does not exceed, cumulatively, with +Inf, sum and count', () => {
    const family = new HistogramFamily('call_seconds', 'Call time.', [0.1, 1]);
    const cell = family.cell({ model: 'small' });
    for (const value of [0.05, 0.1, 0.5, 1, 7]) observe(cell, value);
    const values = family.snapshot().values.map(({ labels, value, metricName }) => [metricName, labels.le ?? null, value]);
    expect(values).toEqual([
      ['call_seconds_bucket', 0.1, 2],
      ['call_seconds_bucket', 1, 4],
      ['call_seconds_bucket', '+Inf', 5],
      ['call_seconds_sum', null, 8.65],
      ['call_seconds_count', null, 5],
    ]);
  });

  it('hands out one cell per label set, whatever object carries the labels', () => {
    const family = new CounterFamily('calls_total', 'Calls.');
    family.cell({ model: 'small', status: 'ok' }).value += 2;
    family.cell({ model: 'small', status: 'ok' }).value += 1;
    family.cell({ model: 'large', status: 'ok' }).value += 1;
    expect(family.snapshot()).toEqual({
      name: 'calls_total',
      help: 'Calls.',
      type: 'counter',
      aggregator: 'sum',
      values: [
        { labels: { model: 'small', status: 'ok' }, value: 3 },
        { labels: { model: 'large', status: 'ok' }, value: 1 },
      ],
    });
  });
});
