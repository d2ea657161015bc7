/**
 * Exploration: an exploration sample replayed on the candidates the route's
 * plan says are worth their tests (exploration.ts, made again here on the
 * evidence so far), each reply scored against the reference and counted,
 * up to the part of the day's budget exploring may spend.
 *
 * An engine error is not a verdict: it is counted apart, and the model rests
 * (replays.ts: 5 s, doubling to a minute) before it is tried again, so it is
 * re-tested within a minute of its engine's recovery. A candidate whose
 * replay found no replica (its model file missing, its circuits open) rests
 * the same way, and the plan leaves it out (its rate, its cost) while it rests.
 */
import type { AssistantMessage } from '../api/chat-types.js';
import { replanExploration } from './replan-exploration.js';
import type { ReplaySample } from './replay-sample.js';
import { boundedReplay, replay, restModel } from './replays.js';
import { routeKey } from './router-context.js';
import { NO_EVIDENCE, type SampleRun } from './sample-run.js';
import { scoreReply } from './sample-scoring.js';

/** Replays `sample` on the planned candidates and scores each reply against `reference`. */
export async function replayCandidates(run: SampleRun, sample: ReplaySample, reference: AssistantMessage): Promise<void> {
  const { context, state, requested, contract } = run;
  const plan = await replanExploration(context, state, requested, contract, run.exploreBudgetLeft());
  if (plan.candidates.length > 0) context.traffic.observeSample(routeKey(sample.scope, requested.id), context.now());
  for (const modelId of plan.candidates) {
    if (run.exploreBudgetLeft() <= 0) break;
    const candidate = context.catalog.resolve(modelId);
    // The model that served the call was scored on its own reply (check-served-reply.ts).
    if (candidate === undefined || candidate.id === sample.servedModel) continue;
    const replayed = await replay(
      context,
      candidate,
      boundedReplay(sample.parameters, sample.usage.completion_tokens),
      sample.stream,
      sample,
    );
    if (replayed.kind === 'error') await run.record(candidate.id, { ...NO_EVIDENCE, errors: 1 });
    // Out of the plan until its rest is over: its samples would pay a reference for replays that never run.
    if (replayed.kind === 'skipped' && replayed.unavailable === true) restModel(context, candidate.id, context.backoffs.get(candidate.id));
    if (replayed.kind !== 'reply') continue;
    await run.spend(replayed.costUsd);
    const scored = await scoreReply(run.scoring, reference, replayed.message, candidate);
    // The judge is down: nothing more can be scored in this sample (the candidate's replay stays unscored).
    if (scored === 'judge_down') break;
    const usage = replayed.usage;
    await run.record(candidate.id, {
      ...NO_EVIDENCE,
      ...scored?.delta,
      promptTokens: usage?.prompt_tokens ?? 0,
      completionTokens: usage?.completion_tokens ?? 0,
      costUsd: replayed.costUsd,
      latencyMsTotal: replayed.latencyMs,
      latencyMs: replayed.latencyMs,
      ttftMs: replayed.ttftMs,
    });
    if (scored !== null) run.learn(candidate.id, scored.delta);
  }
}
