import { describe, expect, it } from 'vitest';
import { capturingLogger } from '../../test/helpers/capturing-logger.js';
import { createShedCounter } from './shed-counter.js';

describe('createShedCounter', () => {
  it('counts every closed connection by cap, and logs at most once every 30 s with how many since the last line', () => {
    const clock = { now: 1_000_000 };
    const { logger, lines } = capturingLogger();
    const shed = createShedCounter(logger, () => clock.now);
    for (let index = 0; index < 5; index++) shed.count('address');
    shed.count('total');
    expect(shed.counts).toEqual({ address: 5, total: 1 });
    expect(lines.filter((line) => line.level === 'warn')).toHaveLength(1);
    clock.now += 30_000;
    shed.count('address');
    const warnings = lines.filter((line) => line.level === 'warn');
    expect(warnings).toHaveLength(2);
    expect(warnings[1]).toMatchObject({ closed: 6, by_address_cap: 6, by_total_cap: 1 });
  });
});
