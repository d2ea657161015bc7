import { describe, expect, it } from 'vitest';
import { formatRoutes } from './routes-command.js';

type Views = Parameters<typeof formatRoutes>[0];
type Route = Views[number]['routes'][number];
type Candidate = Route['candidates'][number];

const candidate = (fields: Partial<Candidate> & Pick<Candidate, 'model' | 'state'>): Candidate => ({
  share: null,
  evaluated: 0,
  passed: 0,
  errors: 0,
  lower_bound: null,
  cost_per_call_usd: 0.00001,
  latency_ms: null,
  cooling_down_until: null,
  ...fields,
});

const route = (fields: Partial<Route>): Route => ({
  requested_model: 'gpt-4',
  phase: 'requested',
  served_model: 'gpt-4',
  router_choice: 'gpt-4',
  pinned_model: null,
  split: null,
  served_share: 1,
  verdicts_from: 'router',
  candidates: [],
  latency: { percentile: 95, limit_ms: null },
  routed_calls: 0,
  savings_usd: 0,
  eval_spend_usd: 0,
  net_savings_usd: 0,
  exploration: { sample_rate: 0.05, auto: true, exploring: [] },
  monitoring: { unchecked_calls: 0, problem: null },
  dropped_samples: 0,
  ...fields,
});

const view = (routes: Route[]): Views[number] => ({
  workload: 'mmlu',
  pass_rate: 0.95,
  eval_spend_today_usd: 0.3,
  daily_budget_usd: 5,
  judges: [],
  routes,
});

describe('taskgate routes', () => {
  it("prints a split route's shares, its candidates in the router's order, and the savings line", () => {
    const split = route({
      phase: 'split',
      split: { shares: [{ model: 'mixtral', share: 0.34, lower_bound_diff: -0.021, samples: 412 }] },
      served_share: 0.66,
      candidates: [
        candidate({ model: 'llama-8b', state: 'eliminated', evaluated: 80, passed: 51, cost_per_call_usd: 0.0000012 }),
        candidate({
          model: 'mixtral',
          state: 'certified',
          share: 0.34,
          evaluated: 412,
          passed: 398,
          lower_bound: -0.021,
          cost_per_call_usd: 0.0000054,
          latency_ms: 310,
        }),
      ],
      routed_calls: 1_200,
      savings_usd: 1.2,
      eval_spend_usd: 0.3,
      net_savings_usd: 0.9,
      exploration: { sample_rate: 0.05, auto: true, exploring: ['mixtral'] },
    });
    const lines = formatRoutes([view([split])]).split('\n');
    expect(lines[0]).toMatch(
      /^WORKLOAD\s+REQUESTED\s+SERVED\s+CANDIDATE\s+STATE\s+N\s+K\s+LOWER\s+ERRORS\s+LATENCY MS\s+\$\/CALL\s+SHARE\s+ROUTED CALLS/,
    );
    expect(lines[1]).toMatch(/^mmlu\s+gpt-4\s+gpt-4\s+1200\s+1\.2000\s+0\.3000\s+0\.9000$/);
    expect(lines[2]).toMatch(/^\s+llama-8b\s+eliminated\s+80\s+51\s+-\s+0\s+-\s+0\.00000120$/);
    expect(lines[3]).toMatch(/^\s+mixtral\s+certified\s+412\s+398\s+-0\.021\s+0\s+310\s+0\.00000540\s+34%$/);
    expect(lines).toContain(
      'mmlu gpt-4: split: 34% → mixtral (E[c−r] ≥ -0.021, 412 samples); 66% → gpt-4; saved $1.2000 − eval spend $0.3000 = net $0.9000',
    );
    expect(lines.at(-1)).toMatch(/^mmlu gpt-4: testing mixtral on 5\.00% of calls \(auto\); eval spend today \$0\.3000 of \$5$/);
    const pooled = route({
      phase: 'split',
      split: { shares: [{ model: 'mixtral', share: 0.2, lower_bound_diff: -0.3, samples: 24, pooled: { workloads: 12, samples: 900 } }] },
      served_share: 0.8,
    });
    expect(
      formatRoutes([view([pooled])])
        .split('\n')
        .find((line) => line.includes('split:')),
    ).toMatch('mmlu gpt-4: split: 20% → mixtral (prior of 12 workloads, 900 samples; 24 of its own); 80% → gpt-4');
    const policied = route({
      phase: 'split',
      split: {
        shares: [
          { model: 'mixtral', share: 0.62, lower_bound_diff: -0.01, samples: 80, pooled: null, policy: { epoch: 2, routed_share: 0.4 } },
        ],
      },
      served_share: 0.752,
    });
    expect(
      formatRoutes([view([policied])])
        .split('\n')
        .find((line) => line.includes('split:')),
    ).toMatch(
      'mmlu gpt-4: split: 62% of the calls policy #2 picks (it picks 40% of calls) → mixtral (E[c−r] ≥ -0.010, 80 samples); 75% → gpt-4',
    );
  });

  it('names every other phase in words', () => {
    const until = Date.UTC(2027, 0, 15, 12, 30) / 1000;
    const cases: Array<[Partial<Route>, string]> = [
      [{ phase: 'requested' }, 'requested: gpt-4 serves every call, nothing under test'],
      [{ phase: 'exploring' }, 'exploring: gpt-4 serves every call while candidates are tested'],
      [{ phase: 'certified', served_model: 'mixtral', router_choice: 'mixtral' }, 'certified: mixtral serves every call'],
      [
        { phase: 'cooling_down', candidates: [candidate({ model: 'mixtral', state: 'cooling_down', cooling_down_until: until })] },
        'cooling down: gpt-4 serves every call; demoted mixtral until 2027-01-15 12:30 UTC',
      ],
      [
        { phase: 'unmonitored', candidates: [candidate({ model: 'mixtral', state: 'cooling_down', cooling_down_until: until })] },
        'unmonitored: gpt-4 serves every call; waiting to check mixtral until 2027-01-15 12:30 UTC',
      ],
      [
        { phase: 'pinned', served_model: 'llama-8b', pinned_model: 'llama-8b', router_choice: 'mixtral' },
        "pinned: llama-8b serves every call (the router's choice: mixtral)",
      ],
    ];
    for (const [fields, words] of cases) expect(formatRoutes([view([route(fields)])])).toContain(`mmlu gpt-4: ${words}; saved $0.0000`);
  });

  it('says when the candidates were judged from the evidence, before the router decided', () => {
    const early = route({
      phase: 'exploring',
      verdicts_from: 'evidence',
      candidates: [candidate({ model: 'mixtral', state: 'testing', evaluated: 3, passed: 3, lower_bound: 0.4 })],
    });
    expect(formatRoutes([view([early])])).toContain('(candidates judged from the evidence: the router has not decided on it yet)');
  });
});
