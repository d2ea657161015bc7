import { describe, expect, it } from 'vitest';
import type { RouteActivity } from '../routing/route-activity.js';
import { routesView } from '../server/routes-view.js';
import type { Scope } from '../api/scope.js';
import type { RouteRecord } from '../store/routing-store.js';
import { pricedCatalog, useMemoryStore } from '../../test/helpers/routing-fixture.js';
import { renderRoutePanel } from './route-panel.js';

const NOW = 1_800_000_000_000;
const scope: Scope = { accountId: 'acct-1', project: 'shop', workload: 'answers' };
const catalog = pricedCatalog({ big: 10, small: 1 });
const storeOf = useMemoryStore();

const route = (fields: Partial<RouteRecord>): RouteRecord => ({
  scope,
  requestedModel: 'big',
  servedModel: 'big',
  pinnedModel: null,
  certificate: null,
  cooldowns: {},
  fallbacks: [],
  split: null,
  updatedAt: NOW,
  ...fields,
});

/** The panel of the routes view the API serves for these routes, with the router's verdicts on small. */
async function panelOf(routes: RouteRecord[]): Promise<string> {
  for (const record of routes) await storeOf().routing.saveRoute(record, null);
  for (let sample = 0; sample < 60; sample++)
    await storeOf().routing.addEvidence(
      scope,
      'big',
      'small',
      0,
      {
        evaluated: 1,
        passed: 1,
        errors: 0,
        promptTokens: 10,
        completionTokens: 1,
        costUsd: 0.0001,
        latencyMsTotal: 5,
        paired: { outcome: 'same', grade: 'right' },
      },
      NOW,
    );
  const activity: RouteActivity = {
    sampleRate: 0.1,
    exploring: ['small'],
    assessed: ['small'],
    expectedNetUsd: 1,
    callsPerDay: 2_000,
    uncheckedCalls: 0,
    monitoringProblem: null,
    droppedSamples: 0,
    judges: [],
    verdicts: [
      {
        model: 'small',
        state: 'certified',
        lower: -0.021,
        upper: Number.POSITIVE_INFINITY,
        evaluated: 60,
        passed: 60,
        costPerCall: 0.000011,
        share: 0.34,
      },
    ],
    probation: [],
  };
  return renderRoutePanel(await routesView({ store: storeOf(), catalog, router: { activity: () => activity }, now: () => NOW }, scope))
    .text;
}

describe('route panel', () => {
  it("shows a split route's phase, who serves which share, and each candidate's share", async () => {
    const split = {
      shares: [{ model: 'small', share: 0.34, diffLower: -0.021, samples: 60 }],
      requestedLower: 0.81,
      qualityBar: 0.95,
      confidence: 0.95,
      contractVersion: 0,
      at: NOW,
    };
    const panel = await panelOf([route({ split })]);
    expect(panel).toContain('<span class="badge split" data-field="phase">split</span>');
    expect(panel).toContain('<dd data-field="shares">34% → small (E[c − r] ≥ -0.021 on 60 paired samples); 66% → big</dd>');
    expect(panel).toContain('<th class="num">Share</th>');
    expect(panel).toContain('data-label="Share">34%</td>');
    expect(panel).toContain('as the router judged them, cheapest first');
  });

  it("says when a share rests on the project's pooled prior, not on the workload's own certificate", async () => {
    const split = {
      shares: [{ model: 'small', share: 0.2, diffLower: -0.3, samples: 24, pooled: { workloads: 12, samples: 900, notLossRate: 0.85 } }],
      requestedLower: 0.6,
      qualityBar: 0.95,
      confidence: 0.95,
      contractVersion: 0,
      at: NOW,
    };
    const panel = await panelOf([route({ split })]);
    expect(panel).toContain(
      '<dd data-field="shares">20% → small (on the prior of 12 workloads of the project, 900 paired samples; 24 of its own); 80% → big</dd>',
    );
  });

  it('says when a share is of the calls a per-call policy picks, not of all calls', async () => {
    const policy = { epoch: 2, dimension: 4, weights: [0, -3, 0, 0], bias: 1, threshold: 0.5, routedShare: 0.4 };
    const split = {
      shares: [{ model: 'small', share: 0.62, diffLower: -0.01, samples: 80, policy }],
      requestedLower: 0.6,
      qualityBar: 0.95,
      confidence: 0.95,
      contractVersion: 0,
      at: NOW,
    };
    const panel = await panelOf([route({ split })]);
    // 62% of the 40% it picks: 24.8% of all calls go to small, 75% stay on big.
    expect(panel).toContain(
      '<dd data-field="shares">62% of the calls per-call policy #2 picks (it picks 40% of the calls) → small (E[c − r] ≥ -0.010 on 80 paired samples); 75% → big</dd>',
    );
  });

  it('says who pinned the route and what the router would choose', async () => {
    const panel = await panelOf([route({ pinnedModel: 'small' })]);
    expect(panel).toContain('<span class="badge pinned" data-field="phase">pinned (router&#39;s choice: big)</span>');
    expect(panel).toContain('every call → small, pinned by a person');
  });
});
