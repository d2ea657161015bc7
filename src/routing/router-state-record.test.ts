import { describe, expect, it } from 'vitest';
import { activityOf } from './route-activity.js';
import type { CandidateVerdict } from './route-decision.js';
import type { RouteState } from './router-context.js';
import { decodeRouteState, emptyRouteStateRecord, encodeRouteState, restoreRouteState } from './router-state-record.js';

const verdicts: CandidateVerdict[] = [
  {
    model: 'tiny',
    state: 'testing',
    reason: 'fewer than 50 paired samples',
    lower: Number.NEGATIVE_INFINITY,
    upper: Number.POSITIVE_INFINITY,
    evaluated: 12,
    passed: 11,
    costPerCall: 0.0001,
    share: 0,
  },
  {
    model: 'small',
    state: 'certified',
    lower: -0.021,
    upper: Number.POSITIVE_INFINITY,
    evaluated: 412,
    passed: 398,
    costPerCall: 0.001,
    share: 0.34,
  },
];

function leaderState(): RouteState {
  return {
    scope: { accountId: 'a', project: 'p', workload: 'w' },
    requestedModel: 'big',
    detector: null,
    detectorModel: null,
    uncheckedCalls: 7,
    probation: new Set(['mid']),
    monitoringProblem: 'the judge is down',
    plan: { candidates: ['tiny'], sampleRate: 0.2, expectedNetUsd: 3.5, assessed: [] },
    planAt: 1_000,
    verdicts,
    planAskedAt: 0,
    servedLatencies: [120],
    servedTtfts: [],
    shape: null,
    judges: new Map([['judge', { sameFamily: true }]]),
    lastJudge: 'judge',
    judgeCalibration: { cheap: { compared: 40, differed: 1 } },
    graderChecks: { cheap: { compared: 60, differed: 3 } },
    nextSelfCheckAt: 20,
    judgeCostPerEval: 0.002,
    judgedSamples: 3,
    dropped: 2,
    evalSpendUsd: 0,
    savedUsd: 0,
    changing: false,
    policies: new Map(),
  };
}

describe('route state record', () => {
  it("carries the last decision's verdicts to other processes, unbounded bounds included", () => {
    const record = decodeRouteState(encodeRouteState(leaderState(), 1_500));
    expect(record?.verdicts).toEqual(verdicts);
    expect(record?.verdicts[0]?.lower).toBe(Number.NEGATIVE_INFINITY);
    expect(record?.verdicts[1]?.upper).toBe(Number.POSITIVE_INFINITY);
  });

  it('reads a record written before verdicts were kept, with none', () => {
    const { verdicts: _dropped, ...older } = JSON.parse(encodeRouteState(leaderState(), 10)) as Record<string, unknown>;
    const record = decodeRouteState(JSON.stringify(older));
    expect(record).not.toBeNull();
    expect(record?.verdicts).toEqual([]);
    expect(emptyRouteStateRecord().verdicts).toEqual([]);
  });

  it('gives a new leader the verdicts back', () => {
    const next = { ...leaderState(), verdicts: [] };
    restoreRouteState(next, decodeRouteState(encodeRouteState(leaderState(), 10))!);
    expect(next.verdicts).toEqual(verdicts);
  });

  it("shows the same activity from the leader's state and from the record a follower reads", () => {
    const state = leaderState();
    const record = decodeRouteState(encodeRouteState(state, 1_500))!;
    const fromLeader = activityOf(state, 1_500);
    expect(activityOf(record, record.callsPerDay)).toEqual(fromLeader);
    expect(fromLeader).toMatchObject({
      sampleRate: 0.2,
      exploring: ['tiny'],
      callsPerDay: 1_500,
      uncheckedCalls: 7,
      droppedSamples: 2,
      judges: [{ model: 'judge', sameFamily: true }],
      probation: ['mid'],
      verdicts,
    });
  });
});
