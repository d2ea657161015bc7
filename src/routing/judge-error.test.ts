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
  it('charges a grader what it contradicts the judge’s verdicts, plus the judge’s error, once measured', () => {
    expect(gradeErrorOf(0.02, {})).toBe(0.02);
    expect(gradeErrorOf(0.02, { grader: { compared: 49, differed: 10 } })).toBe(0.02);
    const measured = gradeErrorOf(0.02, { grader: { compared: 400, differed: 8 } });
    expect(measured).toBeGreaterThan(0.04);
    expect(measured).toBeLessThan(0.07);
  });

  it('drops a grader that contradicts the verdicts too often: its grades are not used at all', () => {
    expect(gradeErrorOf(0.02, { grader: { compared: 200, differed: 40 } })).toBeNull();
    const policy = relativePolicyOf({ quality_bar: 0.95, pass_rate: 0.95, confidence: 0.95, min_samples: 50 }, 0.02, null);
    expect(policy).toMatchObject({ agreementGradesSampled: false, gradeError: 0 });
  });
});
