/**
 * The replicas that serve one catalog model, balanced and failed over.
 *
 * Each call goes to the replica with the fewest calls in flight whose circuit
 * admits it (`pick-replica.ts`, a pure function). A failure that provably cost
 * no generation (`error.resendable`: refused, never sent, queue full) is
 * tried once more on another replica (`replica-retry.ts`); anything after the
 * engine may have started (a timeout, a closed connection, a bad reply, a
 * 5xx) surfaces as it is, so one call never costs two generations. Every
 * attempt is written to the call's record (`ReplicaAttempt.attempts`). A
 * replica that keeps failing is taken out by its circuit breaker and
 * readmitted through a half-open trial once its cooldown has passed
 * (`replica-slots.ts`; what counts against a circuit: `call-outcome.ts`).
 *
 * This file is the contract and the composition: a whole reply is settled
 * here, a stream by its `PooledChunks` (`pooled-chunks.ts`), and the router's
 * replays run apart (`replica-replay.ts`).
 */
import type { GenerationParameters } from '../api/chat-types.js';
import type { Logger } from '../log/logger.js';
import type { CircuitBreakerOptions, CircuitState } from './circuit-breaker.js';
import { outcomeOf } from './call-outcome.js';
import type { MeterMark } from './engine-meter.js';
import type { EngineChunk, EngineCompletion } from './engine.js';
import { finishedChunks, PooledChunks } from './pooled-chunks.js';
import { chargeAttempt, type ReplicaAttempt } from './replica-attempt.js';
import { replayOnReplica, type ReplayOptions, type ReplayResult } from './replica-replay.js';
import { retryTarget, secondAttempt } from './replica-retry.js';
import { ReplicaSlots, type Replica } from './replica-slots.js';

export interface ModelPool {
  complete(
    parameters: GenerationParameters,
    signal: AbortSignal,
    attempt?: ReplicaAttempt,
  ): Promise<{ completion: EngineCompletion; replica: string }>;
  /**
   * Resolves once the first chunk has arrived (so a failure before it can still
   * be retried and reported with a proper status); `chunks` yields that chunk
   * first. The caller must finish `chunks` (read to the end, or call
   * `return()`, which also cancels the upstream request): the replica's
   * in-flight count is released then, or when `signal` aborts.
   */
  openStream(
    parameters: GenerationParameters,
    signal: AbortSignal,
    attempt?: ReplicaAttempt,
  ): Promise<{ replica: string; chunks: AsyncIterator<EngineChunk[]> }>;
  inFlight(): number;
  replicaStates(): Array<{ replica: string; inFlight: number; circuit: CircuitState }>;
  /**
   * A call for the router's shadow replays, which must never hurt production
   * traffic: it goes only to a replica whose circuit is closed (never taking a
   * half-open circuit's one trial) and whose engine can serve the model now,
   * is never retried elsewhere, and is never counted for or against a
   * circuit. `gate` waits for one of the engine's replay slots (a bound below
   * the engine's own). Rejects with `NoReplicaForReplayError` when no replica
   * qualifies; otherwise as `complete`. With `stream`, the reply is streamed
   * and assembled, so its time to first token is measured.
   */
  replay(parameters: GenerationParameters, signal: AbortSignal, options: ReplayOptions): Promise<ReplayResult>;
}

export interface ModelPoolOptions {
  modelId: string;
  replicas: Replica[];
  logger: Logger;
  now?: () => number;
  circuit?: CircuitBreakerOptions;
}

export function createModelPool(options: ModelPoolOptions): ModelPool {
  return new ReplicaPool(options);
}

class ReplicaPool implements ModelPool {
  private readonly modelId: string;
  private readonly replicas: ReplicaSlots;
  private readonly logger: Logger;
  /** Measures replays: a monotonic clock, or the injected `now` (a simulation drives both). */
  private readonly elapsed: () => number;

  constructor(options: ModelPoolOptions) {
    this.modelId = options.modelId;
    this.logger = options.logger.child({ model: options.modelId });
    this.elapsed = options.now ?? (() => performance.now());
    this.replicas = new ReplicaSlots(options.modelId, options.replicas, options.circuit, this.logger, options.now ?? Date.now);
  }

  inFlight(): number {
    return this.replicas.total;
  }

  replicaStates(): Array<{ replica: string; inFlight: number; circuit: CircuitState }> {
    return this.replicas.states();
  }

  async complete(
    parameters: GenerationParameters,
    signal: AbortSignal,
    attempt?: ReplicaAttempt,
  ): Promise<{ completion: EngineCompletion; replica: string }> {
    const first = this.replicas.pick(-1);
    try {
      return await this.completeOn(first, parameters, signal, attempt);
    } catch (error) {
      const second = retryTarget(this.replicas, first, error, signal, this.logger);
      if (second === -1) throw error;
      return await secondAttempt(this.replicas, first, error, second, attempt, this.completeOn(second, parameters, signal, attempt));
    }
  }

  async openStream(
    parameters: GenerationParameters,
    signal: AbortSignal,
    attempt?: ReplicaAttempt,
  ): Promise<{ replica: string; chunks: AsyncIterator<EngineChunk[]> }> {
    const first = this.replicas.pick(-1);
    try {
      return await this.openStreamOn(first, parameters, signal, attempt);
    } catch (error) {
      const second = retryTarget(this.replicas, first, error, signal, this.logger);
      if (second === -1) throw error;
      return await secondAttempt(this.replicas, first, error, second, attempt, this.openStreamOn(second, parameters, signal, attempt));
    }
  }

  replay(parameters: GenerationParameters, signal: AbortSignal, options: ReplayOptions): Promise<ReplayResult> {
    return replayOnReplica(this.replicas, this.modelId, parameters, signal, options, this.elapsed);
  }

  private async completeOn(
    index: number,
    parameters: GenerationParameters,
    signal: AbortSignal,
    attempt: ReplicaAttempt | undefined,
  ): Promise<{ completion: EngineCompletion; replica: string }> {
    const slot = this.replicas.slots[index]!;
    const permit = this.replicas.admit(index, attempt);
    const mark: MeterMark = { since: 0, area: 0 };
    slot.meter?.start(mark);
    let completion: EngineCompletion;
    try {
      completion = await slot.engine.complete(this.replicas.request(index, parameters), signal);
    } catch (error) {
      chargeAttempt(slot.meter, mark, attempt);
      this.replicas.settle(index, permit, outcomeOf(error, signal), error);
      throw error;
    }
    chargeAttempt(slot.meter, mark, attempt);
    this.replicas.settle(index, permit, 'success');
    return { completion, replica: slot.engine.id };
  }

  private async openStreamOn(
    index: number,
    parameters: GenerationParameters,
    signal: AbortSignal,
    attempt: ReplicaAttempt | undefined,
  ): Promise<{ replica: string; chunks: AsyncIterator<EngineChunk[]> }> {
    const slot = this.replicas.slots[index]!;
    const permit = this.replicas.admit(index, attempt);
    const mark: MeterMark = { since: 0, area: 0 };
    slot.meter?.start(mark);
    let iterator: AsyncIterator<EngineChunk[]> | undefined;
    let first: IteratorResult<EngineChunk[]>;
    try {
      iterator = slot.engine.stream(this.replicas.request(index, parameters), signal)[Symbol.asyncIterator]();
      first = await iterator.next();
    } catch (error) {
      chargeAttempt(slot.meter, mark, attempt);
      this.replicas.settle(index, permit, outcomeOf(error, signal), error);
      throw error;
    }
    if (first.done === true) {
      chargeAttempt(slot.meter, mark, attempt);
      this.replicas.settle(index, permit, 'success');
      return { replica: slot.engine.id, chunks: finishedChunks() };
    }
    return {
      replica: slot.engine.id,
      chunks: new PooledChunks(this.replicas, index, permit, iterator, first.value, signal, mark, attempt),
    };
  }
}
