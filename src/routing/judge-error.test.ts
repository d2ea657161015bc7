import { describe, expect, it } from 'vitest';
import { ASSUMED_JUDGE_ERROR, gradeErrorOf, judgeErrorOf, MEASURED_AFTER, relativePolicyOf } from './judge-error.js';
import { MAX_ERROR_RATE } from './paired-quality.js';

describe('judgeErrorOf', () => {
  it('assumes 2% until a judge has enough self-checks, then charges their upper bound when it is worse', () => {
    expect(judgeErrorOf([])).toBe(ASSUMED_JUDGE_ERROR);
    expect(judgeErrorOf([{ judgeModel: 'j', checks: MEASURED_AFTER - 1, falseLosses: 30 }])).toBe(ASSUMED_JUDGE_ERROR);
    const measured = judgeErrorOf([{ judgeModel: 'j', checks: 400, falseLosses: 12 }]);
    expect(measured).toBeGreaterThan(0.03);
    expect(measured).toBeLessThan(0.05);
    expect(judgeErrorOf([{ judgeModel: 'j', checks: 200, falseLosses: 60 }])).toBe(MAX_ERROR_RATE);
  });
});

describe('gradeErrorOf', () => {
  it('keeps the assumed error for a grader its checks do not refute', () => {
    expect(gradeErrorOf(0.02, {})).toBe(0.02);
    expect(gradeErrorOf(0.02, { grader: { compared: 49, differed: 20 } })).toBe(0.02);
    // Contradicting 4% of the verdicts (a grader wrong 2% of the time, against a judge wrong 2%): as assumed.
    expect(gradeErrorOf(0.02, { grader: { compared: 60, differed: 3 } })).toBe(0.02);
  });

  it('charges a grader its checks show worse than assumed the upper side, and drops one too wrong to use', () => {
    const worse = gradeErrorOf(0.02, { grader: { compared: 2_000, differed: 130 } });
    expect(worse).toBeGreaterThan(0.02 + 0.065);
    expect(worse).toBeLessThan(0.1);
    expect(gradeErrorOf(0.02, { grader: { compared: 200, differed: 40 } })).toBeNull();
    const policy = relativePolicyOf({ quality_bar: 0.95, pass_rate: 0.95, confidence: 0.95, min_samples: 50 }, 0.02, null);
    expect(policy).toMatchObject({ agreementGradesSampled: false, gradeError: 0 });
  });
});
