import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { GenerationParameters } from '../api/chat-types.js';
import { createCatalog } from '../catalog/catalog.js';
import { EngineError } from '../api/errors.js';
import { DEFAULT_CONTRACT } from '../evals/eval-contract.js';
import type { RouterSettings } from './router-context.js';
import { parseConfig } from '../config/load-config.js';
import type { ModelPool } from '../engines/engine-pool.js';
import { silentLogger } from '../log/logger.js';
import { capturingLogger } from '../../test/helpers/capturing-logger.js';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import type { Store } from '../store/store.js';
import { callFeatures, DEFAULT_FEATURE_DIMENSION, requestSize } from './call-features.js';
import { routesToCandidate } from './call-policy.js';
import { LATENCY_MIN_OBSERVATIONS } from './latency-limit.js';
import { drawRoute } from './route-reason.js';
import { createRouteTable, type RouteTable } from './route-table.js';
import { boundedReplay, createRouterWorker, fallbacksOf } from './router-worker.js';

const scope = { accountId: 'acct-1', project: 'shop', workload: 'sums' };
const parameters: GenerationParameters = { messages: [{ role: 'user', content: 'What is 2 + 2?' }] };

/** What a fake pool's replays do: answer "4" (and PASS when asked to grade a reply), or fail as an engine error would. */
const failing = new Set<string>();
/** A model's answer to a production prompt, when a test wants another than "4". */
let answerOf: ((model: string, prompt: string) => string) | null = null;

/** The pairwise judge as a right one would judge sums whose answer is 4: the answer that says 4 wins, a tie when both or neither do. */
function pairwiseVerdict(content: string): string {
  const answer = (label: 'A' | 'B') => new RegExp(`Assistant ${label}'s Answer\\]\\n([^\\n]*)`).exec(content)?.[1]?.trim();
  const [a, b] = [answer('A') === '4', answer('B') === '4'];
  return a === b ? 'Both alike. [[C]]' : a ? 'A is right. [[A]]' : 'B is right. [[B]]';
}

function answeringPool(calls: GenerationParameters[], model = ''): ModelPool {
  const answer = (content: string) => ({
    choices: [{ index: 0, message: { role: 'assistant' as const, content }, finish_reason: 'stop' as const }],
    usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 },
  });
  return {
    complete: () => Promise.reject(new Error('replays go through replay()')),
    async replay(request) {
      calls.push(request);
      if (failing.has(model)) throw new EngineError(`engine of ${model} is down`);
      const text = request.messages.map((message) => (typeof message.content === 'string' ? message.content : '')).join('\n');
      const grading = text.includes('<rubric>');
      const content = grading
        ? 'PASS: right.'
        : text.includes("Assistant A's Answer]")
          ? pairwiseVerdict(text)
          : (answerOf?.(model, text) ?? '4');
      return { replica: 'fake', completion: answer(content), latencyMs: 1, ttftMs: null };
    },
    openStream: () => Promise.reject(new Error('not used')),
    inFlight: () => 0,
    replicaStates: () => [{ replica: 'fake', inFlight: 0, circuit: 'closed' }],
  };
}

let store: Store;
let routes: RouteTable;

beforeEach(async () => {
  store = createSqliteStore({ path: ':memory:' });
  await store.migrate();
  routes = createRouteTable({ routing: store.routing, logger: silentLogger });
  routes.applyContract(scope, {
    contract: {
      ...DEFAULT_CONTRACT,
      checks: [{ type: 'agreement', method: 'auto' }],
      pass_rate: 0.9,
      quality_bar: null,
      min_samples: 5,
      sample_rate: 1,
    },
    version: 1,
    evidenceVersion: 1,
  });
});
afterEach(async () => {
  await routes.close();
  await store.close();
});

/**
 * The model a call of the workload asking for `big` goes to: its route, drawn
 * as the chat handler draws it (route-reason.ts `drawRoute`), on a fixed
 * `draw` in place of `Math.random()` (a route without a split ignores it).
 */
function servedModel(draw = 0.5): string {
  return drawRoute(routes.route(scope, 'big'), 'big', () => draw).model;
}

function setUp(
  busy: ReadonlySet<string> = new Set(),
  settings: Partial<RouterSettings> = {},
  now: () => number = Date.now,
  logger = silentLogger,
) {
  const config = parseConfig(
    `engines: [{ id: e, type: openai, base_url: "http://127.0.0.1:1/v1" }]
models:
  - { id: big, served_by: [{ engine: e }], price: { input: 10, output: 10 }, context_window: 8192 }
  - { id: small, served_by: [{ engine: e }], price: { input: 1, output: 1 }, context_window: 8192 }
  - { id: tiny, served_by: [{ engine: e }], price: { input: 0.1, output: 0.1 }, context_window: 8192 }
`,
    {},
  );
  const calls = { big: [] as GenerationParameters[], small: [] as GenerationParameters[], tiny: [] as GenerationParameters[] };
  const pools = new Map(Object.entries(calls).map(([id, list]) => [id, answeringPool(list, id)]));
  const worker = createRouterWorker({
    routing: store.routing,
    routes,
    catalog: createCatalog(config.models),
    pools,
    logger,
    isBusy: (model) => busy.has(model),
    settings,
    now,
  });
  const offer = (environment: 'production' | 'staging' = 'production', servedModel = 'big', target = scope) =>
    worker.offer({
      scope: target,
      environment,
      requestedModel: 'big',
      servedModel,
      parameters,
      reply: { role: 'assistant', content: '4' },
      usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 },
      latencyMs: 1,
      ttftMs: null,
      stream: false,
    });
  return { worker, calls, offer };
}

describe('router worker', () => {
  it('replays production samples on the cheaper candidates, with a bounded reply length, and certifies one', async () => {
    const { worker, calls, offer } = setUp();
    for (let sample = 0; sample < 40; sample++) offer();
    await worker.idle();
    expect(calls.tiny.length).toBeGreaterThan(0);
    expect(calls.tiny[0]?.max_tokens).toBe(64);
    expect(calls.big).toHaveLength(0);
    expect(servedModel()).toBe('tiny');
    const [change] = await store.routing.listRouteChanges(scope, 1);
    expect(change).toMatchObject({ reason: 'certified', fromModel: 'big', toModel: 'tiny' });
  });

  it('never samples staging calls', async () => {
    const { worker, calls, offer } = setUp();
    for (let sample = 0; sample < 20; sample++) offer('staging');
    await worker.idle();
    expect(calls.tiny).toHaveLength(0);
    expect(worker.stats().processed).toBe(0);
  });

  it('skips a model while production calls wait for it', async () => {
    const { worker, calls, offer } = setUp(new Set(['tiny']));
    for (let sample = 0; sample < 10; sample++) offer();
    await worker.idle();
    expect(calls.tiny).toHaveLength(0);
    expect(calls.small.length).toBeGreaterThan(0);
  });
});

describe('router worker, relative contract (quality_bar)', () => {
  it('sends a growing share of the calls to a cheaper model that agrees, up to (nearly) the whole workload, grading the reference on the way', async () => {
    routes.applyContract(scope, { contract: { ...DEFAULT_CONTRACT, sample_rate: 1 }, version: 1, evidenceVersion: 1 });
    const { logger, lines } = capturingLogger();
    const { worker, calls, offer } = setUp(new Set(), {}, Date.now, logger);
    const route = () => routes.route(scope, 'big');
    const tinyShare = () =>
      route()?.servedModel === 'tiny' ? 1 : (route()?.split?.shares.find((entry) => entry.model === 'tiny')?.share ?? 0);
    let sawSplit = false;
    for (let sample = 0; sample < 600 && route()?.servedModel !== 'tiny'; sample++) {
      offer();
      await worker.idle();
      sawSplit ||= (route()?.split?.shares.length ?? 0) > 0;
    }
    expect(sawSplit).toBe(true);
    // The last few percent may not pay for their tests; a whole-workload switch carries a relative certificate.
    expect(tinyShare()).toBeGreaterThanOrEqual(0.9);
    if (route()?.servedModel === 'tiny') expect(route()).toMatchObject({ split: null, certificate: { model: 'tiny', qualityBar: 0.95 } });
    const tiny = (await store.routing.listEvidence(scope, 'big', 1)).find((row) => row.candidateModel === 'tiny');
    // Every reply agreed: no judge was needed to compare, and the reference's reply was graded on the first hundred.
    expect(tiny?.paired.same.right).toBeGreaterThanOrEqual(100);
    expect(tiny?.paired.win.ungraded ?? 0).toBe(0);
    expect(tiny?.paired.loss.ungraded ?? 0).toBe(0);
    expect(calls.tiny.length).toBeGreaterThan(0);
    const history = await store.routing.listRouteChanges(scope, 10);
    expect(history.map((change) => change.reason)).toContain('split');
    // Every change went from phase to phase as the route lifecycle says (route-lifecycle.ts).
    expect(lines.filter((line) => line.msg === 'route change outside the route lifecycle')).toEqual([]);
    expect(lines.filter((line) => line.msg === 'route changed').length).toBeGreaterThanOrEqual(1);
  });
});

describe("router worker, a project's pooled prior", () => {
  it("gives a new workload a share on the evidence of its project's workloads that ask the same model, and says so", async () => {
    const relative = { contract: { ...DEFAULT_CONTRACT, sample_rate: 1 }, version: 1, evidenceVersion: 1 };
    routes.applyContract(scope, relative);
    const neighbours = ['totals', 'dates', 'units'].map((workload) => ({ ...scope, workload }));
    // A fourth neighbour under the absolute semantics (pass_rate without quality_bar) is not pooled: its evidence means another thing.
    const absolute = { ...scope, workload: 'legacy' };
    routes.applyContract(absolute, {
      contract: { ...DEFAULT_CONTRACT, pass_rate: 0.9, quality_bar: null },
      version: 1,
      evidenceVersion: 1,
    });
    const delta = (outcome: 'same' | 'loss' | 'win', grade: 'right' | 'ungraded') => ({
      evaluated: 1,
      passed: outcome === 'loss' ? 0 : 1,
      errors: 0,
      promptTokens: 10,
      completionTokens: 1,
      costUsd: 0,
      latencyMsTotal: 1,
      latencyMs: 1,
      paired: { outcome, grade },
    });
    for (const neighbour of [...neighbours, absolute]) {
      if (neighbour !== absolute) routes.applyContract(neighbour, relative);
      // 40 samples each: 34 agreements graded right, 4 losses, 2 wins: tiny about 95% as good as big.
      for (let sample = 0; sample < 40; sample++) {
        const kind = sample < 34 ? delta('same', 'right') : sample < 38 ? delta('loss', 'ungraded') : delta('win', 'ungraded');
        await store.routing.addEvidence(neighbour, 'big', 'tiny', 1, kind, 1);
        // The requested model's own latency on each workload: the yardstick of the latency limit.
        await store.routing.addEvidence(
          neighbour,
          'big',
          'big',
          1,
          { ...delta('same', 'right'), evaluated: 0, passed: 0, paired: undefined },
          1,
        );
      }
    }
    const { worker, offer } = setUp();
    // The workload has no latencies of its own yet: the pool's (tiny against big over the project) stand in, so the prior serves from the first sample.
    offer();
    await worker.idle();
    const share = routes.route(scope, 'big')?.split?.shares.find((entry) => entry.model === 'tiny');
    expect(share?.share).toBeGreaterThan(0);
    // Three neighbours: the absolute one is not pooled, and the workload itself had no evidence yet.
    expect(share?.pooled).toMatchObject({ workloads: 3, samples: 120 });
    expect(share?.samples).toBeLessThan(5);
    const [change] = await store.routing.listRouteChanges(scope, 1);
    expect(change).toMatchObject({ reason: 'split', toModel: 'big' });
    expect(change?.detail).toContain('on the prior of 3 workloads of the project');
    // Another project's workloads are not neighbours: a workload of its own there gets no share on the first sample.
    const alone = { ...scope, project: 'other' };
    routes.applyContract(alone, relative);
    for (let sample = 0; sample < 2 * LATENCY_MIN_OBSERVATIONS; sample++) {
      offer('production', 'big', alone);
      await worker.idle();
    }
    expect(routes.route(alone, 'big')?.split ?? null).toBeNull();
  });
});

describe('router worker, per-call policies (per_call)', () => {
  afterEach(() => {
    answerOf = null;
  });

  it('learns which calls the cheap model gets right, certifies the policy on later samples, and serves the calls it picks', async () => {
    // Stored too: the route table reads contracts again every few seconds, and this test runs longer.
    const stored = await store.routing.putContract(scope, { ...DEFAULT_CONTRACT, sample_rate: 1, per_call: true }, Date.now());
    routes.applyContract(scope, {
      contract: { ...DEFAULT_CONTRACT, sample_rate: 1, per_call: true },
      version: stored.version,
      evidenceVersion: stored.evidenceVersion,
    });
    // tiny is right on the easy questions only (half the calls): a random share of it could take a tenth of the calls. small is never right.
    answerOf = (model, prompt) => (model === 'small' ? '7' : model === 'tiny' && prompt.includes('hard') ? '5' : '4');
    const { worker } = setUp();
    const ask = (index: number) =>
      worker.offer({
        scope,
        environment: 'production',
        requestedModel: 'big',
        servedModel: 'big',
        parameters: { messages: [{ role: 'user', content: `${index % 2 === 0 ? 'easy' : 'hard'} question ${index}: what is 2 + 2?` }] },
        reply: { role: 'assistant', content: '4' },
        usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 },
        latencyMs: 1,
        ttftMs: null,
        stream: false,
      });
    const policyShare = () => routes.route(scope, 'big')?.split?.shares.find((entry) => entry.policy !== undefined);
    // The policy is made at 200 samples and certified on the samples after; its certified fraction grows with them.
    for (let index = 0; index < 2_000 && (policyShare()?.share ?? 0) < 0.5; index++) {
      ask(index);
      await worker.idle();
    }
    const share = policyShare();
    expect(share).toMatchObject({ model: 'tiny', policy: { epoch: expect.any(Number), dimension: DEFAULT_FEATURE_DIMENSION } });
    // It picks the easy calls, about half, and sends most of what it picks.
    expect(share?.policy?.routedShare).toBeGreaterThan(0.35);
    expect(share?.policy?.routedShare).toBeLessThan(0.65);
    expect(share?.share).toBeGreaterThan(0.5);
    const policy = share?.policy;
    if (policy === undefined) throw new Error('no policy');
    const picks = (content: string) =>
      routesToCandidate(
        policy,
        callFeatures({ messages: [{ role: 'user', content }] }),
        requestSize({ messages: [{ role: 'user', content }] }),
      );
    expect(picks('easy question 5001: what is 2 + 2?')).toBe(true);
    expect(picks('hard question 5002: what is 2 + 2?')).toBe(false);
    const [change] = await store.routing.listRouteChanges(scope, 1);
    expect(change?.detail).toContain('of the calls per-call policy #');
  });

  it('learns nothing without per_call', async () => {
    routes.applyContract(scope, { contract: { ...DEFAULT_CONTRACT, sample_rate: 1 }, version: 1, evidenceVersion: 1 });
    answerOf = (model, prompt) => (model === 'tiny' && prompt.includes('hard') ? '5' : '4');
    const { worker, offer } = setUp();
    for (let index = 0; index < 120; index++) offer();
    await worker.idle();
    expect(routes.route(scope, 'big')?.split?.shares.some((entry) => entry.policy !== undefined) ?? false).toBe(false);
  });
});

describe('router worker under faults', () => {
  afterEach(() => failing.clear());

  it('counts replay errors apart from scores, rests the model, and certifies it once its engine is back', async () => {
    let clock = 1_800_000_000_000;
    const { worker, calls, offer } = setUp(new Set(['small']), {}, () => clock);
    failing.add('tiny');
    for (let sample = 0; sample < 10; sample++) offer();
    await worker.idle();
    const tiny = async () => (await store.routing.listEvidence(scope, 'big', 1)).find((row) => row.candidateModel === 'tiny');
    // Errors are not scores; the samples already running when the first failed may each hit the engine once (4 workers).
    const errors = (await tiny())?.errors ?? 0;
    expect(await tiny()).toMatchObject({ evaluated: 0, passed: 0 });
    expect(errors).toBeGreaterThanOrEqual(1);
    expect(errors).toBeLessThanOrEqual(4);
    // The model rests after its errors: the later samples do not call it.
    expect(calls.tiny).toHaveLength(errors);
    // Back a minute later: tested again, certified on its replies alone.
    failing.clear();
    clock += 61_000;
    for (let sample = 0; sample < 40; sample++) offer();
    await worker.idle();
    expect(await tiny()).toMatchObject({ errors });
    expect((await tiny())?.evaluated).toBeGreaterThanOrEqual(20);
    expect(servedModel()).toBe('tiny');
  });

  it('falls back when the serving model goes unchecked, and says why', async () => {
    const { worker, offer } = setUp(new Set(), { maxUnmonitoredCalls: 10 });
    for (let sample = 0; sample < 40; sample++) offer();
    await worker.idle();
    expect(servedModel()).toBe('tiny');
    // The day's budget is gone: checks of tiny stop, and it may serve only so many calls unchecked.
    routes.applyContract(scope, { contract: { ...routes.contract(scope).contract, daily_budget_usd: 0 }, version: 2, evidenceVersion: 1 });
    for (let call = 0; call < 12; call++) offer('production', 'tiny');
    await worker.idle();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(servedModel()).not.toBe('tiny');
    const [change] = await store.routing.listRouteChanges(scope, 1);
    expect(change).toMatchObject({ reason: 'unmonitored', fromModel: 'tiny' });
    expect(change?.detail).toContain('budget');
  });
});

describe('fallbacksOf', () => {
  it('lists the certified models dearer than the served one, cheapest first, leaving out those cooling down', () => {
    const verdict = (model: string, costPerCall: number, state: 'certified' | 'testing' | 'eliminated', coolingDown = false) => ({
      model,
      costPerCall,
      state,
      lower: 0,
      upper: 1,
      evaluated: 0,
      passed: 0,
      ...(coolingDown ? { coolingDown } : {}),
    });
    const decision = {
      servedModel: 'small',
      certificate: null,
      toTest: [],
      verdicts: [
        verdict('tiny', 0.1, 'certified', true),
        verdict('small', 1, 'certified'),
        verdict('large', 5, 'certified'),
        verdict('mid', 3, 'certified'),
        verdict('other', 2, 'testing'),
        verdict('gone', 4, 'certified', true),
      ],
    };
    expect(fallbacksOf(decision)).toEqual(['mid', 'large']);
  });
});

describe('boundedReplay', () => {
  it('caps a replay at four times the reference reply, at least 64 tokens, within the call’s own limit', () => {
    expect(boundedReplay(parameters, 10).max_tokens).toBe(64);
    expect(boundedReplay(parameters, 100).max_tokens).toBe(400);
    expect(boundedReplay({ ...parameters, max_tokens: 50 }, 100).max_tokens).toBe(50);
  });
});
