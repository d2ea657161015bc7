/**
 * The replicas that serve one catalog model, balanced and failed over.
 *
 * Each call goes to the replica with the fewest calls in flight whose circuit
 * admits it (`pickReplica`, a pure function). A failure that provably cost
 * no generation (`error.resendable`: refused, never sent, queue full) is
 * tried once more on another replica; anything after the engine may have
 * started (a timeout, a closed connection, a bad reply, a 5xx) surfaces as
 * it is, so one call never costs two generations. Every attempt is written
 * to the call's record (`ReplicaAttempt.attempts`). A replica that keeps
 * failing is taken out by its circuit breaker and readmitted through a
 * half-open trial once its cooldown has passed.
 *
 * What counts against a replica's circuit: errors with `retryable === true`
 * (5xx, unreachable, overloaded, timeouts, bad replies) and anything that is
 * not a GatewayError (a bug, but a failure of that replica all the same). A
 * rejected request (InvalidRequestError) shows the replica is healthy; a
 * client that went away, or a replica too busy to take the call
 * (EngineOverloadedError), says nothing about it either way.
 */
import { ClientAbortError, EngineOverloadedError, EngineUnavailableError, GatewayError } from '../api/errors.js';
import type { GenerationParameters } from '../api/chat-types.js';
import type { Logger } from '../log/logger.js';
import { errorFields } from '../log/logger.js';
import { CircuitBreaker, type CircuitBreakerOptions, type CircuitPermit, type CircuitState } from './circuit-breaker.js';
import type { EngineMeter, MeterMark } from './engine-meter.js';
import type { Engine, EngineChunk, EngineCompletion, EngineRequest } from './engine.js';
import { StreamRecorder } from './stream-recorder.js';
import { stopWatching, watchAbort } from './abort-watch.js';

export interface Replica {
  engine: Engine;
  /** The model's name on that engine. */
  modelName: string;
  /** This replica's breaker settings (its engine's config); the pool's otherwise. */
  circuit?: CircuitBreakerOptions;
  /** Its engine's busy-time meter, shared by every pool on that engine; none: calls are not metered. */
  meter?: EngineMeter;
}

/**
 * Filled in with the engine id of each replica as it is tried, so the trace of
 * a call that failed still names the replica that failed it, and with the
 * call's share of its engines' time. Any object with these fields will do (a
 * call's trace record), which costs no allocation.
 */
export interface ReplicaAttempt {
  replica: string | null;
  /** The call's share of its engines' busy time (`EngineMeter`), seconds, summed over its attempts; null while none was metered. */
  engineSeconds: number | null;
  /** That time at its engines' `cost_per_hour`, USD; null while no metered engine had a price. */
  measuredCostUsd: number | null;
  /** Every attempt in order, once there is more than one (then the first failed without starting); null for one. */
  attempts: Array<{ replica: string; outcome: string }> | null;
}

export interface ModelPool {
  complete(parameters: GenerationParameters, signal: AbortSignal, attempt?: ReplicaAttempt): Promise<{ completion: EngineCompletion; replica: string }>;
  /**
   * Resolves once the first chunk has arrived (so a failure before it can still
   * be retried and reported with a proper status); `chunks` yields that chunk
   * first. The caller must finish `chunks` (read to the end, or call
   * `return()`, which also cancels the upstream request): the replica's
   * in-flight count is released then, or when `signal` aborts.
   */
  openStream(parameters: GenerationParameters, signal: AbortSignal, attempt?: ReplicaAttempt): Promise<{ replica: string; chunks: AsyncIterator<EngineChunk[]> }>;
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

/** What `pickReplica` needs to know of a replica. */
export interface ReplicaLoad {
  inFlight: number;
  circuit: Pick<CircuitBreaker, 'allowsCall'>;
}

/**
 * The replica for the next call: the fewest calls in flight among those whose
 * circuit admits a call, or -1 when none does. Ties go to the first one found
 * scanning from `startAt` (the pool rotates it on every pick, so idle replicas
 * take turns: round robin). `exclude` is the replica that just failed.
 */
export function pickReplica(states: ReadonlyArray<ReplicaLoad>, now: number, startAt = 0, exclude = -1): number {
  const count = states.length;
  let best = -1;
  let bestInFlight = Infinity;
  for (let offset = 0; offset < count; offset++) {
    const index = (startAt + offset) % count;
    if (index === exclude) continue;
    const state = states[index]!;
    if (state.inFlight < bestInFlight && state.circuit.allowsCall(now)) {
      best = index;
      bestInFlight = state.inFlight;
    }
  }
  return best;
}

interface ReplicaSlot extends ReplicaLoad {
  readonly engine: Engine;
  readonly modelName: string;
  readonly circuit: CircuitBreaker;
  readonly meter: EngineMeter | undefined;
  inFlight: number;
}

/** Adds what one metered attempt took to the call's record. */
function chargeAttempt(meter: EngineMeter | undefined, mark: MeterMark, attempt: ReplicaAttempt | undefined): void {
  if (meter === undefined) return;
  const seconds = meter.end(mark);
  if (attempt === undefined) return;
  attempt.engineSeconds = (attempt.engineSeconds ?? 0) + seconds;
  const cost = meter.costOf(seconds);
  if (cost !== null) attempt.measuredCostUsd = (attempt.measuredCostUsd ?? 0) + cost;
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

/** How a call ended, for its replica's circuit. */
type Outcome = 'success' | 'failure' | 'release';

function outcomeOf(error: unknown, signal: AbortSignal): Outcome {
  if (signal.aborted || error instanceof ClientAbortError || error instanceof EngineOverloadedError) return 'release';
  if (error instanceof GatewayError && !error.retryable) return 'success';
  return 'failure';
}

class ReplicaPool implements ModelPool {
  private readonly modelId: string;
  private readonly slots: ReplicaSlot[];
  private readonly logger: Logger;
  private readonly now: () => number;
  /** Measures replays: a monotonic clock, or the injected `now` (a simulation drives both). */
  private readonly elapsed: () => number;
  private cursor = 0;
  private total = 0;

  constructor(options: ModelPoolOptions) {
    this.modelId = options.modelId;
    this.logger = options.logger.child({ model: options.modelId });
    this.now = options.now ?? Date.now;
    this.elapsed = options.now ?? (() => performance.now());
    this.slots = options.replicas.map((replica) => ({
      engine: replica.engine,
      modelName: replica.modelName,
      circuit: new CircuitBreaker(replica.circuit ?? options.circuit),
      meter: replica.meter,
      inFlight: 0,
    }));
  }

  inFlight(): number {
    return this.total;
  }

  replicaStates(): Array<{ replica: string; inFlight: number; circuit: CircuitState }> {
    const now = this.now();
    return this.slots.map((slot) => ({ replica: slot.engine.id, inFlight: slot.inFlight, circuit: slot.circuit.state(now) }));
  }

  async complete(parameters: GenerationParameters, signal: AbortSignal, attempt?: ReplicaAttempt): Promise<{ completion: EngineCompletion; replica: string }> {
    const first = this.pick(-1);
    try {
      return await this.completeOn(first, parameters, signal, attempt);
    } catch (error) {
      const second = this.retryTarget(first, error, signal);
      if (second === -1) throw error;
      return await this.secondAttempt(first, error, second, attempt, this.completeOn(second, parameters, signal, attempt));
    }
  }

  async openStream(parameters: GenerationParameters, signal: AbortSignal, attempt?: ReplicaAttempt): Promise<{ replica: string; chunks: AsyncIterator<EngineChunk[]> }> {
    const first = this.pick(-1);
    try {
      return await this.openStreamOn(first, parameters, signal, attempt);
    } catch (error) {
      const second = this.retryTarget(first, error, signal);
      if (second === -1) throw error;
      return await this.secondAttempt(first, error, second, attempt, this.openStreamOn(second, parameters, signal, attempt));
    }
  }

  /** Records both attempts of a call sent again: the first's failure, then how the second went. */
  private async secondAttempt<T>(first: number, failure: unknown, second: number, attempt: ReplicaAttempt | undefined, work: Promise<T>): Promise<T> {
    const attempts = [{ replica: this.slots[first]!.engine.id, outcome: (failure as GatewayError).code }];
    if (attempt !== undefined) attempt.attempts = attempts;
    const replica = this.slots[second]!.engine.id;
    try {
      const result = await work;
      attempts.push({ replica, outcome: 'ok' });
      return result;
    } catch (error) {
      attempts.push({ replica, outcome: error instanceof GatewayError ? error.code : 'internal_error' });
      throw error;
    }
  }

  async replay(parameters: GenerationParameters, signal: AbortSignal, options: ReplayOptions): Promise<ReplayResult> {
    const now = this.now();
    let index = -1;
    for (let candidate = 0; candidate < this.slots.length; candidate++) {
      const slot = this.slots[candidate]!;
      if (slot.circuit.state(now) !== 'closed' || (slot.engine.unavailableReason?.(slot.modelName) ?? null) !== null) continue;
      if (index === -1 || slot.inFlight < this.slots[index]!.inFlight) index = candidate;
    }
    if (index === -1) throw new NoReplicaForReplayError(this.modelId);
    const slot = this.slots[index]!;
    const release = await options.gate(slot.engine.id, signal);
    slot.inFlight += 1;
    this.total += 1;
    // Replays load the engine too (its concurrency), though their time is billed as eval spend, not to a call.
    const mark: MeterMark = { since: 0, area: 0 };
    slot.meter?.start(mark);
    const started = this.elapsed();
    try {
      if (!options.stream) {
        const completion = await slot.engine.complete(this.request(index, parameters), signal);
        return { completion, replica: slot.engine.id, latencyMs: this.elapsed() - started, ttftMs: null };
      }
      const recorder = new StreamRecorder(true);
      let ttftMs: number | null = null;
      for await (const chunks of slot.engine.stream(this.request(index, parameters), signal)) {
        ttftMs ??= this.elapsed() - started;
        for (const chunk of chunks) recorder.observe(chunk);
      }
      const message = recorder.message() ?? { role: 'assistant' as const, content: null };
      const finish = (recorder.finishReason ?? 'stop') as EngineCompletion['choices'][number]['finish_reason'];
      return { completion: { choices: [{ index: 0, message, finish_reason: finish }], usage: recorder.usage }, replica: slot.engine.id, latencyMs: this.elapsed() - started, ttftMs };
    } finally {
      slot.inFlight -= 1;
      this.total -= 1;
      slot.meter?.end(mark);
      release();
    }
  }

  /** The busy-time meter of a replica's engine. */
  meterOf(index: number): EngineMeter | undefined {
    return this.slots[index]!.meter;
  }

  /** Settles one call on its replica; called exactly once per admitted call. */
  settle(index: number, permit: CircuitPermit, outcome: Outcome, error?: unknown): void {
    const slot = this.slots[index]!;
    slot.inFlight -= 1;
    this.total -= 1;
    if (outcome === 'success') {
      const wasTrial = permit === 'trial';
      slot.circuit.onSuccess(permit);
      if (wasTrial) this.logger.info('replica readmitted: circuit closed', { replica: slot.engine.id });
    } else if (outcome === 'failure') {
      if (slot.circuit.onFailure(permit, this.now())) {
        this.logger.warn('replica taken out: circuit open', {
          replica: slot.engine.id,
          reopens_in_ms: slot.circuit.reopensAt(this.now()) - this.now(),
          ...errorFields(error),
        });
      }
    } else {
      slot.circuit.onRelease(permit);
    }
  }

  private pick(exclude: number): number {
    const index = pickReplica(this.slots, this.now(), this.cursor, exclude);
    if (index === -1 && exclude === -1) throw this.noHealthyReplica();
    this.cursor = this.cursor + 1 >= this.slots.length ? 0 : this.cursor + 1;
    return index;
  }

  /** The replica to send the call to after `failed` threw `error` without starting it, or -1 when the error must surface. */
  private retryTarget(failed: number, error: unknown, signal: AbortSignal): number {
    if (signal.aborted || !(error instanceof GatewayError) || !error.resendable) return -1;
    const second = this.pick(failed);
    if (second !== -1) {
      this.logger.info('sending the call to another replica: the first did not start it', {
        failed_replica: this.slots[failed]!.engine.id,
        replica: this.slots[second]!.engine.id,
        ...errorFields(error),
      });
    }
    return second;
  }

  /** Takes a permit and counts the call in flight; throws when the circuit refuses after all. */
  private admit(index: number, attempt: ReplicaAttempt | undefined): CircuitPermit {
    const slot = this.slots[index]!;
    const permit = slot.circuit.tryAcquire(this.now());
    if (permit === null) throw this.noHealthyReplica();
    slot.inFlight += 1;
    this.total += 1;
    if (attempt !== undefined) attempt.replica = slot.engine.id;
    return permit;
  }

  private request(index: number, parameters: GenerationParameters): EngineRequest {
    // `model` first, then set again in case the parameters carry one: a spread with a field
    // added after it makes an object V8 reads slowly, and the engine reads all 25 fields of
    // it to write the upstream body (6.8 against 1.9 µs for that body, in a loop).
    const request: EngineRequest = { model: '', ...parameters };
    request.model = this.slots[index]!.modelName;
    return request;
  }

  private async completeOn(
    index: number, parameters: GenerationParameters, signal: AbortSignal, attempt: ReplicaAttempt | undefined,
  ): Promise<{ completion: EngineCompletion; replica: string }> {
    const slot = this.slots[index]!;
    const permit = this.admit(index, attempt);
    const mark: MeterMark = { since: 0, area: 0 };
    slot.meter?.start(mark);
    let completion: EngineCompletion;
    try {
      completion = await slot.engine.complete(this.request(index, parameters), signal);
    } catch (error) {
      chargeAttempt(slot.meter, mark, attempt);
      this.settle(index, permit, outcomeOf(error, signal), error);
      throw error;
    }
    chargeAttempt(slot.meter, mark, attempt);
    this.settle(index, permit, 'success');
    return { completion, replica: slot.engine.id };
  }

  private async openStreamOn(
    index: number, parameters: GenerationParameters, signal: AbortSignal, attempt: ReplicaAttempt | undefined,
  ): Promise<{ replica: string; chunks: AsyncIterator<EngineChunk[]> }> {
    const slot = this.slots[index]!;
    const permit = this.admit(index, attempt);
    const mark: MeterMark = { since: 0, area: 0 };
    slot.meter?.start(mark);
    let iterator: AsyncIterator<EngineChunk[]> | undefined;
    let first: IteratorResult<EngineChunk[]>;
    try {
      iterator = slot.engine.stream(this.request(index, parameters), signal)[Symbol.asyncIterator]();
      first = await iterator.next();
    } catch (error) {
      chargeAttempt(slot.meter, mark, attempt);
      this.settle(index, permit, outcomeOf(error, signal), error);
      throw error;
    }
    if (first.done === true) {
      chargeAttempt(slot.meter, mark, attempt);
      this.settle(index, permit, 'success');
      return { replica: slot.engine.id, chunks: finishedChunks() };
    }
    return { replica: slot.engine.id, chunks: new PooledChunks(this, index, permit, iterator, first.value, signal, mark, attempt) };
  }

  private noHealthyReplica(): EngineUnavailableError {
    const now = this.now();
    let reopensAt = Infinity;
    for (const slot of this.slots) reopensAt = Math.min(reopensAt, slot.circuit.reopensAt(now));
    const retryAfterSeconds = Number.isFinite(reopensAt) ? Math.max(1, Math.ceil((reopensAt - now) / 1000)) : undefined;
    const reason = this.slots.length === 0 ? 'it has no replicas' : 'every replica is failing and taken out for now';
    return new EngineUnavailableError(`No healthy replica for model '${this.modelId}': ${reason}.`, undefined, 'no_healthy_replica', retryAfterSeconds);
  }
}

function finishedChunks(): AsyncIterableIterator<EngineChunk[]> {
  return {
    next: () => Promise.resolve({ done: true, value: undefined }),
    return: () => Promise.resolve({ done: true, value: undefined }),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/**
 * The chunks of one pooled stream, in the engine's batches: the buffered first batch, then the rest.
 * It settles its replica exactly once, whichever comes first: the end, an
 * error, `return()`, or `signal` aborting (listened to through `handleEvent`,
 * so no closure is made per stream).
 */
class PooledChunks implements AsyncIterableIterator<EngineChunk[]> {
  private buffered: EngineChunk[] | null;
  /** The engine's iterator has ended or been returned: nothing more to ask of it. */
  private innerDone = false;
  /** The replica has been settled (in-flight count and circuit). */
  private settled = false;

  constructor(
    private readonly pool: ReplicaPool,
    private readonly index: number,
    private readonly permit: CircuitPermit,
    private readonly inner: AsyncIterator<EngineChunk[]>,
    first: EngineChunk[],
    private readonly signal: AbortSignal,
    private readonly mark: MeterMark,
    private readonly attempt: ReplicaAttempt | undefined,
  ) {
    this.buffered = first;
    watchAbort(signal, this);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<EngineChunk[]>> {
    const buffered = this.buffered;
    if (buffered !== null) {
      this.buffered = null;
      return { done: false, value: buffered };
    }
    if (this.innerDone) return { done: true, value: undefined };
    let result: IteratorResult<EngineChunk[]>;
    try {
      result = await this.inner.next();
    } catch (error) {
      this.innerDone = true;
      this.settle(outcomeOf(error, this.signal), error);
      throw error;
    }
    if (result.done === true) {
      this.innerDone = true;
      this.settle('success');
    }
    return result;
  }

  /** Stops early: cancels the upstream request (the engine's `return()`) and releases the replica. */
  async return(): Promise<IteratorResult<EngineChunk[]>> {
    this.buffered = null;
    if (!this.innerDone) {
      this.innerDone = true;
      this.settle('release');
      await this.inner.return?.();
    }
    return { done: true, value: undefined };
  }

  /**
   * The signal aborted: the engine cancels upstream itself and its `next()`
   * will throw ClientAbortError; the slot is freed now in case the caller never
   * asks again.
   */
  handleEvent(): void {
    this.settle('release');
  }

  private settle(outcome: Outcome, error?: unknown): void {
    if (this.settled) return;
    this.settled = true;
    stopWatching(this.signal, this);
    chargeAttempt(this.pool.meterOf(this.index), this.mark, this.attempt);
    this.pool.settle(this.index, this.permit, outcome, error);
  }
}
