/**
 * One sampled production call, processed off the hot path:
 *
 *   1. The reference reply: the call's own when the requested model served
 *      it (its latency is then the yardstick of the candidates'), else a
 *      replay on the requested model.
 *   2. Monitoring (a shadow-sampled call of a cheaper serving model): its
 *      reply is checked against the reference (check-served-reply.ts) and
 *      feeds the rollback detector and the latency watch
 *      (watch-serving-model.ts). Checks of the serving model come first,
 *      and may spend the whole daily budget.
 *   3. Exploration (an exploration sample): replays on the candidates the
 *      exploration plan says are worth their tests, scored and counted, up to
 *      the part of the budget exploring may spend (replay-candidates.ts);
 *      now and then the judge is checked against itself.
 *   4. The route is decided again on the new evidence, and the plan remade
 *      (replan-exploration.ts).
 *
 * What the steps share (the budget, the evidence, the per-call policies'
 * training) is in sample-run.ts. Every replay and judge call goes through
 * the pool's replay path (healthy replicas only, never counted against their
 * circuits) and the engine's replay slots (replays.ts, replay-gate.ts); how
 * replies are scored is in sample-scoring.ts.
 */
import type { AssistantMessage } from '../api/chat-types.js';
import type { Scope } from '../api/scope.js';
import { callShapeOf } from './candidates.js';
import { checkServedReply } from './check-served-reply.js';
import { decideFromEvidence } from './decide-from-evidence.js';
import { replanExploration } from './replan-exploration.js';
import { replayCandidates } from './replay-candidates.js';
import type { QueuedSample } from './replay-sample.js';
import { boundedReplay, replay } from './replays.js';
import { applyDecision, change } from './route-changes.js';
import { routeState, type RouterContext } from './router-context.js';
import { NO_EVIDENCE, startSampleRun } from './sample-run.js';
import { selfCheckJudge } from './sample-scoring.js';

export async function processSample(context: RouterContext, sample: QueuedSample): Promise<void> {
  const requested = context.catalog.resolve(sample.requestedModel);
  if (requested === undefined) return;
  const { scope } = sample;
  const contractInForce = context.routes.contract(scope);
  const { contract } = contractInForce;
  const state = routeState(context, scope, requested.id);
  state.shape = callShapeOf(sample.parameters, sample.usage);
  await ensureRoute(context, scope, requested.id);
  const run = await startSampleRun(context, state, requested, contractInForce, sample);

  const routed = sample.servedModel !== requested.id;
  const shareEntry = context.routes.route(scope, requested.id)?.split?.shares.find((entry) => entry.model === sample.servedModel);
  // A call drawn into a random share explores nothing: the calls the requested model served are as random a sample, and their reference is free.
  const drawn = shareEntry !== undefined && shareEntry.policy === undefined;
  // A call a per-call policy picked is no random sample: it enters the evidence only when sampled at the exploration rate, as every call is.
  const picked = shareEntry?.policy !== undefined;
  // Relative contracts: a sample taken to remake a stale plan pays no reference when the new plan has nothing to test.
  const explore =
    sample.explore &&
    !drawn &&
    (!run.relative ||
      !routed ||
      sample.monitor ||
      (await replanExploration(context, state, requested, contract, run.exploreBudgetLeft())).candidates.length > 0);
  const wanted = (sample.monitor && run.monitorBudgetLeft() > 0) || (explore && run.exploreBudgetLeft() > 0);
  let reference: AssistantMessage | null = routed ? null : sample.reply;
  if (!routed) {
    // The requested model's own latency on this workload: the yardstick of the candidates'.
    await run.record(requested.id, { ...NO_EVIDENCE, latencyMs: sample.latencyMs, ttftMs: sample.ttftMs });
  } else if (wanted) {
    const replayed = await replay(
      context,
      requested,
      boundedReplay(sample.parameters, sample.usage.completion_tokens),
      sample.stream,
      sample,
    );
    if (replayed.kind === 'reply') {
      await run.spend(replayed.costUsd);
      reference = replayed.message;
      await run.record(requested.id, { ...NO_EVIDENCE, latencyMs: replayed.latencyMs, ttftMs: replayed.ttftMs });
    } else {
      state.monitoringProblem = `the requested model could not be replayed for a reference (${replayed.reason})`;
    }
  }

  // An exploration sample paid for a reference reply: the serving model is checked on it too.
  if (routed && (sample.monitor || reference !== null) && (await checkServedReply(run, sample, reference, { picked, explore }))) return;

  // Without a reference a candidate's reply cannot be scored: no replays to waste.
  if (explore && run.exploreBudgetLeft() > 0 && reference !== null) {
    await replayCandidates(run, sample, reference);
    if (!routed) await selfCheckJudge(run.scoring, sample, reference);
  }
  const shape = state.shape;
  await change(context, state, async () =>
    applyDecision(context, scope, requested, await decideFromEvidence(context, scope, requested, shape)),
  );
  await replanExploration(context, state, requested, contract, run.exploreBudgetLeft());
}

/** The route row exists from the first sample on, so the API lists what is being tested. */
async function ensureRoute(context: RouterContext, scope: Scope, requestedModel: string): Promise<void> {
  if (context.routes.route(scope, requestedModel) !== undefined) return;
  const route = {
    scope,
    requestedModel,
    servedModel: requestedModel,
    pinnedModel: null,
    certificate: null,
    cooldowns: {},
    fallbacks: [],
    split: null,
    updatedAt: context.now(),
  };
  // Only if absent: another process may have written this route (a pin) since this table last read.
  context.routes.apply(await context.routing.createRoute(route));
}
