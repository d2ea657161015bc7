/**
 * The Store contract as a test suite. Every back end runs it unchanged
 * (`describeStoreContract('sqlite', …)`, later `('postgres', …)`), so it uses
 * only the Store interface and never a back end's own tables or settings.
 *
 * `openStore` must return a store on an empty database; the suite migrates it.
 * Ids and request ids are compared as plain code-unit strings (as JavaScript
 * sorts them), so a back end must order ties with a binary collation.
 */
import { decodeSketch } from '../tracking/latency-sketch.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeFleetStoreContract, type OpenSharedStores } from './fleet-store-contract.js';
import { describeRetentionRollupContract } from './retention-rollup-contract.js';
import type { PairedCounts, Revised, RouteChange, RouteRecord, RouteSplit } from './routing-store.js';
import type { ApiKey, NewApiKey, Page, PageRequest, Store, Trace, TraceFilter } from './store.js';

/**
 * `openShared` opens two stores on one fresh, migrated database (two processes'
 * view of it), for the fleet tests that need both; a back end that cannot
 * (SQLite `:memory:`) leaves it out.
 */
export function describeStoreContract(backendName: string, openStore: () => Promise<Store>, openShared?: OpenSharedStores): void {
  describe(`Store contract: ${backendName}`, () => {
    describeFleetStoreContract(openStore, openShared);
    describeRetentionRollupContract(openStore);

    let store: Store;

    beforeEach(async () => {
      store = await openStore();
      await store.migrate();
    });

    afterEach(async () => {
      await store.close();
    });

    describe('accounts', () => {
      it('ensureAccount creates an account once and returns it on every call', async () => {
        const first = await store.accounts.ensureAccount('acme');
        const again = await store.accounts.ensureAccount('acme');
        const other = await store.accounts.ensureAccount('globex');
        expect(first).toEqual({ id: expect.any(String), name: 'acme', createdAt: expect.any(Number) });
        expect(again).toEqual(first);
        expect(other.id).not.toBe(first.id);
        expect(await store.accounts.getAccount(first.id)).toEqual(first);
        expect(await store.accounts.getAccount('acct_missing')).toBeNull();
      });

      it('concurrent ensureAccount calls agree on one account', async () => {
        const accounts = await Promise.all(Array.from({ length: 20 }, () => store.accounts.ensureAccount('acme')));
        expect(new Set(accounts.map((account) => account.id)).size).toBe(1);
      });
    });

    describe('keys', () => {
      it('createKey fills id and times; findKeyByHash returns the same record', async () => {
        const account = await store.accounts.ensureAccount('acme');
        const before = Date.now();
        const key = await store.accounts.createKey(newKey(account.id, 'a'.repeat(64)));
        expect(key).toEqual({
          ...newKey(account.id, 'a'.repeat(64)),
          tokensPerMinute: null,
          id: expect.any(String),
          createdAt: expect.any(Number),
          lastUsedAt: null,
          revokedAt: null,
        });
        expect(key.createdAt).toBeGreaterThanOrEqual(before);
        expect(await store.accounts.findKeyByHash('a'.repeat(64))).toEqual(key);
        expect(await store.accounts.findKeyByHash('b'.repeat(64))).toBeNull();

        const dated = await store.accounts.createKey({
          ...newKey(account.id, 'c'.repeat(64)),
          createdAt: 1_000,
          name: null,
          environment: 'staging',
          role: 'admin',
          requestsPerMinute: 60,
          tokensPerMinute: 90_000,
        });
        expect(await store.accounts.findKeyByHash('c'.repeat(64))).toEqual(dated);
        expect(dated).toMatchObject({ createdAt: 1_000, name: null, environment: 'staging', role: 'admin', requestsPerMinute: 60, tokensPerMinute: 90_000 });
      });

      it('listKeys pages newest first, ties broken by id, only the account\'s own keys', async () => {
        const account = await store.accounts.ensureAccount('acme');
        const other = await store.accounts.ensureAccount('globex');
        const created: ApiKey[] = [];
        for (const [index, createdAt] of [5_000, 1_000, 3_000, 3_000, 3_000, 2_000, 4_000].entries()) {
          created.push(await store.accounts.createKey({ ...newKey(account.id, `hash-${index}`), createdAt }));
        }
        await store.accounts.createKey({ ...newKey(other.id, 'hash-other'), createdAt: 9_000 });

        const pages = await collectPages((page) => store.accounts.listKeys(account.id, page), 3);
        expect(pages.map((page) => page.length)).toEqual([3, 3, 1]);
        const expected = [...created].sort((left, right) => right.createdAt - left.createdAt || compareText(right.id, left.id));
        expect(pages.flat()).toEqual(expected);
      });

      it('revokeKey revokes once, and never another account\'s key', async () => {
        const account = await store.accounts.ensureAccount('acme');
        const other = await store.accounts.ensureAccount('globex');
        const key = await store.accounts.createKey(newKey(account.id, 'hash-1'));

        expect(await store.accounts.revokeKey(other.id, key.id, 2_000)).toBe(false);
        expect((await store.accounts.findKeyByHash('hash-1'))?.revokedAt).toBeNull();
        expect(await store.accounts.revokeKey(account.id, 'key_missing', 2_000)).toBe(false);

        expect(await store.accounts.revokeKey(account.id, key.id, 2_000)).toBe(true);
        expect(await store.accounts.revokeKey(account.id, key.id, 3_000)).toBe(false);
        expect((await store.accounts.findKeyByHash('hash-1'))?.revokedAt).toBe(2_000);
      });

      it('listKeysRevokedSince returns the hashes revoked at or after the time', async () => {
        const account = await store.accounts.ensureAccount('acme');
        const early = await store.accounts.createKey(newKey(account.id, 'hash-early'));
        const late = await store.accounts.createKey(newKey(account.id, 'hash-late'));
        await store.accounts.createKey(newKey(account.id, 'hash-live'));
        await store.accounts.revokeKey(account.id, early.id, 1_000);
        await store.accounts.revokeKey(account.id, late.id, 2_000);

        expect((await store.accounts.listKeysRevokedSince(0)).sort()).toEqual(['hash-early', 'hash-late']);
        expect(await store.accounts.listKeysRevokedSince(1_500)).toEqual(['hash-late']);
        expect(await store.accounts.listKeysRevokedSince(2_000)).toEqual(['hash-late']);
        expect(await store.accounts.listKeysRevokedSince(2_001)).toEqual([]);
      });

      it('touchKeys only ever moves lastUsedAt forward', async () => {
        const account = await store.accounts.ensureAccount('acme');
        const first = await store.accounts.createKey(newKey(account.id, 'hash-1'));
        const second = await store.accounts.createKey(newKey(account.id, 'hash-2'));

        await store.accounts.touchKeys([
          { keyId: first.id, usedAt: 100 },
          { keyId: second.id, usedAt: 300 },
          { keyId: second.id, usedAt: 200 },
          { keyId: 'key_missing', usedAt: 100 },
        ]);
        expect((await store.accounts.findKeyByHash('hash-1'))?.lastUsedAt).toBe(100);
        expect((await store.accounts.findKeyByHash('hash-2'))?.lastUsedAt).toBe(300);

        await store.accounts.touchKeys([{ keyId: first.id, usedAt: 50 }]);
        expect((await store.accounts.findKeyByHash('hash-1'))?.lastUsedAt).toBe(100);
        await store.accounts.touchKeys([{ keyId: first.id, usedAt: 150 }]);
        expect((await store.accounts.findKeyByHash('hash-1'))?.lastUsedAt).toBe(150);
        await store.accounts.touchKeys([]);
      });
    });

    describe('projects and workloads', () => {
      it('ensureScope creates a project and a workload once', async () => {
        const account = await store.accounts.ensureAccount('acme');
        const first = await store.projects.ensureScope(account.id, 'shop', 'main');
        expect(first.project).toEqual({ id: expect.any(String), accountId: account.id, slug: 'shop', createdAt: expect.any(Number) });
        expect(first.workload).toEqual({ id: expect.any(String), projectId: first.project.id, name: 'main', createdAt: expect.any(Number) });
        expect(await store.projects.ensureScope(account.id, 'shop', 'main')).toEqual(first);

        const sibling = await store.projects.ensureScope(account.id, 'shop', 'summarize');
        expect(sibling.project).toEqual(first.project);
        expect(sibling.workload.id).not.toBe(first.workload.id);
        expect(await store.projects.getProject(account.id, 'shop')).toEqual(first.project);
        expect(await store.projects.getProject(account.id, 'missing')).toBeNull();
      });

      it('concurrent ensureScope calls create one project and one workload', async () => {
        const account = await store.accounts.ensureAccount('acme');
        const scopes = await Promise.all(Array.from({ length: 20 }, () => store.projects.ensureScope(account.id, 'shop', 'main')));
        expect(new Set(scopes.map((scope) => scope.project.id)).size).toBe(1);
        expect(new Set(scopes.map((scope) => scope.workload.id)).size).toBe(1);
        expect((await store.projects.listProjects(account.id, { limit: 100 })).items).toHaveLength(1);
        expect((await store.projects.listWorkloads(account.id, 'shop', { limit: 100 }))?.items).toHaveLength(1);
      });

      it('two accounts with the same slug each get their own project and never see the other\'s', async () => {
        const acme = await store.accounts.ensureAccount('acme');
        const globex = await store.accounts.ensureAccount('globex');
        const acmeShop = await store.projects.ensureScope(acme.id, 'shop', 'main');
        const globexShop = await store.projects.ensureScope(globex.id, 'shop', 'checkout');
        await store.projects.ensureScope(acme.id, 'acme-only', 'main');

        expect(globexShop.project.id).not.toBe(acmeShop.project.id);
        expect(await store.projects.getProject(globex.id, 'shop')).toEqual(globexShop.project);
        expect(await store.projects.getProject(globex.id, 'acme-only')).toBeNull();
        expect((await store.projects.listProjects(globex.id, { limit: 100 })).items).toEqual([globexShop.project]);
        expect((await store.projects.listProjects(acme.id, { limit: 100 })).items.map((project) => project.slug).sort()).toEqual([
          'acme-only',
          'shop',
        ]);
        expect((await store.projects.listWorkloads(globex.id, 'shop', { limit: 100 }))?.items).toEqual([globexShop.workload]);
        expect(await store.projects.listWorkloads(globex.id, 'acme-only', { limit: 100 })).toBeNull();
      });

      it('listProjects and listWorkloads page oldest first without duplicates or gaps', async () => {
        const account = await store.accounts.ensureAccount('acme');
        for (const slug of ['p1', 'p2', 'p3', 'p4', 'p5']) await store.projects.ensureScope(account.id, slug, 'main');
        for (const name of ['w2', 'w3', 'w4']) await store.projects.ensureScope(account.id, 'p1', name);

        const projects = await collectPages((page) => store.projects.listProjects(account.id, page), 2);
        expect(projects.map((page) => page.length)).toEqual([2, 2, 1]);
        const allProjects = projects.flat();
        expect(allProjects.map((project) => project.slug).sort()).toEqual(['p1', 'p2', 'p3', 'p4', 'p5']);
        expect(allProjects).toEqual([...allProjects].sort((left, right) => left.createdAt - right.createdAt || compareText(left.id, right.id)));

        const workloads = await collectPages(async (page) => {
          const result = await store.projects.listWorkloads(account.id, 'p1', page);
          if (result === null) throw new Error('project p1 should exist');
          return result;
        }, 3);
        expect(workloads.map((page) => page.length)).toEqual([3, 1]);
        expect(workloads.flat().map((workload) => workload.name).sort()).toEqual(['main', 'w2', 'w3', 'w4']);
        expect(await store.projects.listWorkloads(account.id, 'missing', { limit: 10 })).toBeNull();
      });

      it('clamps page limits to 1..100', async () => {
        const account = await store.accounts.ensureAccount('acme');
        for (let index = 0; index < 101; index += 1) await store.projects.ensureScope(account.id, `p-${index}`, 'main');
        expect((await store.projects.listProjects(account.id, { limit: 0 })).items).toHaveLength(1);
        expect((await store.projects.listProjects(account.id, { limit: -5 })).items).toHaveLength(1);
        const capped = await store.projects.listProjects(account.id, { limit: 1_000 });
        expect(capped.items).toHaveLength(100);
        expect(capped.nextCursor).not.toBeNull();
      });

      it('rejects a cursor it did not make as a 400 on the cursor parameter', async () => {
        const account = await store.accounts.ensureAccount('acme');
        await expect(store.projects.listProjects(account.id, { limit: 10, cursor: 'not-a-cursor' })).rejects.toMatchObject({
          status: 400,
          param: 'cursor',
        });
      });
    });

    describe('traces', () => {
      it('stores every field and reads it back unchanged', async () => {
        const full = trace({
          requestId: 'req-full',
          // Drawn into a certified share of a cheaper model.
          servedModel: 'qwen2.5-1.5b-instruct',
          routeReason: 'split',
          routeShare: 0.312_5,
          metadata: { team: 'search', 'ticket-id': '42' },
          stream: true,
          ttftMs: 12.5,
          // Tried on two replicas that refused it before a third served it.
          replica: 'gpu-c',
          attempts: [
            { replica: 'gpu-a', outcome: 'engine_unavailable' },
            { replica: 'gpu-b', outcome: 'engine_connection_closed' },
            { replica: 'gpu-c', outcome: 'ok' },
          ],
        });
        const sparse = trace({
          requestId: 'req-sparse',
          project: null,
          workload: null,
          user: null,
          requestedModel: null,
          servedModel: null,
          routeReason: null,
          routeShare: null,
          replica: null,
          attempts: null,
          status: 'error',
          errorClass: 'invalid_api_key',
          errorMessage: 'Invalid API key.',
          httpStatus: 401,
          finishReason: null,
          ttftMs: null,
          stream: false,
          metadata: null,
          requestBody: null,
          replyBody: null,
        });
        expect(await store.traces.insertBatch([full, sparse])).toBe(2);
        expect(await store.traces.get('acct-1', 'req-full')).toEqual(full);
        expect(await store.traces.get('acct-1', 'req-sparse')).toEqual(sparse);
        const listed = (await store.traces.list('acct-1', {}, { limit: 10 })).items.find((item) => item.requestId === 'req-full');
        expect(listed?.attempts).toEqual(full.attempts);
        expect(listed).toMatchObject({ routeReason: 'split', routeShare: 0.312_5 });
        expect(await store.traces.get('acct-1', 'req-missing')).toBeNull();
      });

      it('keeps NUL characters and unicode exactly', async () => {
        const text = 'a\u0000b\u0000\u0000 é 漢字 👩‍💻 \u202Eright-to-left\u202C \r\n\t "quoted" \\';
        const stored = trace({
          requestId: `req-\u0000-${text}`,
          user: text,
          errorMessage: text,
          metadata: { [text]: text, empty: '' },
          requestBody: `{"messages":[{"role":"user","content":"${text}"}]}`,
          replyBody: text.repeat(1_000),
        });
        await store.traces.insertBatch([stored]);
        expect(await store.traces.get('acct-1', stored.requestId)).toEqual(stored);
        expect((await store.traces.list('acct-1', { user: text }, { limit: 10 })).items).toEqual([stored]);
        expect(await store.traces.get('acct-1', 'req-')).toBeNull();
      });

      it('insertBatch skips request ids already stored, in the same batch or an earlier one', async () => {
        const first = trace({ requestId: 'req-1', promptTokens: 1 });
        expect(await store.traces.insertBatch([first, trace({ requestId: 'req-1', promptTokens: 2 }), trace({ requestId: 'req-2' })])).toBe(2);
        expect(await store.traces.insertBatch([trace({ requestId: 'req-2' }), trace({ requestId: 'req-3' })])).toBe(1);
        expect(await store.traces.insertBatch([])).toBe(0);
        expect(await store.traces.count('acct-1', {})).toBe(3);
        expect(await store.traces.get('acct-1', 'req-1')).toEqual(first);
      });

      it('a trace is visible only to its own account', async () => {
        await store.traces.insertBatch([trace({ requestId: 'req-1', accountId: 'acct-1' }), trace({ requestId: 'req-2', accountId: 'acct-2' })]);
        expect(await store.traces.get('acct-2', 'req-1')).toBeNull();
        expect((await store.traces.get('acct-2', 'req-2'))?.requestId).toBe('req-2');
        expect((await store.traces.list('acct-2', {}, { limit: 100 })).items.map((item) => item.requestId)).toEqual(['req-2']);
        expect(await store.traces.count('acct-3', {})).toBe(0);
      });

      it('list and count filter by project, workload, status, model, user and environment', async () => {
        const traces = [
          trace({ requestId: 'r1', startedAt: 1_001, project: 'shop', workload: 'main', servedModel: 'small', user: 'ann' }),
          trace({ requestId: 'r2', startedAt: 1_002, project: 'shop', workload: 'search', servedModel: 'large', status: 'error' }),
          trace({ requestId: 'r3', startedAt: 1_003, project: 'blog', workload: 'main', servedModel: 'small', environment: 'staging' }),
          trace({ requestId: 'r4', startedAt: 1_004, project: 'shop', workload: 'main', servedModel: 'large', user: 'bob', status: 'aborted' }),
          trace({ requestId: 'r5', startedAt: 1_005, project: 'shop', workload: 'main', servedModel: 'small', user: 'ann', environment: 'staging' }),
          trace({ requestId: 'r6', startedAt: 1_006, project: 'shop', workload: 'main', accountId: 'acct-2' }),
        ];
        await store.traces.insertBatch(traces);
        const cases: Array<[TraceFilter, string[]]> = [
          [{}, ['r5', 'r4', 'r3', 'r2', 'r1']],
          [{ project: 'shop' }, ['r5', 'r4', 'r2', 'r1']],
          [{ project: 'shop', workload: 'main' }, ['r5', 'r4', 'r1']],
          [{ workload: 'main' }, ['r5', 'r4', 'r3', 'r1']],
          [{ status: 'error' }, ['r2']],
          [{ status: 'aborted' }, ['r4']],
          [{ model: 'small' }, ['r5', 'r3', 'r1']],
          [{ user: 'ann' }, ['r5', 'r1']],
          [{ environment: 'staging' }, ['r5', 'r3']],
          [{ environment: 'production', project: 'shop', workload: 'main', model: 'small', user: 'ann', status: 'ok' }, ['r1']],
          [{ project: 'nowhere' }, []],
        ];
        for (const [filter, expected] of cases) {
          const page = await store.traces.list('acct-1', filter, { limit: 100 });
          expect(page.items.map((item) => item.requestId), JSON.stringify(filter)).toEqual(expected);
          expect(page.nextCursor).toBeNull();
          expect(await store.traces.count('acct-1', filter), JSON.stringify(filter)).toBe(expected.length);
        }
      });

      it('pages newest first, ties broken by request id, with no duplicates or gaps', async () => {
        const traces = Array.from({ length: 23 }, (_, index) =>
          trace({ requestId: `req-${String(index).padStart(2, '0')}`, startedAt: 1_000 + Math.floor(index / 4), workload: index % 2 === 0 ? 'main' : 'other' }),
        );
        await store.traces.insertBatch([...traces].reverse());
        const newestFirst = (items: Trace[]) =>
          [...items].sort((left, right) => right.startedAt - left.startedAt || compareText(right.requestId, left.requestId));

        const pages = await collectPages((page) => store.traces.list('acct-1', {}, page), 5);
        expect(pages.map((page) => page.length)).toEqual([5, 5, 5, 5, 3]);
        expect(pages.flat().map((item) => item.requestId)).toEqual(newestFirst(traces).map((item) => item.requestId));

        const filtered = await collectPages((page) => store.traces.list('acct-1', { workload: 'main' }, page), 4);
        expect(filtered.flat().map((item) => item.requestId)).toEqual(
          newestFirst(traces.filter((item) => item.workload === 'main')).map((item) => item.requestId),
        );
      });

      it('a cursor stays valid while newer traces arrive', async () => {
        await store.traces.insertBatch(Array.from({ length: 6 }, (_, index) => trace({ requestId: `old-${index}`, startedAt: 1_000 + index })));
        const first = await store.traces.list('acct-1', {}, { limit: 3 });
        await store.traces.insertBatch([trace({ requestId: 'new-1', startedAt: 5_000 }), trace({ requestId: 'new-2', startedAt: 5_000 })]);
        const second = await store.traces.list('acct-1', {}, { limit: 3, cursor: first.nextCursor });
        expect([...first.items, ...second.items].map((item) => item.requestId)).toEqual(['old-5', 'old-4', 'old-3', 'old-2', 'old-1', 'old-0']);
        expect(second.nextCursor).toBeNull();
      });

      it('stores a batch of 1,000 traces', async () => {
        const traces = Array.from({ length: 1_000 }, (_, index) => trace({ requestId: `bulk-${index}`, startedAt: 10_000 + index }));
        expect(await store.traces.insertBatch(traces)).toBe(1_000);
        expect(await store.traces.count('acct-1', {})).toBe(1_000);
        expect(await store.traces.get('acct-1', 'bulk-999')).toEqual(traces[999]);
      });
    });

    describe('routing', () => {
      const scope = { accountId: 'acct-1', project: 'shop', workload: 'summarise' };
      const other = { ...scope, accountId: 'acct-2' };
      const delta = { evaluated: 1, passed: 1, errors: 0, promptTokens: 100, completionTokens: 20, costUsd: 0.001, latencyMsTotal: 250 };
      const zero = (): PairedCounts => ({ same: { right: 0, wrong: 0, ungraded: 0 }, win: { right: 0, wrong: 0, ungraded: 0 }, loss: { right: 0, wrong: 0, ungraded: 0 }, tie: { right: 0, wrong: 0, ungraded: 0 } });

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
        const tightened = await store.routing.putContract(workload, { checks: [{ type: 'regex', pattern: 'x' }], pass_rate: 0.99 }, 3_000, true);
        expect(tightened).toMatchObject({ version: 3, evidenceVersion: 2 });
        expect(await store.routing.getContract(workload)).toEqual(tightened);
      });

      it('keeps a latency sketch per model beside its counts', async () => {
        const workload = { ...scope, workload: 'latency' };
        const none = { ...delta, evaluated: 0, passed: 0 };
        for (const latencyMs of [10, 20, 30, 400]) await store.routing.addEvidence(workload, 'big', 'small', 1, { ...none, latencyMs, ttftMs: latencyMs / 10 }, 10);
        await store.routing.addEvidence(workload, 'big', 'small', 1, none, 20);
        const [counts] = await store.routing.listEvidence(workload, 'big', 1);
        const latency = decodeSketch(counts?.latency as Uint8Array);
        expect(latency.count).toBe(4);
        expect(latency.getValueAtQuantile(1)).toBeCloseTo(400, -1);
        expect(decodeSketch(counts?.ttft as Uint8Array).getValueAtQuantile(0)).toBeCloseTo(1, 1);
        await store.routing.addEvidence(workload, 'big', 'tiny', 1, none, 30);
        expect((await store.routing.listEvidence(workload, 'big', 1)).find((row) => row.candidateModel === 'tiny')).toMatchObject({ latency: null, ttft: null });
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
          await store.routing.addEvidence(row.at, row.requested, row.candidate, row.version, { ...delta, evaluated: row.evaluated, passed: row.evaluated, paired: { outcome: row.outcome, grade: row.grade } }, 10);
        }

        const rows = await store.routing.listProjectEvidence({ accountId: scope.accountId, project: 'shop' }, 'big');
        expect(rows.map(({ workload, requestedModel, contractVersion, candidateModel, evaluated, passed, paired }) => ({ workload, requestedModel, contractVersion, candidateModel, evaluated, passed, paired }))).toEqual([
          { workload: 'checkout', requestedModel: 'big', contractVersion: 1, candidateModel: 'small', evaluated: 6, passed: 6, paired: one('tie', 'right') },
          { workload: 'checkout', requestedModel: 'big', contractVersion: 1, candidateModel: 'tiny', evaluated: 5, passed: 5, paired: one('loss', 'right') },
          { workload: 'checkout', requestedModel: 'big', contractVersion: 2, candidateModel: 'tiny', evaluated: 4, passed: 4, paired: one('win', 'wrong') },
          { workload: 'summarise', requestedModel: 'big', contractVersion: 1, candidateModel: 'small', evaluated: 2, passed: 2, paired: one('loss', 'wrong') },
          { workload: 'summarise', requestedModel: 'big', contractVersion: 2, candidateModel: 'small', evaluated: 3, passed: 3, paired: one('tie', 'ungraded') },
          { workload: 'summarise', requestedModel: 'big', contractVersion: 1, candidateModel: 'tiny', evaluated: 1, passed: 1, paired: one('win', 'right') },
        ]);
        // A row is the workload's own row, as listEvidence reads it, with its workload.
        expect(rows[1]).toEqual({ ...(await store.routing.listEvidence(checkout, 'big', 1)).find((row) => row.candidateModel === 'tiny'), workload: 'checkout' });
        expect(await store.routing.listProjectEvidence({ accountId: scope.accountId, project: 'shop' }, 'huge')).toEqual([]);
      });

      it('counts paired samples per outcome and grade, and absolute-check results, beside the other counts', async () => {
        const workload = { ...scope, workload: 'paired' };
        const none = { ...delta, evaluated: 0, passed: 0, promptTokens: 0, completionTokens: 0, costUsd: 0, latencyMsTotal: 0 };
        await store.routing.addEvidence(workload, 'big', 'small', 1, none, 10);
        expect(await store.routing.listEvidence(workload, 'big', 1)).toEqual([expect.objectContaining({ paired: zero(), constraintsEvaluated: 0, constraintsPassed: 0 })]);

        // Each cell a different number of times (1 to 12), all at once: a sample counted in
        // another cell, or an increment lost to a concurrent one, changes the totals.
        const expected = zero();
        const samples: Array<Parameters<typeof store.routing.addEvidence>[4]> = [];
        let times = 0;
        for (const outcome of ['same', 'win', 'loss', 'tie'] as const) {
          for (const grade of ['right', 'wrong', 'ungraded'] as const) {
            times += 1;
            expected[outcome][grade] = times;
            for (let index = 0; index < times; index++) samples.push({ ...none, evaluated: 1, passed: outcome === 'loss' ? 0 : 1, paired: { outcome, grade } });
          }
        }
        await Promise.all(samples.map((sample) => store.routing.addEvidence(workload, 'big', 'small', 1, sample, 20)));
        await store.routing.addEvidence(workload, 'big', 'small', 1, { ...none, constraintsEvaluated: 3, constraintsPassed: 2 }, 30);
        await store.routing.addEvidence(workload, 'big', 'small', 1, { ...delta, constraintsEvaluated: 2, constraintsPassed: 2, paired: { outcome: 'win', grade: 'wrong' } }, 40);
        expected.win.wrong += 1;
        const [small] = await store.routing.listEvidence(workload, 'big', 1);
        expect(small?.paired).toEqual(expected);
        expect(small).toMatchObject({ evaluated: 79, passed: 79 - (7 + 8 + 9), constraintsEvaluated: 5, constraintsPassed: 4, promptTokens: 100, updatedAt: 40 });

        // Another candidate, or another evidence version, counts on its own.
        await store.routing.addEvidence(workload, 'big', 'tiny', 1, { ...none, paired: { outcome: 'tie', grade: 'ungraded' } }, 50);
        await store.routing.addEvidence(workload, 'big', 'small', 2, { ...none, constraintsEvaluated: 1, constraintsPassed: 0 }, 50);
        const tiny = zero();
        tiny.tie.ungraded = 1;
        expect((await store.routing.listEvidence(workload, 'big', 1)).find((row) => row.candidateModel === 'tiny')).toMatchObject({ paired: tiny, constraintsEvaluated: 0 });
        expect(await store.routing.listEvidence(workload, 'big', 2)).toEqual([expect.objectContaining({ paired: zero(), constraintsEvaluated: 1, constraintsPassed: 0 })]);
        expect((await store.routing.listEvidence(workload, 'big', 1)).find((row) => row.candidateModel === 'small')?.paired).toEqual(expected);

        // Reset: the candidate starts afresh, paired and constraint counts too.
        await store.routing.resetEvidence(workload, 'big', 'small', 1);
        await store.routing.addEvidence(workload, 'big', 'small', 1, { ...none, paired: { outcome: 'loss', grade: 'right' } }, 60);
        const afresh = zero();
        afresh.loss.right = 1;
        expect((await store.routing.listEvidence(workload, 'big', 1)).find((row) => row.candidateModel === 'small')).toMatchObject({ evaluated: 0, paired: afresh, constraintsEvaluated: 0, constraintsPassed: 0 });
      });

      it("keeps a route's split, and a relative certificate's quality bar, through every write and read", async () => {
        const workload = { ...scope, workload: 'split' };
        const certificate = { model: 'mid', evaluated: 400, passed: 391, lower: 0.012_5, passRate: 0.95, confidence: 0.95, contractVersion: 2, at: 700, qualityBar: 0.97 };
        const split: RouteSplit = {
          shares: [{ model: 'small', share: 0.3, diffLower: -0.012_5, samples: 250 }, { model: 'tiny', share: 0.125, diffLower: -0.02, samples: 180 }],
          requestedLower: 0.9,
          qualityBar: 0.97,
          confidence: 0.95,
          contractVersion: 2,
          at: 700,
        };
        const created: RouteRecord = { scope: workload, requestedModel: 'big', servedModel: 'mid', pinnedModel: null, certificate, cooldowns: {}, fallbacks: ['big'], split, updatedAt: 700 };
        expect(await store.routing.createRoute(created)).toEqual(created);
        // A second create returns the route held, split and all.
        expect(await store.routing.createRoute({ ...created, certificate: null, split: null, updatedAt: 750 })).toEqual(created);
        expect(await store.routing.listRoutes(workload)).toEqual([created]);
        const [first] = await store.routing.listRoutesChangedAfter(0);
        expect(first?.record).toEqual(created);

        // The shares change, the serving model stays: a change of reason `split`.
        const resplit: RouteRecord = { ...created, split: { ...split, shares: [{ model: 'small', share: 0.4, diffLower: -0.01, samples: 320 }], at: 800 }, updatedAt: 800 };
        const change: RouteChange = { requestedModel: 'big', fromModel: 'mid', toModel: 'mid', reason: 'split', certificate, detail: 'small 40%; tiny dropped', at: 800 };
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
        const certificate = { model: 'small', evaluated: 120, passed: 119, lower: 0.951, passRate: 0.95, confidence: 0.95, contractVersion: 1, at: 500 };
        const route = { scope, requestedModel: 'big', servedModel: 'small', pinnedModel: null, certificate, cooldowns: { tiny: 9_000 }, fallbacks: ['mid'], split: null, updatedAt: 500 };
        await store.routing.saveRoute(route, { requestedModel: 'big', fromModel: 'big', toModel: 'small', reason: 'certified', certificate, detail: null, at: 500 });
        const [certified] = await store.routing.listRoutesChangedAfter(0);
        expect(certified).toEqual({ record: route, revision: expect.any(Number) });
        const revision = certified?.revision ?? Number.NaN;
        expect(revision).toBeGreaterThan(0);
        await store.routing.saveRoute({ ...route, pinnedModel: 'big', updatedAt: 600 }, { requestedModel: 'big', fromModel: 'small', toModel: 'big', reason: 'pinned', certificate: null, detail: 'by a person', at: 600 });
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
        const fresh = { scope, requestedModel: 'fresh', servedModel: 'fresh', pinnedModel: null, certificate: null, cooldowns: {}, fallbacks: [], split: null, updatedAt: 100 };
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
          scope, requestedModel, servedModel: requestedModel, pinnedModel: null, certificate: null, cooldowns: {}, fallbacks: [], split: null, ...fields, updatedAt: now + clockOffsetMs,
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
          await store.routing.saveRoute(write, { requestedModel: write.requestedModel, fromModel: 'big', toModel: write.servedModel, reason: 'certified', certificate: null, detail, at: write.updatedAt });
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
        expect((await store.routing.listRoutesChangedAfter(revisions[0]! - 1)).map((changed) => changed.record)).toEqual([writes[2], writes[3]]);
        expect(await store.routing.listRoutes(scope)).toEqual([writes[2], writes[3]]);
        // The history too is in the order written, the last first, whatever its times say.
        expect((await store.routing.listRouteChanges(scope, 10)).map((change) => change.detail)).toEqual(['change 3', 'change 2', 'change 1', 'change 0']);
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
        const feedback = { requestId: 'req-9', accountId: 'acct-1', model: 'small', project: 'shop', workload: 'summarise', pass: false, score: null, comment: 'wrong total', evidenceVersion: 3, createdAt: 1 };
        await store.routing.recordFeedback(feedback);
        await store.routing.recordFeedback({ ...feedback, pass: true, score: 0.8, comment: null, evidenceVersion: null, createdAt: 2 });
        expect(await store.routing.getFeedback('acct-1', 'req-9')).toEqual({ ...feedback, pass: true, score: 0.8, comment: null, evidenceVersion: null, createdAt: 2 });
        expect(await store.routing.getFeedback('acct-2', 'req-9')).toBeNull();
        await store.routing.recordFeedback({ ...feedback, requestId: 'req-10', pass: false, score: 0.2 });
        expect(await store.routing.feedbackSummary(scope)).toEqual([{ model: 'small', count: 2, passed: 1, failed: 1, meanScore: 0.5 }]);
      });
    });

    it('ping answers while the store is open', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });
  });
}

function compareText(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

/** Follows nextCursor to the end; returns each page's items. */
async function collectPages<T>(fetch: (page: PageRequest) => Promise<Page<T>>, limit: number): Promise<T[][]> {
  const pages: T[][] = [];
  let cursor: string | null = null;
  do {
    const page: Page<T> = await fetch({ limit, cursor });
    pages.push(page.items);
    cursor = page.nextCursor;
    if (pages.length > 1_000) throw new Error('pagination does not end');
  } while (cursor !== null);
  return pages;
}

function newKey(accountId: string, hash: string): NewApiKey {
  return {
    accountId,
    name: 'ci',
    displayPrefix: 'tg_live_AbCd',
    hash,
    environment: 'production',
    role: 'inference',
    requestsPerMinute: null,
  };
}

function trace(overrides: Partial<Trace>): Trace {
  return {
    requestId: 'req-1',
    accountId: 'acct-1',
    keyId: 'key-1',
    environment: 'production',
    project: 'default',
    workload: 'main',
    user: null,
    requestedModel: 'qwen2.5-7b-instruct',
    servedModel: 'qwen2.5-7b-instruct',
    routeReason: 'routed',
    routeShare: null,
    replica: 'gpu-a',
    attempts: null,
    status: 'ok',
    errorClass: null,
    errorMessage: null,
    httpStatus: 200,
    finishReason: 'stop',
    promptTokens: 120,
    completionTokens: 48,
    costUsd: 0.000_026_4,
    engineSeconds: 0.203_125,
    measuredCostUsd: 0.000_112_847,
    latencyMs: 812.25,
    ttftMs: null,
    stream: false,
    metadata: null,
    startedAt: 1_700_000_000_000,
    requestBody: '{"model":"qwen2.5-7b-instruct","messages":[{"role":"user","content":"hi"}]}',
    replyBody: '{"id":"chatcmpl-1"}',
    ...overrides,
  };
}
