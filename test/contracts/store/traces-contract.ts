/**
 * The Store contract, traces (`TraceStore`, `src/store/store.ts`): every back
 * end runs it unchanged, through the Store interface alone. Request ids are
 * compared as plain code-unit strings, so a back end must order ties with a
 * binary collation.
 */
import { traceFixture } from './trace-fixture.js';
import { describe, expect, it } from 'vitest';
import type { Store, Trace, TraceFilter } from '../../../src/store/store.js';
import { eachTestOnAFreshStore, collectPages, compareText, type OpenStore } from './store-contract-support.js';

export function describeTracesContract(open: OpenStore): void {
  describe('traces', () => {
    let store: Store;
    eachTestOnAFreshStore(open, (opened) => (store = opened));

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
      // Answered from the response cache: it cost nothing, and saved what the call it replayed cost.
      const cached = trace({
        requestId: 'req-cached',
        cached: true,
        costUsd: 0,
        costSavedUsd: 0.000_031_25,
        engineSeconds: null,
        measuredCostUsd: null,
        replica: null,
      });
      expect(await store.traces.insertBatch([full, sparse, cached])).toBe(3);
      expect(await store.traces.get('acct-1', 'req-full')).toEqual(full);
      expect(await store.traces.get('acct-1', 'req-sparse')).toEqual(sparse);
      expect(await store.traces.get('acct-1', 'req-cached')).toEqual(cached);
      expect((await store.traces.list('acct-1', {}, { limit: 10 })).items.find((item) => item.requestId === 'req-cached')).toEqual(cached);
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
      expect(await store.traces.insertBatch([first, trace({ requestId: 'req-1', promptTokens: 2 }), trace({ requestId: 'req-2' })])).toBe(
        2,
      );
      expect(await store.traces.insertBatch([trace({ requestId: 'req-2' }), trace({ requestId: 'req-3' })])).toBe(1);
      expect(await store.traces.insertBatch([])).toBe(0);
      expect(await store.traces.count('acct-1', {})).toBe(3);
      expect(await store.traces.get('acct-1', 'req-1')).toEqual(first);
    });

    it('a trace is visible only to its own account', async () => {
      await store.traces.insertBatch([
        trace({ requestId: 'req-1', accountId: 'acct-1' }),
        trace({ requestId: 'req-2', accountId: 'acct-2' }),
      ]);
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
        trace({
          requestId: 'r4',
          startedAt: 1_004,
          project: 'shop',
          workload: 'main',
          servedModel: 'large',
          user: 'bob',
          status: 'aborted',
        }),
        trace({
          requestId: 'r5',
          startedAt: 1_005,
          project: 'shop',
          workload: 'main',
          servedModel: 'small',
          user: 'ann',
          environment: 'staging',
        }),
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
        expect(
          page.items.map((item) => item.requestId),
          JSON.stringify(filter),
        ).toEqual(expected);
        expect(page.nextCursor).toBeNull();
        expect(await store.traces.count('acct-1', filter), JSON.stringify(filter)).toBe(expected.length);
      }
    });

    it('pages newest first, ties broken by request id, with no duplicates or gaps', async () => {
      const traces = Array.from({ length: 23 }, (_, index) =>
        trace({
          requestId: `req-${String(index).padStart(2, '0')}`,
          startedAt: 1_000 + Math.floor(index / 4),
          workload: index % 2 === 0 ? 'main' : 'other',
        }),
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
      await store.traces.insertBatch(
        Array.from({ length: 6 }, (_, index) => trace({ requestId: `old-${index}`, startedAt: 1_000 + index })),
      );
      const first = await store.traces.list('acct-1', {}, { limit: 3 });
      await store.traces.insertBatch([trace({ requestId: 'new-1', startedAt: 5_000 }), trace({ requestId: 'new-2', startedAt: 5_000 })]);
      const second = await store.traces.list('acct-1', {}, { limit: 3, cursor: first.nextCursor });
      expect([...first.items, ...second.items].map((item) => item.requestId)).toEqual([
        'old-5',
        'old-4',
        'old-3',
        'old-2',
        'old-1',
        'old-0',
      ]);
      expect(second.nextCursor).toBeNull();
    });

    it('stores a batch of 1,000 traces', async () => {
      const traces = Array.from({ length: 1_000 }, (_, index) => trace({ requestId: `bulk-${index}`, startedAt: 10_000 + index }));
      expect(await store.traces.insertBatch(traces)).toBe(1_000);
      expect(await store.traces.count('acct-1', {})).toBe(1_000);
      expect(await store.traces.get('acct-1', 'bulk-999')).toEqual(traces[999]);
    });
  });
}

function trace(overrides: Partial<Trace>): Trace {
  return traceFixture({
    project: 'default',
    requestedModel: 'qwen2.5-7b-instruct',
    servedModel: 'qwen2.5-7b-instruct',
    routeReason: 'routed',
    replica: 'gpu-a',
    promptTokens: 120,
    completionTokens: 48,
    costUsd: 0.000_026_4,
    engineSeconds: 0.203_125,
    measuredCostUsd: 0.000_112_847,
    latencyMs: 812.25,
    startedAt: 1_700_000_000_000,
    requestBody: '{"model":"qwen2.5-7b-instruct","messages":[{"role":"user","content":"hi"}]}',
    replyBody: '{"id":"chatcmpl-1"}',
    ...overrides,
  });
}
