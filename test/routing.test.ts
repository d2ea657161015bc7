/**
 * Routing end to end: the real server, an engine whose models answer sums
 * with known accuracies, and workloads that ask for the most expensive model.
 * The router must move each workload to the cheapest model that truly passes
 * its contract and no further, demote a model that gets worse, ignore staging
 * traffic, and follow each workload's own contract.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startArithmeticEngine, type ArithmeticEngine } from './helpers/arithmetic-engine.js';
import { runTaskgateAsync } from './helpers/taskgate-process.js';
import { ADMIN_KEY, startTestGateway, type TestGateway } from './helpers/test-gateway.js';
import { temporaryDirectory } from './helpers/temporary-directory.js';

// True accuracies: big and mid always right, small right 90 % of the time, tiny 30 %.
const accuracies = { big: 1, mid: 1, small: 0.9, tiny: 0.3 };
const prices = { big: 10, mid: 3, small: 1, tiny: 0.1 };

let engine: ArithmeticEngine;
let taskgate: TestGateway;
let question = 0;

beforeAll(async () => {
  engine = await startArithmeticEngine(accuracies, 7);
  const models = Object.entries(prices)
    .map(
      ([id, price]) =>
        `  - { id: ${id}, served_by: [{ engine: arithmetic, name: ${id} }], price: { input: ${price}, output: ${price} }, context_window: 8192 }`,
    )
    .join('\n');
  // Thousands of calls a minute: above the default key rate.
  taskgate = await startTestGateway(
    `engines:\n  - { id: arithmetic, type: openai, base_url: "${engine.baseUrl}" }\nmodels:\n${models}\nlimits: { requests_per_minute: 1000000 }\n`,
  );
});
afterAll(async () => {
  await taskgate?.stop();
  await engine?.close();
});

/** One production call asking `big` for a sum; returns the model that served it. */
async function ask(workload: string, key = ADMIN_KEY): Promise<{ model: string; requestId: string }> {
  question++;
  const response = await taskgate.postChat(
    {
      model: 'big',
      messages: [{ role: 'user', content: `What is ${question % 97} + ${(question * 7) % 89}? Answer with the number only.` }],
    },
    { key, headers: { 'x-taskgate-workload': workload } },
  );
  expect(response.status).toBe(200);
  const body = (await response.json()) as { model: string };
  return { model: body.model, requestId: response.headers.get('x-request-id') ?? '' };
}

/** Calls until `done` says so (the router works between batches), at most `limit` calls; returns every served model seen. */
async function askUntil(workload: string, done: (model: string) => boolean, limit: number, key = ADMIN_KEY): Promise<string[]> {
  const served: string[] = [];
  for (let call = 0; call < limit; call++) {
    const { model } = await ask(workload, key);
    served.push(model);
    if (done(model)) break;
    if (call % 10 === 9) await taskgate.gateway.router.idle();
  }
  return served;
}

async function management(
  method: string,
  path: string,
  body?: unknown,
  key = ADMIN_KEY,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${taskgate.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

interface RoutesView {
  routes: Array<{
    requested_model: string;
    served_model: string;
    certificate: { model: string; evaluated: number; passed: number; lower: number; passRate: number } | null;
    candidates: Array<{ model: string; state: string; evaluated: number; passed: number; lower_bound: number }>;
    routed_calls: number;
    savings_usd: number;
  }>;
  history: Array<{ reason: string; from_model: string; to_model: string; detail: string | null }>;
}

const routesOf = async (workload: string) =>
  (await management('GET', `/projects/default/workloads/${workload}/routes`)).json as unknown as RoutesView;

describe('routing', () => {
  it('rejects a bad eval contract with the path of each problem', async () => {
    await ask('lenient');
    const bad = await management('PUT', '/projects/default/workloads/lenient/eval', {
      pass_rate: 2,
      checks: [{ type: 'regex', pattern: '(' }],
    });
    expect(bad.status).toBe(400);
    const message = (bad.json.error as { message: string }).message;
    expect(message).toContain('pass_rate');
    expect(message).toContain('checks[0].pattern');
  });

  it('says which quality semantics a contract has: relative to the requested model, or absolute', async () => {
    await ask('semantics');
    const path = '/projects/default/workloads/semantics/eval';
    const absoluteChecks = 'pass_rate 0.95 applies to the absolute checks (response_format_valid, tool_call_valid).';
    const byDefault = await management('GET', path);
    expect(byDefault.status).toBe(200);
    expect(byDefault.json).toMatchObject({ default: true, contract: { quality_bar: 0.95 }, semantics: 'relative' });
    expect(byDefault.json.semantics_detail).toBe(
      `A cheaper model serves a share of calls, up to all of them, when its quality by paired comparison with the requested model on the same calls is certified at least 0.95 × the requested model's; ${absoluteChecks}`,
    );

    const empty = await management('PUT', path, {});
    expect(empty.status).toBe(200);
    expect(empty.json).toMatchObject({ version: 1, contract: { quality_bar: 0.95, pass_rate: 0.95 }, semantics: 'relative' });
    expect(empty.json.semantics_detail).toContain(absoluteChecks);

    // pass_rate with the agreement check, as contracts were written before quality_bar: the meaning they had.
    const legacy = await management('PUT', path, { pass_rate: 0.9 });
    expect(legacy.json).toMatchObject({
      version: 2,
      evidence_kept: true,
      contract: { quality_bar: null, pass_rate: 0.9 },
      semantics: 'absolute',
    });
    expect(legacy.json.semantics_detail).toBe(
      'Every model that serves must itself pass every check at pass_rate 0.9 (the absolute agreement semantics; set quality_bar to compare with the requested model instead).',
    );
    const read = await management('GET', path);
    expect(read.json).toMatchObject({ default: false, version: 2, contract: { quality_bar: null }, semantics: 'absolute' });

    const barred = await management('PUT', path, { pass_rate: 0.9, quality_bar: 0.97 });
    expect(barred.json).toMatchObject({
      version: 3,
      evidence_kept: true,
      contract: { quality_bar: 0.97, pass_rate: 0.9 },
      semantics: 'relative',
    });
    expect(barred.json.semantics_detail).toContain(
      "certified at least 0.97 × the requested model's; pass_rate 0.9 applies to the absolute checks (response_format_valid, tool_call_valid).",
    );
    expect((await management('GET', path)).json).toMatchObject({
      version: 3,
      semantics: 'relative',
      semantics_detail: barred.json.semantics_detail,
    });

    const noAgreement = await management('PUT', path, { checks: [{ type: 'json_schema', schema: { type: 'object' } }], quality_bar: 0.9 });
    expect(noAgreement.status).toBe(400);
    expect(noAgreement.json.error).toMatchObject({ code: 'invalid_eval_contract', param: 'quality_bar' });
    expect((noAgreement.json.error as { message: string }).message).toContain('quality_bar: needs an agreement check');
    expect((await management('GET', path)).json).toMatchObject({ version: 3 });

    const perCall = await management('PUT', path, { per_call: true });
    expect(perCall.status).toBe(200);
    expect(perCall.json).toMatchObject({
      version: 4,
      evidence_kept: true,
      contract: { quality_bar: 0.95, per_call: true },
      semantics: 'relative',
    });
    expect(perCall.json.semantics_detail).toContain(
      `${absoluteChecks.slice(0, -1)}; per-call policies: a cheaper model may take the calls a policy learned`,
    );
    const perCallAbsolute = await management('PUT', path, { pass_rate: 0.9, per_call: true });
    expect(perCallAbsolute.status).toBe(400);
    expect(perCallAbsolute.json.error).toMatchObject({ code: 'invalid_eval_contract', param: 'per_call' });
    expect((perCallAbsolute.json.error as { message: string }).message).toContain('per_call: needs quality_bar');
  });

  it('moves a workload to the cheapest model that truly passes, and no further', async () => {
    const put = await management('PUT', '/projects/default/workloads/lenient/eval', { pass_rate: 0.8, sample_rate: 1, min_samples: 10 });
    expect(put.status).toBe(200);
    const served = await askUntil('lenient', (model) => model === 'small', 1_500);
    expect(served.at(-1)).toBe('small');
    expect(served).not.toContain('tiny');

    const view = await routesOf('lenient');
    const route = view.routes.find((entry) => entry.requested_model === 'big')!;
    expect(route.served_model).toBe('small');
    expect(route.certificate).toMatchObject({ model: 'small', passRate: 0.8 });
    expect(route.certificate!.lower).toBeGreaterThanOrEqual(0.8);
    // mid was certified on the way down: a reply of small that fails the guard is re-asked of mid, not big.
    expect((route as unknown as { fallbacks: string[] }).fallbacks).toEqual(['mid']);
    // tiny (30 %) is ruled out, or no longer worth testing: either way it never serves.
    expect(['eliminated', 'paused']).toContain(route.candidates.find((candidate) => candidate.model === 'tiny')?.state);
    expect(view.history.some((change) => change.reason === 'certified' && change.to_model === 'small')).toBe(true);

    // Calls now carry the cheaper model, and their savings show.
    for (let call = 0; call < 5; call++) expect((await ask('lenient')).model).toBe('small');
    await taskgate.traces();
    const after = (await routesOf('lenient')).routes.find((entry) => entry.requested_model === 'big')!;
    expect(after.routed_calls).toBeGreaterThanOrEqual(5);
    expect(after.savings_usd).toBeGreaterThan(0);
  });

  it('demotes a served model whose accuracy drops', async () => {
    engine.accuracy.set('small', 0.2);
    const served = await askUntil('lenient', (model) => model !== 'small', 1_500);
    expect(served.at(-1)).not.toBe('small');
    const view = await routesOf('lenient');
    const demotion = view.history.find((change) => change.reason === 'demoted');
    expect(demotion).toMatchObject({ from_model: 'small' });
    expect(demotion?.detail).toContain('rollback');
    expect(view.routes[0]?.candidates.find((candidate) => candidate.model === 'small')?.state).toBe('cooling_down');
    engine.accuracy.set('small', accuracies.small);
  });

  it('follows each workload its own contract', async () => {
    await ask('strict');
    expect(
      (await management('PUT', '/projects/default/workloads/strict/eval', { pass_rate: 0.97, sample_rate: 1, min_samples: 10 })).status,
    ).toBe(200);
    const served = await askUntil('strict', (model) => model === 'mid', 1_500);
    expect(served.at(-1)).toBe('mid');
    // small (90 %) stays on trial below mid until its upper bound rules it out, or until more tests are not worth their cost; it never serves.
    const smallState = async () =>
      (await routesOf('strict')).routes[0]?.candidates.find((candidate) => candidate.model === 'small')?.state ?? '';
    for (let round = 0; round < 60 && !['eliminated', 'paused'].includes(await smallState()); round++)
      served.push(...(await askUntil('strict', () => false, 20)));
    expect(['eliminated', 'paused']).toContain(await smallState());
    expect(served).not.toContain('small');
    expect(served.at(-1)).toBe('mid');
  });

  it('never moves a route on staging traffic', async () => {
    const staging = await taskgate.createKey({ environment: 'staging' });
    await ask('staging-only', staging.text);
    expect(
      (await management('PUT', '/projects/default/workloads/staging-only/eval', { pass_rate: 0.8, sample_rate: 1, min_samples: 10 }))
        .status,
    ).toBe(200);
    const served = await askUntil('staging-only', () => false, 300, staging.text);
    await taskgate.gateway.router.idle();
    expect(new Set(served)).toEqual(new Set(['big']));
    expect((await routesOf('staging-only')).routes).toEqual([]);
  });

  it('serves a pinned model whatever the router says, until unpinned', async () => {
    await ask('pinned');
    expect((await management('PUT', '/projects/default/workloads/pinned/routes/big/pin', { model: 'tiny' })).status).toBe(200);
    expect((await ask('pinned')).model).toBe('tiny');
    expect((await management('PUT', '/projects/default/workloads/pinned/routes/big/pin', { model: 'nope' })).status).toBe(404);
    expect((await management('DELETE', '/projects/default/workloads/pinned/routes/big/pin')).status).toBe(200);
    expect((await ask('pinned')).model).toBe('big');
    expect((await routesOf('pinned')).history.map((change) => change.reason)).toEqual(['unpinned', 'pinned']);
  });

  it('re-asks the requested model when a routed reply fails the inline guard, and bills both', async () => {
    await ask('guarded');
    expect(
      (
        await management('PUT', '/projects/default/workloads/guarded/eval', {
          checks: [{ type: 'regex', pattern: '^42$' }],
          sample_rate: 0,
        })
      ).status,
    ).toBe(200);
    expect((await management('PUT', '/projects/default/workloads/guarded/routes/big/pin', { model: 'tiny' })).status).toBe(200);
    engine.accuracy.set('tiny', 0);
    try {
      const response = await taskgate.postChat(
        { model: 'big', messages: [{ role: 'user', content: 'What is 20 + 22?' }] },
        { headers: { 'x-taskgate-workload': 'guarded' } },
      );
      const body = (await response.json()) as {
        model: string;
        choices: Array<{ message: { content: string } }>;
        usage: { prompt_tokens: number; completion_tokens: number };
      };
      expect(body.model).toBe('big');
      expect(body.choices[0]?.message.content).toBe('42');
      const trace = await taskgate.traceOf(response.headers.get('x-request-id'));
      // big's price for the reply, plus tiny's for the reply that failed.
      expect(trace?.servedModel).toBe('big');
      expect(trace?.costUsd).toBeCloseTo((22 * prices.big + 22 * prices.tiny) / 1e6, 12);
    } finally {
      engine.accuracy.set('tiny', accuracies.tiny);
    }
  });

  it('shows routes and contracts from the command line', async () => {
    const connection = ['--url', taskgate.origin, '--key', ADMIN_KEY];
    const table = await runTaskgateAsync(['routes', '--workload', 'strict', ...connection]);
    expect(table.status).toBe(0);
    const lines = table.stdout.split('\n');
    expect(lines[0]).toMatch(/^WORKLOAD\s+REQUESTED\s+SERVED\s+CANDIDATE\s+STATE\s+N\s+K\s+LOWER/);
    expect(lines[1]).toMatch(/^strict\s+big\s+mid\s+\d+\s+\d+\.\d{4}\s+\d+\.\d{4}\s+-?\d+\.\d{4}$/);
    expect(lines.some((line) => /^\s+small\s+(eliminated|paused)\s+\d+\s+\d+\s+0\.\d{3}\s+0\s+\d+/.test(line))).toBe(true);
    expect(table.stdout).toMatch(/^strict big: .*eval spend today \$\d+\.\d{4} of \$5$/m);

    const all = await runTaskgateAsync(['routes', '--json', ...connection]);
    const workloads = (JSON.parse(all.stdout) as Array<{ workload: string }>).map((view) => view.workload);
    expect(workloads).toEqual(expect.arrayContaining(['lenient', 'strict', 'staging-only']));

    const directory = temporaryDirectory('taskgate-evals-');
    writeFileSync(join(directory, 'contract.json'), JSON.stringify({ pass_rate: 0.9, checks: [{ type: 'regex', pattern: '^\\d+$' }] }));
    // A contract may be set before the workload's first call.
    const set = await runTaskgateAsync(['evals', 'set', '--workload', 'cli', '--file', join(directory, 'contract.json'), ...connection]);
    expect(set.status).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ version: 1 });
    writeFileSync(join(directory, 'bad.json'), JSON.stringify({ pass_rate: 3 }));
    const bad = await runTaskgateAsync(['evals', 'set', '--workload', 'cli', '--file', join(directory, 'bad.json'), ...connection]);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('400: Invalid eval contract: pass_rate');
    const got = await runTaskgateAsync(['evals', 'get', '--workload', 'cli', ...connection]);
    expect(got.stderr).toContain('contract version 1 of cli');
    expect(got.stderr).toContain('project "default" (no --project given)');
    expect(got.stderr).toContain(
      'taskgate: Every model that serves must itself pass every check at pass_rate 0.9 (there is no agreement check',
    );
    const printed = JSON.parse(got.stdout) as Record<string, unknown>;
    expect(printed).toMatchObject({ pass_rate: 0.9, checks: [{ type: 'regex', pattern: '^\\d+$' }] });
    // What get prints is what set takes: edit it and set it back.
    writeFileSync(join(directory, 'edited.json'), JSON.stringify({ ...printed, pass_rate: 0.8 }));
    const roundTrip = await runTaskgateAsync([
      'evals',
      'set',
      '--workload',
      'cli',
      '--file',
      join(directory, 'edited.json'),
      ...connection,
    ]);
    expect(roundTrip.status).toBe(0);
    expect(JSON.parse(roundTrip.stdout)).toMatchObject({ version: 2, contract: { pass_rate: 0.8 } });
    // The default contract, printed for a workload without one, is accepted as it is.
    await ask('no-contract');
    const defaultContract = await runTaskgateAsync(['evals', 'get', '--workload', 'no-contract', '--project', 'default', ...connection]);
    expect(defaultContract.stderr).toContain('the default contract (none set)');
    expect(defaultContract.stderr).not.toContain('no --project given');
    expect(defaultContract.stderr).toContain("is certified at least 0.95 × the requested model's");
    expect(JSON.parse(defaultContract.stdout)).toMatchObject({ quality_bar: 0.95 });
    writeFileSync(join(directory, 'default.json'), defaultContract.stdout);
    expect(
      (
        await runTaskgateAsync([
          'evals',
          'set',
          '--workload',
          'no-contract',
          '--project',
          'default',
          '--file',
          join(directory, 'default.json'),
          ...connection,
        ])
      ).status,
    ).toBe(0);
    const offline = await runTaskgateAsync(['routes', '--url', 'http://127.0.0.1:1', '--key', ADMIN_KEY]);
    expect(offline.status).toBe(1);
    expect(offline.stderr).toContain('cannot reach taskgate at http://127.0.0.1:1');
  });

  it('takes feedback on a call and counts it for a routed model', async () => {
    const { requestId, model } = await ask('lenient');
    await taskgate.traces();
    const feedback = await management('POST', '/feedback', { request_id: requestId, pass: false, comment: 'wrong sum' });
    expect(feedback.status).toBe(200);
    expect(feedback.json).toMatchObject({ request_id: requestId, model, pass: false, counted_as_evidence: model !== 'big' });
    expect((await management('GET', `/traces/${requestId}`)).json.feedback).toMatchObject({
      pass: false,
      score: null,
      comment: 'wrong sum',
    });
    const quality = (await management('GET', '/projects/default/workloads/lenient')).json.quality as { feedback: unknown[] };
    expect(quality.feedback).toEqual([{ model, count: 1, passed: 0, failed: 1, mean_score: null }]);
    expect((await management('POST', '/feedback', { request_id: 'req_missing', pass: true })).status).toBe(404);
    expect((await management('POST', '/feedback', { request_id: requestId })).status).toBe(400);
  });
  it("gives a project's new workload a share on its neighbours' evidence, shown as the pooled prior", async () => {
    const project = 'pooled';
    let asked = 0;
    const askIn = async (workload: string): Promise<string> => {
      asked++;
      const response = await taskgate.postChat(
        {
          model: 'big',
          messages: [{ role: 'user', content: `What is ${asked % 89} + ${(asked * 3) % 83}? Answer with the number only.` }],
        },
        { headers: { 'x-taskgate-project': project, 'x-taskgate-workload': workload } },
      );
      expect(response.status).toBe(200);
      return ((await response.json()) as { model: string }).model;
    };
    // Three workloads of the project on the default (relative) contract, every call sampled (a workload exists from its first call).
    for (const workload of ['sums-a', 'sums-b', 'sums-c', 'fresh']) {
      await askIn(workload);
      expect((await management('PUT', `/projects/${project}/workloads/${workload}/eval`, { sample_rate: 1 })).status).toBe(200);
    }
    for (const workload of ['sums-a', 'sums-b', 'sums-c']) {
      for (let call = 0; call < 100; call++) {
        await askIn(workload);
        if (call % 10 === 9) await taskgate.gateway.router.idle();
      }
    }
    await taskgate.gateway.router.idle();
    // A new workload: a share on the project's prior long before its own min_samples (50).
    type Share = { model: string; share: number; samples: number; pooled: { workloads: number; samples: number } | null };
    const shareOf = async (): Promise<Share | undefined> => {
      const view = (await management('GET', `/projects/${project}/workloads/fresh/routes`)).json as unknown as {
        routes: Array<{ split: { shares: Share[] } | null }>;
      };
      return view.routes[0]?.split?.shares[0];
    };
    for (let call = 0; call < 30 && (await shareOf()) === undefined; call++) {
      await askIn('fresh');
      await taskgate.gateway.router.idle();
    }
    const share = await shareOf();
    expect(share?.pooled?.workloads).toBeGreaterThanOrEqual(3);
    expect(share?.share).toBeGreaterThan(0);
    expect(share?.share).toBeLessThanOrEqual(0.5);
    expect(share?.samples).toBeLessThan(30);
    const history = (await management('GET', `/projects/${project}/workloads/fresh/routes`)).json as unknown as RoutesView;
    expect(history.history.some((change) => change.reason === 'split' && change.detail?.includes('on the prior of') === true)).toBe(true);
  });
});
