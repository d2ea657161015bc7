/**
 * Replays: a sampled call asked again of another model (a candidate, the
 * requested model for a reference, a judge), through the pool's replay path
 * (healthy replicas only, never counted against their circuits) and the
 * engine's replay slots (replay-gate.ts). A model whose replay failed or
 * found no replica rests before the next (`restModel`).
 */
import type { AssistantMessage, GenerationParameters, Usage } from '../api/chat-types.js';
import type { CatalogModel } from '../catalog/catalog.js';
import { NoReplicaForReplayError } from '../engines/replica-replay.js';
import { errorFields } from '../log/logger.js';
import { costAt } from './model-prices.js';
import type { RouterContext } from './router-context.js';
import type { ReplaySample } from './replay-sample.js';

export type Replayed =
  | { kind: 'reply'; message: AssistantMessage; usage: Usage | null; costUsd: number; latencyMs: number; ttftMs: number | null }
  /** The engine failed or timed out: counted apart from quality. */
  | { kind: 'error'; reason: string }
  /** Not tried: no healthy replica, production calls waiting, or the model resting after errors. `unavailable`: no replica could take it now (no engine, model file missing, circuits open). */
  | { kind: 'skipped'; reason: string; unavailable?: boolean };

/** One replay through the pool's replay path and the engine's replay slots; `of` names the workload and, for a sample's replays, the call replayed (its span's root links to it). */
export async function replay(
  context: RouterContext,
  model: CatalogModel,
  parameters: GenerationParameters,
  stream: boolean,
  of: Pick<ReplaySample, 'scope' | 'origin'>,
): Promise<Replayed> {
  const pool = context.pools.get(model.id);
  if (pool === undefined) return { kind: 'skipped', reason: 'no engine serves it', unavailable: true };
  const rest = context.backoffs.get(model.id);
  const now = context.now();
  if (rest !== undefined && rest.until > now)
    return { kind: 'skipped', reason: `resting after ${rest.failures} failed or skipped replays` };
  if (context.isBusy(model.id)) return { kind: 'skipped', reason: 'production calls are waiting for it' };
  try {
    const signal = AbortSignal.any([context.signal, AbortSignal.timeout(context.settings.replayTimeoutMs)]);
    const span = context.telemetry.startReplay(model.id, of.origin, of.scope);
    const result = await pool.replay(parameters, signal, { stream, gate: context.gate.acquire }).catch((error: unknown) => {
      span.end({ replica: null, error });
      throw error;
    });
    span.end({
      replica: result.replica,
      usage: result.completion.usage,
      finishReason: result.completion.choices[0]?.finish_reason ?? null,
    });
    context.backoffs.delete(model.id);
    const message = result.completion.choices[0]?.message;
    if (message === undefined) return { kind: 'error', reason: 'the reply has no choice' };
    const usage = result.completion.usage;
    return {
      kind: 'reply',
      message,
      usage,
      costUsd: usage === null ? 0 : costAt(context.priceOf, model, usage),
      latencyMs: result.latencyMs,
      ttftMs: result.ttftMs,
    };
  } catch (error) {
    if (error instanceof NoReplicaForReplayError) return { kind: 'skipped', reason: error.message, unavailable: true };
    if (context.signal.aborted) return { kind: 'skipped', reason: 'the router is closing' };
    const failures = restModel(context, model.id, rest);
    context.logger.debug('replay failed', { model: model.id, failures, ...errorFields(error) });
    return { kind: 'error', reason: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * The model rests (5 s, doubling to a minute) before its next replay: after
 * an error, or when a candidate's replay found no replica. Either way it is
 * tried again within a minute of its engine's recovery. `previous` is the
 * rest the replay started from: replays that fail together count once.
 * Returns the count.
 */
export function restModel(context: RouterContext, modelId: string, previous: { failures: number } | undefined): number {
  const failures = (previous?.failures ?? 0) + 1;
  const wait = Math.min(context.settings.maxBackoffMs, context.settings.backoffMs * 2 ** (failures - 1));
  context.backoffs.set(modelId, { failures, until: context.now() + wait });
  return failures;
}

/**
 * A replay may not run far past the reply it is compared with: a candidate
 * still writing at several times the reference's length has failed anyway,
 * and an unbounded replay would hold an engine slot for as long as the
 * context allows.
 */
export function boundedReplay(parameters: GenerationParameters, referenceTokens: number): GenerationParameters {
  const limit = Math.max(64, 4 * referenceTokens);
  return { ...parameters, max_tokens: Math.min(parameters.max_tokens ?? limit, limit) };
}
