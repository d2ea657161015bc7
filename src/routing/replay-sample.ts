/**
 * A sampled production call, as the router worker takes it off the hot path
 * (router-worker.ts `offer`) and processes it (sample-processor.ts). A
 * follower hands the samples it keeps to the leader through the store
 * (sample-handoff.ts), so both shapes are plain data.
 */
import type { AssistantMessage, GenerationParameters, Usage } from '../api/chat-types.js';
import type { Environment } from '../store/store.js';
import type { Scope } from '../api/scope.js';
import type { CallOrigin } from '../telemetry/telemetry.js';

export interface ReplaySample {
  scope: Scope;
  environment: Environment;
  /** Canonical ids. */
  requestedModel: string;
  servedModel: string;
  parameters: GenerationParameters;
  reply: AssistantMessage;
  usage: Usage;
  /** The production call's latency and, when streamed, time to first token. */
  latencyMs: number;
  ttftMs: number | null;
  stream: boolean;
  /** The production call's request id and span, which the replays' spans point back to (absent from samples of older processes). */
  origin?: CallOrigin;
}

/** A sample the worker kept, and what for (either or both). */
export interface QueuedSample extends ReplaySample {
  /** Score the serving (cheaper) model's reply against the reference. */
  monitor: boolean;
  /** Replay on the candidates of the exploration plan. */
  explore: boolean;
}
