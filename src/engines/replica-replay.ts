/**
 * The router's shadow replays on a model's replicas (`ModelPool.replay` says
 * what a replay may and may not do to production traffic).
 */
import type { GenerationParameters } from '../api/chat-types.js';
import type { MeterMark } from './engine-meter.js';
import type { EngineCompletion } from './engine.js';
import type { ReplicaSlots } from './replica-slots.js';
import { StreamRecorder } from './stream-recorder.js';

export interface ReplayOptions {
  stream: boolean;
  /** Resolves with a release function once the engine has a free replay slot. */
  gate: (engineId: string, signal: AbortSignal) => Promise<() => void>;
}

export interface ReplayResult {
  completion: EngineCompletion;
  replica: string;
  latencyMs: number;
  /** Time to the first chunk of a streamed replay; null for a whole reply. */
  ttftMs: number | null;
}

/** No replica may take a replay now (circuits not closed, model file missing): a reason to skip, not a failure of the model. */
export class NoReplicaForReplayError extends Error {
  constructor(modelId: string) {
    super(`no replica of '${modelId}' can take a replay now`);
    this.name = 'NoReplicaForReplayError';
  }
}

/**
 * One replay on the least busy replica whose circuit is closed and whose
 * engine can serve the model now. `elapsed` measures it: a monotonic clock,
 * or the injected `now` (a simulation drives both).
 */
export async function replayOnReplica(
  replicas: ReplicaSlots,
  modelId: string,
  parameters: GenerationParameters,
  signal: AbortSignal,
  options: ReplayOptions,
  elapsed: () => number,
): Promise<ReplayResult> {
  const slots = replicas.slots;
  const now = replicas.now();
  let index = -1;
  for (let candidate = 0; candidate < slots.length; candidate++) {
    const slot = slots[candidate]!;
    if (slot.circuit.state(now) !== 'closed' || (slot.engine.unavailableReason?.(slot.modelName) ?? null) !== null) continue;
    if (index === -1 || slot.inFlight < slots[index]!.inFlight) index = candidate;
  }
  if (index === -1) throw new NoReplicaForReplayError(modelId);
  const slot = slots[index]!;
  const release = await options.gate(slot.engine.id, signal);
  slot.inFlight += 1;
  replicas.total += 1;
  // Replays load the engine too (its concurrency), though their time is billed as eval spend, not to a call.
  const mark: MeterMark = { since: 0, area: 0 };
  slot.meter?.start(mark);
  const started = elapsed();
  try {
    if (!options.stream) {
      const completion = await slot.engine.complete(replicas.request(index, parameters), signal);
      return { completion, replica: slot.engine.id, latencyMs: elapsed() - started, ttftMs: null };
    }
    const recorder = new StreamRecorder(true);
    let ttftMs: number | null = null;
    for await (const chunks of slot.engine.stream(replicas.request(index, parameters), signal)) {
      ttftMs ??= elapsed() - started;
      for (const chunk of chunks) recorder.observe(chunk);
    }
    const message = recorder.message() ?? { role: 'assistant' as const, content: null };
    const finish = (recorder.finishReason ?? 'stop') as EngineCompletion['choices'][number]['finish_reason'];
    return {
      completion: { choices: [{ index: 0, message, finish_reason: finish }], usage: recorder.usage },
      replica: slot.engine.id,
      latencyMs: elapsed() - started,
      ttftMs,
    };
  } finally {
    slot.inFlight -= 1;
    replicas.total -= 1;
    slot.meter?.end(mark);
    release();
  }
}
