import { describe, expect, it } from 'vitest';
import { calibratedJudgeError, CALIBRATION_SAMPLES, judgeLadder, standing, wilson } from './judge-ladder.js';

const options = [
  { id: 'strong', family: 'acme', costPerCall: 10 },
  { id: 'mid', family: 'beta', costPerCall: 2 },
  { id: 'cheap', family: 'gamma', costPerCall: 0.5 },
  { id: 'candidate', family: 'delta', costPerCall: 0.2 },
  { id: 'sibling', family: 'delta', costPerCall: 0.1 },
];

describe('judgeLadder', () => {
  it('judges with the reference until a cheaper judge is measured good enough, measuring the cheapest first', () => {
    expect(judgeLadder('strong', 'delta', options, {})).toEqual({ reference: 'strong', active: 'strong', measuring: 'cheap' });
  });

  it('hands the verdicts to the cheapest adequate judge, and measures what is cheaper still', () => {
    const calibration = { mid: { compared: 200, differed: 2 }, cheap: { compared: 50, differed: 0 } };
    expect(judgeLadder('strong', 'delta', options, calibration)).toEqual({ reference: 'strong', active: 'mid', measuring: 'cheap' });
    expect(judgeLadder('strong', 'delta', options, { ...calibration, cheap: { compared: 150, differed: 1 } })).toMatchObject({
      active: 'cheap',
      measuring: null,
    });
  });

  it("passes over a judge that disagrees too often, and never measures one of the judged model's family", () => {
    const ladder = judgeLadder('strong', 'delta', options, { cheap: { compared: 120, differed: 30 } });
    expect(ladder).toEqual({ reference: 'strong', active: 'strong', measuring: 'mid' });
    expect(
      judgeLadder('strong', 'delta', options, { cheap: { compared: 120, differed: 30 }, mid: { compared: 400, differed: 12 } }).measuring,
    ).toBeNull();
  });
});

describe('standing and the error charged', () => {
  it('needs enough comparisons, and an upper bound of disagreement within 5%', () => {
    expect(standing({ compared: CALIBRATION_SAMPLES - 1, differed: 0 })).toBe('measuring');
    expect(standing({ compared: 100, differed: 0 })).toBe('adequate');
    expect(standing({ compared: 100, differed: 3 })).toBe('measuring');
    expect(standing({ compared: 100, differed: 20 })).toBe('rejected');
  });

  it('charges the reference error plus the worst adequate judge’s bound, never less', () => {
    expect(calibratedJudgeError(0.02, {})).toBe(0.02);
    expect(calibratedJudgeError(0.02, { mid: { compared: 50, differed: 0 } })).toBe(0.02);
    const charged = calibratedJudgeError(0.02, { mid: { compared: 300, differed: 3 } });
    expect(charged).toBeCloseTo(0.02 + wilson(3, 300, 1.645), 12);
    expect(charged).toBeGreaterThan(0.02 + 3 / 300);
  });

  it('bounds a rate from both sides', () => {
    expect(wilson(5, 100, 1.645)).toBeGreaterThan(0.05);
    expect(wilson(5, 100, -1.645)).toBeLessThan(0.05);
    expect(wilson(0, 0, 1.645)).toBe(1);
  });
});
