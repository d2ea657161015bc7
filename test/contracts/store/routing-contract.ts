/**
 * The Store contract, routing (`RoutingStore`, `src/store/routing-store.ts`:
 * eval contracts, evidence, routes and their history, eval spend, judge
 * checks, feedback; the router's queue is `router-queue-contract.ts`): every
 * back end runs it unchanged, through the Store interface alone. The tests
 * of two processes on one database run when the back end can open them
 * (`openShared`).
 */
import { describe, expect, it } from 'vitest';
import { decodeSketch } from '../../../src/store/latency-sketch.js';
import type { Scope } from '../../../src/api/scope.js';
import type { PairedCounts, Revised, RouteChange, RouteRecord, RouteSplit } from '../../../src/store/routing-store.js';
import type { Store } from '../../../src/store/store.js';
import { eachTestOnAFreshStore, eachTestOnSharedStores, type OpenSharedStores, type OpenStore } from './store-contract-support.js';

const scope: Scope = { accountId: 'acct-1', project: 'shop', workload: 'summarise' };

export function describeRoutingContract(open: OpenStore, openShared?: OpenSharedStores): void {
  describe('routing', () => {
    let store: Store;
    eachTestOnAFreshStore(open, (opened) => (store = opened));

    const other = { ...scope, accountId: 'acct-2' };
    const delta = { evaluated: 1, passed: 1, errors: 0, promptTokens: 100, completionTokens: 20, costUsd: 0.001, latencyMsTotal: 250 };
    const zero = (): PairedCounts => ({
      same: { right: 0, wrong: 0, ungraded: 0 },
      win: { right: 0, wrong: 0, ungraded: 0 },
      loss: { right: 0, wrong: 0, ungraded: 0 },
      tie: { right: 0, wrong: 0, ungraded: 0 },
    });

    it('versions contracts per workload', async () => {
      expect(await store.routing.getContract(scope)).toBeNull();
      const first = await store.routing.putContract(scope, { pass_rate: 0.9 }, 1_000);
      const second = await store.routing.putContract(scope, { pass_rate: 0.95, checks: [{ type: 'regex', pattern: '^a\\u0000' }] }, 2_000);
      expect([first.version, second.version]).toEqual([1, 2]);
      expect(await store.routing.getContract(scope)).toEqual(second);
      expect(await store.routing.getContract(other)).toBeNull();
      const concurrent = await Promise.all(Array.from({ length: 5 }, (_, index) => store.routing.putContract(other, { index }, 3_000)));
      expect(concurrent.map((stored) => stored.version).sort()).toEqual([1, 2, 3, 4, 5]);
    });

    it('keeps the evidence version of the last contract when the checks did not change', async () => {
      const workload = { ...scope, workload: 'evidence' };
      const kept = await store.routing.putContract(workload, { pass_rate: 0.9 }, 1_000, true);
      expect(kept).toMatchObject({ version: 1, evidenceVersion: 0 });
      const fresh = await store.routing.putContract(workload, { checks: [{ type: 'regex', pattern: 'x' }] }, 2_000);
      expect(fresh).toMatchObject({ version: 2, evidenceVersion: 2 });
      const tightened = await store.routing.putContract(
        workload,
        { checks: [{ type: 'regex', pattern: 'x' }], pass_rate: 0.99 },
        3_000,
        true,
      );
      expect(tightened).toMatchObject({ version: 3, evidenceVersion: 2 });
      expect(await store.routing.getContract(workload)).toEqual(tightened);
    });

    it('keeps a latency sketch per model beside its counts', async () => {
      const workload = { ...scope, workload: 'latency' };
      const none = { ...delta, evaluated: 0, passed: 0 };
      for (const latencyMs of [10, 20, 30, 400])
        await store.routing.addEvidence(workload, 'big', 'small', 1, { ...none, latencyMs, ttftMs: latencyMs / 10 }, 10);
      await store.routing.addEvidence(workload, 'big', 'small', 1, none, 20);
      const [counts] = await store.routing.listEvidence(workload, 'big', 1);
      const latency = decodeSketch(counts?.latency as Uint8Array);
      expect(latency.count).toBe(4);
      expect(latency.getValueAtQuantile(1)).toBeCloseTo(400, -1);
      expect(decodeSketch(counts?.ttft as Uint8Array).getValueAtQuantile(0)).toBeCloseTo(1, 1);
      await store.routing.addEvidence(workload, 'big', 'tiny', 1, none, 30);
      expect((await store.routing.listEvidence(workload, 'big', 1)).find((row) => row.candidateModel === 'tiny')).toMatchObject({
        latency: null,
        ttft: null,
      });
    });

    it('adds evidence per candidate and contract version', async () => {
      await store.routing.addEvidence(scope, 'big', 'small', 1, delta, 10);
      await store.routing.addEvidence(scope, 'big', 'small', 1, { ...delta, passed: 0, errors: 1 }, 20);
      await store.routing.addEvidence(scope, 'big', 'tiny', 1, delta, 30);
      await store.routing.addEvidence(scope, 'big', 'small', 2, delta, 40);
      const counts = await store.routing.listEvidence(scope, 'big', 1);
      expect(counts.map((count) => [count.candidateModel, count.evaluated, count.passed, count.errors])).toEqual([
        ['small', 2, 1, 1],
        ['tiny', 1, 1, 0],
      ]);
      expect(counts[0]).toMatchObject({ promptTokens: 200, completionTokens: 40, latencyMsTotal: 500, updatedAt: 20 });
      expect(counts[0]?.costUsd).toBeCloseTo(0.002, 12);
      expect(await store.routing.listEvidence(other, 'big', 1)).toEqual([]);
      await store.routing.resetEvidence(scope, 'big', 'small', 1);
      expect((await store.routing.listEvidence(scope, 'big', 1)).map((count) => count.candidateModel)).toEqual(['tiny']);
      expect(await store.routing.listEvidence(scope, 'big', 2)).toHaveLength(1);
    });

    it("lists a project's evidence for a requested model: every workload's, under every version, by workload then candidate", async () => {
      const checkout = { ...scope, workload: 'checkout' };
      const elsewhere = { ...scope, project: 'other' };
      /** The paired counts of one sample. */
      const one = (outcome: 'win' | 'loss' | 'tie', grade: 'right' | 'wrong' | 'ungraded'): PairedCounts => {
        const paired = zero();
        paired[outcome][grade] = 1;
        return paired;
      };
      // Each row its own counts, so a row merged into another, or read under another workload or version, shows.
      const added = [
        { at: scope, requested: 'big', candidate: 'tiny', version: 1, evaluated: 1, outcome: 'win', grade: 'right' },
        { at: scope, requested: 'big', candidate: 'small', version: 1, evaluated: 2, outcome: 'loss', grade: 'wrong' },
        { at: scope, requested: 'big', candidate: 'small', version: 2, evaluated: 3, outcome: 'tie', grade: 'ungraded' },
        { at: checkout, requested: 'big', candidate: 'tiny', version: 2, evaluated: 4, outcome: 'win', grade: 'wrong' },
        { at: checkout, requested: 'big', candidate: 'tiny', version: 1, evaluated: 5, outcome: 'loss', grade: 'right' },
        { at: checkout, requested: 'big', candidate: 'small', version: 1, evaluated: 6, outcome: 'tie', grade: 'right' },
        // Not the project's 'big' evidence: another requested model, another project, another account.
        { at: checkout, requested: 'mid', candidate: 'tiny', version: 1, evaluated: 7, outcome: 'win', grade: 'right' },
        { at: elsewhere, requested: 'big', candidate: 'tiny', version: 1, evaluated: 8, outcome: 'win', grade: 'right' },
        { at: other, requested: 'big', candidate: 'small', version: 2, evaluated: 9, outcome: 'win', grade: 'right' },
      ] as const;
      for (const row of added) {
        await store.routing.addEvidence(
          row.at,
          row.requested,
          row.candidate,
          row.version,
          { ...delta, evaluated: row.evaluated, passed: row.evaluated, paired: { outcome: row.outcome, grade: row.grade } },
          10,
        );
      }

      const rows = await store.routing.listProjectEvidence({ accountId: scope.accountId, project: 'shop' }, 'big');
      expect(
        rows.map(({ workload, requestedModel, contractVersion, candidateModel, evaluated, passed, paired }) => ({
          workload,
          requestedModel,
          contractVersion,
          candidateModel,
          evaluated,
          passed,
          paired,
        })),
      ).toEqual([
        {
          workload: 'checkout',
          requestedModel: 'big',
          contractVersion: 1,
          candidateModel: 'small',
          evaluated: 6,
          passed: 6,
          paired: one('tie', 'right'),
        },
        {
          workload: 'checkout',
          requestedModel: 'big',
          contractVersion: 1,
          candidateModel: 'tiny',
          evaluated: 5,
          passed: 5,
          paired: one('loss', 'right'),
        },
        {
          workload: 'checkout',
          requestedModel: 'big',
          contractVersion: 2,
          candidateModel: 'tiny',
          evaluated: 4,
          passed: 4,
          paired: one('win', 'wrong'),
        },
        {
          workload: 'summarise',
          requestedModel: 'big',
          contractVersion: 1,
          candidateModel: 'small',
          evaluated: 2,
          passed: 2,
          paired: one('loss', 'wrong'),
        },
        {
          workload: 'summarise',
          requestedModel: 'big',
          contractVersion: 2,
          candidateModel: 'small',
          evaluated: 3,
          passed: 3,
          paired: one('tie', 'ungraded'),
        },
        {
          workload: 'summarise',
          requestedModel: 'big',
          contractVersion: 1,
          candidateModel: 'tiny',
          evaluated: 1,
          passed: 1,
          paired: one('win', 'right'),
        },
      ]);
      // A row is the workload's own row, as listEvidence reads it, with its workload.
      expect(rows[1]).toEqual({
        ...(await store.routing.listEvidence(checkout, 'big', 1)).find((row) => row.candidateModel === 'tiny'),
        workload: 'checkout',
      });
      expect(await store.routing.listProjectEvidence({ accountId: scope.accountId, project: 'shop' }, 'huge')).toEqual([]);
    });

    it('counts paired samples per outcome and grade, and absolute-check results, beside the other counts', async () => {
      const workload = { ...scope, workload: 'paired' };
      const none = { ...delta, evaluated: 0, passed: 0, promptTokens: 0, completionTokens: 0, costUsd: 0, latencyMsTotal: 0 };
      await store.routing.addEvidence(workload, 'big', 'small', 1, none, 10);
      expect(await store.routing.listEvidence(workload, 'big', 1)).toEqual([
        expect.objectContaining({ paired: zero(), constraintsEvaluated: 0, constraintsPassed: 0 }),
      ]);

      // Each cell a different number of times (1 to 12), all at once: a sample counted in
      // another cell, or an increment lost to a concurrent one, changes the totals.
      const expected = zero();
      const samples: Array<Parameters<typeof store.routing.addEvidence>[4]> = [];
      let times = 0;
      for (const outcome of ['same', 'win', 'loss', 'tie'] as const) {
        for (const grade of ['right', 'wrong', 'ungraded'] as const) {
          times += 1;
          expected[outcome][grade] = times;
          for (let index = 0; index < times; index++)
            samples.push({ ...none, evaluated: 1, passed: outcome === 'loss' ? 0 : 1, paired: { outcome, grade } });
        }
      }
      await Promise.all(samples.map((sample) => store.routing.addEvidence(workload, 'big', 'small', 1, sample, 20)));
      await store.routing.addEvidence(workload, 'big', 'small', 1, { ...none, constraintsEvaluated: 3, constraintsPassed: 2 }, 30);
      await store.routing.addEvidence(
        workload,
        'big',
        'small',
        1,
        { ...delta, constraintsEvaluated: 2, constraintsPassed: 2, paired: { outcome: 'win', grade: 'wrong' } },
        40,
      );
      expected.win.wrong += 1;
      const [small] = await store.routing.listEvidence(workload, 'big', 1);
      expect(small?.paired).toEqual(expected);
      expect(small).toMatchObject({
        evaluated: 79,
        passed: 79 - (7 + 8 + 9),
        constraintsEvaluated: 5,
        constraintsPassed: 4,
        promptTokens: 100,
        updatedAt: 40,
      });

      // Another candidate, or another evidence version, counts on its own.
      await store.routing.addEvidence(workload, 'big', 'tiny', 1, { ...none, paired: { outcome: 'tie', grade: 'ungraded' } }, 50);
      await store.routing.addEvidence(workload, 'big', 'small', 2, { ...none, constraintsEvaluated: 1, constraintsPassed: 0 }, 50);
      const tiny = zero();
      tiny.tie.ungraded = 1;
      expect((await store.routing.listEvidence(workload, 'big', 1)).find((row) => row.candidateModel === 'tiny')).toMatchObject({
        paired: tiny,
        constraintsEvaluated: 0,
      });
      expect(await store.routing.listEvidence(workload, 'big', 2)).toEqual([
        expect.objectContaining({ paired: zero(), constraintsEvaluated: 1, constraintsPassed: 0 }),
      ]);
      expect((await store.routing.listEvidence(workload, 'big', 1)).find((row) => row.candidateModel === 'small')?.paired).toEqual(
        expected,
      );

      // Reset: the candidate starts afresh, paired and constraint counts too.
      await store.routing.resetEvidence(workload, 'big', 'small', 1);
      await store.routing.addEvidence(workload, 'big', 'small', 1, { ...none, paired: { outcome: 'loss', grade: 'right' } }, 60);
      const afresh = zero();
      afresh.loss.right = 1;
      expect((await store.routing.listEvidence(workload, 'big', 1)).find((row) => row.candidateModel === 'small')).toMatchObject({
        evaluated: 0,
        paired: afresh,
        constraintsEvaluated: 0,
        constraintsPassed: 0,
      });
    });

    it("keeps a route's split, and a relative certificate's quality bar, through every write and read", async () => {
      const workload = { ...scope, workload: 'split' };
      const certificate = {
        model: 'mid',
        evaluated: 400,
        passed: 391,
        lower: 0.012_5,
        passRate: 0.95,
        confidence: 0.95,
        contractVersion: 2,
        at: 700,
        qualityBar: 0.97,
      };
      const split: RouteSplit = {
        shares: [
          { model: 'small', share: 0.3, diffLower: -0.012_5, samples: 250 },
          { model: 'tiny', share: 0.125, diffLower: -0.02, samples: 180 },
        ],
        requestedLower: 0.9,
        qualityBar: 0.97,
        confidence: 0.95,
        contractVersion: 2,
        at: 700,
      };
      const created: RouteRecord = {
        scope: workload,
        requestedModel: 'big',
        servedModel: 'mid',
        pinnedModel: null,
        certificate,
        cooldowns: {},
        fallbacks: ['big'],
        split,
        updatedAt: 700,
      };
      expect(await store.routing.createRoute(created)).toEqual(created);
      // A second create returns the route held, split and all.
      expect(await store.routing.createRoute({ ...created, certificate: null, split: null, updatedAt: 750 })).toEqual(created);
      expect(await store.routing.listRoutes(workload)).toEqual([created]);
      const [first] = await store.routing.listRoutesChangedAfter(0);
      expect(first?.record).toEqual(created);

      // The shares change, the serving model stays: a change of reason `split`.
      const resplit: RouteRecord = {
        ...created,
        split: { ...split, shares: [{ model: 'small', share: 0.4, diffLower: -0.01, samples: 320 }], at: 800 },
        updatedAt: 800,
      };
      const change: RouteChange = {
        requestedModel: 'big',
        fromModel: 'mid',
        toModel: 'mid',
        reason: 'split',
        certificate,
        detail: 'small 40%; tiny dropped',
        at: 800,
      };
      await store.routing.saveRoute(resplit, change);
      expect(await store.routing.listRoutes(workload)).toEqual([resplit]);
      expect((await store.routing.listRoutesChangedAfter(first?.revision ?? 0)).map((revised) => revised.record)).toEqual([resplit]);
      expect(await store.routing.listRouteChanges(workload, 10)).toEqual([change]);
      expect((await store.routing.listRouteChanges(workload, 10))[0]?.certificate?.qualityBar).toBe(0.97);

      // No share certified any more: the split is gone.
      await store.routing.saveRoute({ ...resplit, split: null, updatedAt: 900 }, null);
      expect((await store.routing.listRoutes(workload))[0]?.split).toBeNull();
      expect((await store.routing.listRoutesChangedAfter(0)).map((revised) => revised.record.split)).toEqual([null]);
    });

    it('saves routes with their history, and lists what was written after a revision', async () => {
      const certificate = {
        model: 'small',
        evaluated: 120,
        passed: 119,
        lower: 0.951,
        passRate: 0.95,
        confidence: 0.95,
        contractVersion: 1,
        at: 500,
      };
      const route = {
        scope,
        requestedModel: 'big',
        servedModel: 'small',
        pinnedModel: null,
        certificate,
        cooldowns: { tiny: 9_000 },
        fallbacks: ['mid'],
        split: null,
        updatedAt: 500,
      };
      await store.routing.saveRoute(route, {
        requestedModel: 'big',
        fromModel: 'big',
        toModel: 'small',
        reason: 'certified',
        certificate,
        detail: null,
        at: 500,
      });
      const [certified] = await store.routing.listRoutesChangedAfter(0);
      expect(certified).toEqual({ record: route, revision: expect.any(Number) });
      const revision = certified?.revision ?? Number.NaN;
      expect(revision).toBeGreaterThan(0);
      await store.routing.saveRoute(
        { ...route, pinnedModel: 'big', updatedAt: 600 },
        { requestedModel: 'big', fromModel: 'small', toModel: 'big', reason: 'pinned', certificate: null, detail: 'by a person', at: 600 },
      );
      expect(await store.routing.listRoutes(scope)).toEqual([{ ...route, pinnedModel: 'big', updatedAt: 600 }]);
      expect(await store.routing.listRoutes(other)).toEqual([]);
      const [pinned, ...more] = await store.routing.listRoutesChangedAfter(revision);
      expect(more).toEqual([]);
      expect(pinned?.record).toEqual({ ...route, pinnedModel: 'big', updatedAt: 600 });
      expect(pinned?.revision).toBeGreaterThan(revision);
      expect(await store.routing.listRoutesChangedAfter(pinned?.revision ?? 0)).toEqual([]);
      const history = await store.routing.listRouteChanges(scope, 10);
      expect(history.map((change) => change.reason)).toEqual(['pinned', 'certified']);
      expect(history[1]?.certificate).toEqual(certificate);
    });

    it('creates a route only when the workload has none for its model: a default never overwrites a pin another process wrote', async () => {
      const fresh = {
        scope,
        requestedModel: 'fresh',
        servedModel: 'fresh',
        pinnedModel: null,
        certificate: null,
        cooldowns: {},
        fallbacks: [],
        split: null,
        updatedAt: 100,
      };
      expect(await store.routing.createRoute(fresh)).toEqual(fresh);
      const pinned = { ...fresh, pinnedModel: 'small', updatedAt: 200 };
      await store.routing.saveRoute(pinned, null);
      expect(await store.routing.createRoute({ ...fresh, updatedAt: 300 })).toEqual(pinned);
      expect((await store.routing.listRoutes(scope)).find((route) => route.requestedModel === 'fresh')).toEqual(pinned);
    });

    it('a poll by revision gets every route write, whatever the clock of the process that made it', async () => {
      // Three processes write: one 5 s ahead, one on time, one 5 s behind. updatedAt is their clock; the revision is the store's.
      const now = Date.now();
      const route = (requestedModel: string, fields: Partial<RouteRecord>, clockOffsetMs: number): RouteRecord => ({
        scope,
        requestedModel,
        servedModel: requestedModel,
        pinnedModel: null,
        certificate: null,
        cooldowns: {},
        fallbacks: [],
        split: null,
        ...fields,
        updatedAt: now + clockOffsetMs,
      });
      const poll = async (after: number) => {
        const changed = await store.routing.listRoutesChangedAfter(after);
        return { changed, next: changed.at(-1)?.revision ?? after };
      };
      await store.routing.saveRoute(route('big', {}, 0), null);
      let read = await poll(0);
      expect(read.changed.map((changed) => changed.record)).toEqual([route('big', {}, 0)]);

      const writes = [
        route('big', { pinnedModel: 'mid' }, +5_000), // pinned by the process ahead
        route('large', { servedModel: 'small' }, -5_000), // certified by the process behind
        route('big', { pinnedModel: null }, -5_000), // unpinned by it, older by its clock than the pin
        route('large', { servedModel: 'large', cooldowns: { small: now + 60_000 } }, 0), // demoted on time
      ];
      const seen: Array<Revised<RouteRecord>> = [];
      for (const [index, write] of writes.entries()) {
        const detail = `change ${index}`;
        await store.routing.saveRoute(write, {
          requestedModel: write.requestedModel,
          fromModel: 'big',
          toModel: write.servedModel,
          reason: 'certified',
          certificate: null,
          detail,
          at: write.updatedAt,
        });
        const next = await poll(read.next);
        // Each poll gets exactly the write made since the last one: none is missed, none comes back.
        expect(next.changed.map((changed) => changed.record)).toEqual([write]);
        seen.push(...next.changed);
        read = next;
      }
      const revisions = seen.map((changed) => changed.revision);
      expect(revisions).toEqual([...revisions].sort((left, right) => left - right));
      expect(new Set(revisions).size).toBe(revisions.length);
      // A reader that polls only now gets each route once, as last written, in the order of those writes.
      expect((await store.routing.listRoutesChangedAfter(revisions[0]! - 1)).map((changed) => changed.record)).toEqual([
        writes[2],
        writes[3],
      ]);
      expect(await store.routing.listRoutes(scope)).toEqual([writes[2], writes[3]]);
      // The history too is in the order written, the last first, whatever its times say.
      expect((await store.routing.listRouteChanges(scope, 10)).map((change) => change.detail)).toEqual([
        'change 3',
        'change 2',
        'change 1',
        'change 0',
      ]);
    });

    it('sums eval spend per day, and keeps one feedback per request', async () => {
      await store.routing.addEvalSpend(scope, '2026-11-21', 0.25, 'big');
      await store.routing.addEvalSpend(scope, '2026-11-21', 0.5, 'big');
      expect(await store.routing.getEvalSpend(scope, '2026-11-21')).toBeCloseTo(0.75, 12);
      expect(await store.routing.getEvalSpend(scope, '2026-11-22')).toBe(0);
      await store.routing.addEvalSpend(scope, '2026-11-22', 1, 'big');
      await store.routing.addEvalSpend(scope, '2026-11-22', 0.5, 'mid');
      const byRoute = await store.routing.evalSpendByRoute(scope);
      expect(byRoute.big).toBeCloseTo(1.75, 12);
      expect(byRoute.mid).toBeCloseTo(0.5, 12);
      expect(await store.routing.evalSpendByRoute(other)).toEqual({});
      await store.routing.addJudgeCheck(scope, 'judge-a', false);
      await store.routing.addJudgeCheck(scope, 'judge-a', true);
      await store.routing.addJudgeCheck(scope, 'judge-b', false);
      expect(await store.routing.listJudgeChecks(scope)).toEqual([
        { judgeModel: 'judge-a', checks: 2, falseLosses: 1 },
        { judgeModel: 'judge-b', checks: 1, falseLosses: 0 },
      ]);
      expect(await store.routing.listJudgeChecks(other)).toEqual([]);
      const feedback = {
        requestId: 'req-9',
        accountId: 'acct-1',
        model: 'small',
        project: 'shop',
        workload: 'summarise',
        pass: false,
        score: null,
        comment: 'wrong total',
        evidenceVersion: 3,
        createdAt: 1,
      };
      await store.routing.recordFeedback(feedback);
      await store.routing.recordFeedback({ ...feedback, pass: true, score: 0.8, comment: null, evidenceVersion: null, createdAt: 2 });
      expect(await store.routing.getFeedback('acct-1', 'req-9')).toEqual({
        ...feedback,
        pass: true,
        score: 0.8,
        comment: null,
        evidenceVersion: null,
        createdAt: 2,
      });
      expect(await store.routing.getFeedback('acct-2', 'req-9')).toBeNull();
      await store.routing.recordFeedback({ ...feedback, requestId: 'req-10', pass: false, score: 0.2 });
      expect(await store.routing.feedbackSummary(scope)).toEqual([{ model: 'small', count: 2, passed: 1, failed: 1, meanScore: 0.5 }]);
    });
  });

  describe.skipIf(openShared === undefined)('routing: two processes on one database', () => {
    let first: Store;
    let second: Store;
    eachTestOnSharedStores(openShared, (stores) => ([first, second] = stores));

    it('route writes of processes with clocks 5 s apart all reach a reader polling by revision', async () => {
      const now = Date.now();
      const route = (fields: Partial<RouteRecord>, clockOffsetMs: number): RouteRecord => ({
        scope,
        requestedModel: 'big',
        servedModel: 'big',
        pinnedModel: null,
        certificate: null,
        cooldowns: {},
        fallbacks: [],
        split: null,
        ...fields,
        updatedAt: now + clockOffsetMs,
      });
      await first.routing.saveRoute(route({}, 0), null);
      let last = (await second.routing.listRoutesChangedAfter(0)).at(-1)?.revision ?? 0;
      // The first process's clock is 5 s ahead, then 5 s behind; the second reads after each write.
      for (const [fields, offset] of [
        [{ pinnedModel: 'mid' }, +5_000],
        [{ pinnedModel: null, servedModel: 'small' }, -5_000],
        [{ servedModel: 'big' }, -5_000],
      ] as const) {
        await first.routing.saveRoute(route(fields, offset), null);
        const changed = await second.routing.listRoutesChangedAfter(last);
        expect(changed.map((revised) => revised.record)).toEqual([route(fields, offset)]);
        last = changed.at(-1)?.revision ?? last;
      }
    });

    it('revisions follow commit order: a reader polling while both processes write misses no write', async () => {
      // Each process writes its own routes, each route a rising count; a third party polls meanwhile.
      const writer = async (store: Store, name: string) => {
        for (let count = 1; count <= 15; count++) {
          await store.routing.saveRoute(
            {
              scope,
              requestedModel: `${name}-${count % 3}`,
              servedModel: `${count}`,
              pinnedModel: null,
              certificate: null,
              cooldowns: {},
              fallbacks: [],
              split: null,
              updatedAt: count,
            },
            null,
          );
        }
      };
      const held = new Map<string, string>();
      const revisions: number[] = [];
      let last = 0;
      const poll = async () => {
        for (const { record, revision } of await second.routing.listRoutesChangedAfter(last)) {
          held.set(record.requestedModel, record.servedModel);
          revisions.push(revision);
          last = revision;
        }
      };
      let writing = true;
      const polling = (async () => {
        while (writing) await poll();
      })();
      await Promise.all([writer(first, 'first'), writer(second, 'second'), writer(first, 'third'), writer(second, 'fourth')]);
      writing = false;
      await polling;
      await poll();
      // Every revision read is above the last one read, and what the reader holds is what the store holds.
      expect(revisions).toEqual([...revisions].sort((left, right) => left - right));
      expect(new Set(revisions).size).toBe(revisions.length);
      const stored = await first.routing.listRoutes(scope);
      expect(stored).toHaveLength(12);
      expect(Object.fromEntries(held)).toEqual(Object.fromEntries(stored.map((route) => [route.requestedModel, route.servedModel])));
      expect(stored.every((route) => ['13', '14', '15'].includes(route.servedModel))).toBe(true);
    });
  });
}
