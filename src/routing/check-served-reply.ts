/**
 * Monitoring: a routed call's reply, checked against the reference (the
 * requested model's reply on the same call). A check that could be made
 * resets the route's count of unchecked calls (router-worker.ts falls a
 * route back when too many go unchecked) and feeds the serving model's
 * evidence, with the call's real latency, and its watch
 * (watch-serving-model.ts). One that could not says why in the route's
 * `monitoringProblem`, for the routes view and the fallback's detail.
 *
 * Checks of the serving model may spend the whole daily budget. A call a
 * per-call policy picked is no random sample of the workload: its outcome
 * enters the evidence (and trains the policies) only when it would have as
 * an unpicked call, sampled for exploration while the route's plan tests
 * its model; its latency always does.
 */
import type { AssistantMessage } from '../api/chat-types.js';
import type { ReplaySample } from './replay-sample.js';
import { NO_EVIDENCE, type SampleRun } from './sample-run.js';
import { scoreReply } from './sample-scoring.js';
import { watchServingModel } from './watch-serving-model.js';

/** How the call was sampled: `picked`, a per-call policy picked it; `explore`, it was sampled for exploration too. */
export interface ServedReplySampling {
  picked: boolean;
  explore: boolean;
}

/** Checks the serving model's reply of a routed call against `reference` (null: none could be had); true when the check demoted it. */
export async function checkServedReply(
  run: SampleRun,
  sample: ReplaySample,
  reference: AssistantMessage | null,
  sampling: ServedReplySampling,
): Promise<boolean> {
  const { context, state, requested, contract } = run;
  const served = context.catalog.resolve(sample.servedModel);
  if (run.monitorBudgetLeft() <= 0) {
    state.monitoringProblem = `the day's eval budget of $${contract.daily_budget_usd} is spent`;
    return false;
  }
  if (served === undefined || reference === null) return false;
  const scored = await scoreReply(run.scoring, reference, sample.reply, served);
  if (scored === 'judge_down') {
    state.monitoringProblem = 'the judge could not be reached';
    return false;
  }
  if (scored === null) return false;
  state.uncheckedCalls = 0;
  state.monitoringProblem = null;
  // A picked call counts when an unpicked one would have: sampled for exploration while the route's plan (remade after every sample) tests its model.
  const counted = !sampling.picked || (sampling.explore && state.plan?.candidates.includes(served.id) === true);
  await run.record(served.id, {
    ...NO_EVIDENCE,
    ...(counted ? scored.delta : {}),
    latencyMs: sample.latencyMs,
    ttftMs: sample.ttftMs,
    latencyMsTotal: sample.latencyMs,
  });
  if (counted) run.learn(served.id, scored.delta);
  return watchServingModel(context, state, requested, served.id, scored.passed, contract);
}
