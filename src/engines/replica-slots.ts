/**
 * The replicas of one model as the pool keeps them: each one's calls in
 * flight and circuit breaker. A call is picked a replica (`pickReplica`),
 * admitted under a circuit permit, and settled exactly once with how it
 * ended (`call-outcome.ts`); a replica that keeps failing is taken out by
 * its circuit and readmitted through a half-open trial once its cooldown has
 * passed.
 */
import { EngineUnavailableError } from '../api/errors.js';
import type { GenerationParameters } from '../api/chat-types.js';
import type { Logger } from '../log/logger.js';
import { errorFields } from '../log/logger.js';
import { CircuitBreaker, type CircuitBreakerOptions, type CircuitPermit, type CircuitState } from './circuit-breaker.js';
import type { CallOutcome } from './call-outcome.js';
import type { EngineMeter } from './engine-meter.js';
import type { Engine, EngineRequest } from './engine.js';
import { pickReplica, type ReplicaLoad } from './pick-replica.js';
import type { ReplicaAttempt } from './replica-attempt.js';

export interface Replica {
  engine: Engine;
  /** The model's name on that engine. */
  modelName: string;
  /** This replica's breaker settings (its engine's config); the pool's otherwise. */
  circuit?: CircuitBreakerOptions;
  /** Its engine's busy-time meter, shared by every pool on that engine; none: calls are not metered. */
  meter?: EngineMeter;
}

export interface ReplicaSlot extends ReplicaLoad {
  readonly engine: Engine;
  readonly modelName: string;
  readonly circuit: CircuitBreaker;
  readonly meter: EngineMeter | undefined;
  inFlight: number;
}

export class ReplicaSlots {
  readonly slots: ReplicaSlot[];
  /** Calls in flight on every replica. */
  total = 0;
  private cursor = 0;
  private readonly modelId: string;
  private readonly logger: Logger;
  readonly now: () => number;

  constructor(modelId: string, replicas: Replica[], circuit: CircuitBreakerOptions | undefined, logger: Logger, now: () => number) {
    this.modelId = modelId;
    this.logger = logger;
    this.now = now;
    this.slots = replicas.map((replica) => ({
      engine: replica.engine,
      modelName: replica.modelName,
      circuit: new CircuitBreaker(replica.circuit ?? circuit),
      meter: replica.meter,
      inFlight: 0,
    }));
  }

  states(): Array<{ replica: string; inFlight: number; circuit: CircuitState }> {
    const now = this.now();
    return this.slots.map((slot) => ({ replica: slot.engine.id, inFlight: slot.inFlight, circuit: slot.circuit.state(now) }));
  }

  /** The replica for the next call, never `exclude`; -1 when only `exclude` could take it (none at all: throws). */
  pick(exclude: number): number {
    const index = pickReplica(this.slots, this.now(), this.cursor, exclude);
    if (index === -1 && exclude === -1) throw this.noHealthyReplica();
    this.cursor = this.cursor + 1 >= this.slots.length ? 0 : this.cursor + 1;
    return index;
  }

  /** Takes a permit and counts the call in flight; throws when the circuit refuses after all. */
  admit(index: number, attempt: ReplicaAttempt | undefined): CircuitPermit {
    const slot = this.slots[index]!;
    const permit = slot.circuit.tryAcquire(this.now());
    if (permit === null) throw this.noHealthyReplica();
    slot.inFlight += 1;
    this.total += 1;
    if (attempt !== undefined) attempt.replica = slot.engine.id;
    return permit;
  }

  /** The busy-time meter of a replica's engine. */
  meterOf(index: number): EngineMeter | undefined {
    return this.slots[index]!.meter;
  }

  /** Settles one call on its replica; called exactly once per admitted call. */
  settle(index: number, permit: CircuitPermit, outcome: CallOutcome, error?: unknown): void {
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

  /** The engine request for a replica: the call's parameters under the model's name there. */
  request(index: number, parameters: GenerationParameters): EngineRequest {
    // `model` first, then set again in case the parameters carry one: a spread with a field
    // added after it makes an object V8 reads slowly, and the engine reads all 25 fields of
    // it to write the upstream body (measured: docs/benchmarks.md).
    const request: EngineRequest = { model: '', ...parameters };
    request.model = this.slots[index]!.modelName;
    return request;
  }

  private noHealthyReplica(): EngineUnavailableError {
    const now = this.now();
    let reopensAt = Infinity;
    for (const slot of this.slots) reopensAt = Math.min(reopensAt, slot.circuit.reopensAt(now));
    const retryAfterSeconds = Number.isFinite(reopensAt) ? Math.max(1, Math.ceil((reopensAt - now) / 1000)) : undefined;
    const reason = this.slots.length === 0 ? 'it has no replicas' : 'every replica is failing and taken out for now';
    return new EngineUnavailableError(
      `No healthy replica for model '${this.modelId}': ${reason}.`,
      undefined,
      'no_healthy_replica',
      retryAfterSeconds,
    );
  }
}
