/**
 * The relative default on a project's workloads together, pooling their
 * paired evidence into the project's prior (pooled-prior.ts) as the product
 * does (project-prior.ts): every workload of a project asks GPT-4 with
 * Mixtral as its candidate, so each decision of one workload may take the
 * prior's share from the evidence of all of them.
 *
 * - Projects: all MMLU subjects are one project; GSM8K is a project of its
 *   own (a pool of one: `fitPool` returns null for fewer than
 *   `MIN_POOL_WORKLOADS`, so it runs as it does alone). The data's `suite`
 *   tells them apart, as `groupsOf` (real-data-run.ts) groups them.
 * - Time: the workloads advance round-robin, call c of every workload
 *   before call c + 1 of any, all at call c's simulated time, so a decision
 *   sees the others' evidence as it stands then. Each keeps its own random
 *   stream, so a workload draws the same numbers as alone until the prior
 *   changes its route.
 * - The pool's members: every workload's evidence, its own included, read
 *   as the deciding workload reads its own (without grades when its
 *   grader's error is too large), as project-prior.ts does; the fit for the
 *   policy of the decision that asks.
 * - The fit is cached, one per reading of grades (the product keys its
 *   cache the same way), and made again only when the pool's paired samples
 *   have grown by max(`REFIT_SAMPLES`, `REFIT_GROWTH`) since, or shrunk (a
 *   demotion forgot a workload's evidence): a fit reads every member's
 *   evidence and costs a few milliseconds, and one more sample moves the
 *   prior little. The product (project-prior.ts) refits on the same rule.
 */
import { withoutGrades } from '../../../src/routing/paired-quality.js';
import { fitPool, type PoolFit } from '../../../src/routing/pooled-prior.js';
import type { RelativePolicy } from '../../../src/routing/split-decision.js';
import { createRelativeRun, simulateRelativeRouter } from './paired-shares.js';
import type { RealWorkload } from './real-workloads.js';
import type { PoolView, RelativeOutcome, RelativeWorkloadRun, RouterRunPlan } from './relative-outcome.js';
import type { RelativeVariant } from './relative-variants.js';
import type { RecordedModel } from './routellm-data.js';

/** The pool is fitted again once its paired samples grew by this factor, and by at least `REFIT_SAMPLES`. */
const REFIT_GROWTH = 1.01;
const REFIT_SAMPLES = 20;

type Models = { requested: RecordedModel; cheap: RecordedModel };

/** One project's workloads stepped together over a shared pool; outcomes in the order of `reals`. */
export function simulateRelativePool(
  reals: readonly RealWorkload[],
  models: Models,
  plan: RouterRunPlan,
  variant: RelativeVariant,
  seed: number,
): RelativeOutcome[] {
  const runs: RelativeWorkloadRun[] = [];
  const cache = new Map<boolean, { samples: number; fit: PoolFit | null }>();
  const pool: PoolView = {
    fit(policy: RelativePolicy): PoolFit | null {
      // Keyed by the reading of grades: a fit made on evidence read one way is not offered to a decision reading it the other.
      const key = policy.agreementGradesSampled === true;
      const samples = runs.reduce((sum, run) => sum + run.samples(), 0);
      const cached = cache.get(key);
      if (
        cached !== undefined &&
        samples >= cached.samples &&
        samples < Math.max(cached.samples * REFIT_GROWTH, cached.samples + REFIT_SAMPLES)
      )
        return cached.fit;
      const fit = fitPool(
        runs.map((run) => (key ? run.evidence() : withoutGrades(run.evidence()))),
        policy,
      );
      cache.set(key, { samples, fit });
      return fit;
    },
  };
  // Each run decides once as it is made, while the runs after it are not yet in the pool: every one is empty then, so nothing is lost.
  for (const real of reals) runs.push(createRelativeRun(real, models, plan, variant, seed, pool));
  for (let call = 0; call < plan.calls; call += 1) for (const run of runs) run.step(call);
  return runs.map((run) => run.finish());
}

/** Every workload as the variant runs it: per project over its pool, or each on its own evidence alone; outcomes in the order of `reals`. */
export function simulateRelativeWorkloads(
  reals: readonly RealWorkload[],
  models: Models,
  plan: RouterRunPlan,
  variant: RelativeVariant,
  seed: number,
): RelativeOutcome[] {
  if (!variant.pool) return reals.map((real) => simulateRelativeRouter(real, models, plan, variant, seed));
  const outcomes = new Array<RelativeOutcome | undefined>(reals.length);
  const projects = new Map<string, number[]>();
  reals.forEach((real, index) => projects.set(projectOf(real), [...(projects.get(projectOf(real)) ?? []), index]));
  for (const indexes of projects.values()) {
    const members = indexes.map((index) => reals[index] as RealWorkload);
    const pooled = simulateRelativePool(members, models, plan, variant, seed);
    indexes.forEach((index, position) => (outcomes[index] = pooled[position]));
  }
  return outcomes.map((outcome, index) => {
    if (outcome === undefined) throw new Error(`no outcome for workload ${reals[index]?.recorded.name ?? index}`);
    return outcome;
  });
}

/** The project a workload belongs to: its suite (MMLU's subjects one project, GSM8K another). */
function projectOf(real: RealWorkload): string {
  return real.recorded.suite;
}
