/**
 * What one inference call has learnt about itself, filled in as it goes and
 * turned into exactly one trace when it ends, however it ends.
 */
import { performance } from 'node:perf_hooks';
import type { GatewayError } from '../api/errors.js';
import type { Scope } from '../api/scope.js';
import type { ApiKey, Trace, TraceStatus } from '../store/store.js';

export class CallTrace {
  readonly startedAt = Date.now();
  /** Where the call is counted, once its request named it (null: refused before any scope could be read). */
  scope: Scope | null = null;
  user: string | null = null;
  requestedModel: string | null = null;
  servedModel: string | null = null;
  /** Why `servedModel` served (`Trace.routeReason`), set once the call is routed. */
  routeReason: string | null = null;
  /** The share of the workload's calls `servedModel` was drawn for, when drawn into a split. */
  routeShare: number | null = null;
  replica: string | null = null;
  /** Filled in by the engine pool (`ReplicaAttempt`) when it tried the call on more than one replica. */
  attempts: Array<{ replica: string; outcome: string }> | null = null;
  finishReason: string | null = null;
  promptTokens = 0;
  completionTokens = 0;
  costUsd = 0;
  /** Filled in by the engine pool (`ReplicaAttempt`). */
  engineSeconds: number | null = null;
  measuredCostUsd: number | null = null;
  ttftMs: number | null = null;
  stream = false;
  metadata: Record<string, string> | null = null;
  requestBody: string | null = null;
  replyBody: string | null = null;
  /** Answered from the response cache: no engine ran, the call cost nothing. */
  cached = false;
  /** What the cached reply's original call cost: what this one saved. */
  costSavedUsd: number | null = null;
  /** Milliseconds spent waiting on engines before the reply's head (all attempts, a guard's re-ask included): the `upstream` of `Server-Timing`. */
  upstreamMs = 0;

  constructor(
    readonly requestId: string,
    readonly key: ApiKey,
    /** `performance.now()` when the request reached the handler, before its key was checked. */
    readonly startedClock = performance.now(),
  ) {}

  /** Waits for `work`, an engine call started at `since` (a `performance.now()` taken just before it), counting the wait as upstream time, failed or not. */
  async waitUpstream<T>(since: number, work: Promise<T>): Promise<T> {
    try {
      return await work;
    } finally {
      this.upstreamMs += performance.now() - since;
    }
  }

  markFirstToken(): void {
    this.ttftMs = performance.now() - this.startedClock;
  }

  finish(httpStatus: number, error: GatewayError | null): Trace {
    const status: TraceStatus =
      error === null ? 'ok' : error.code === 'client_closed' || error.code === 'client_stalled' ? 'aborted' : 'error';
    // The last attempt ended as the call did (a stream's pool knows only that it began).
    const last = this.attempts?.[this.attempts.length - 1];
    if (last !== undefined) last.outcome = error?.code ?? 'ok';
    return {
      requestId: this.requestId,
      accountId: this.key.accountId,
      keyId: this.key.id,
      environment: this.key.environment,
      project: this.scope === null ? null : this.scope.project,
      workload: this.scope === null ? null : this.scope.workload,
      user: this.user,
      requestedModel: this.requestedModel,
      servedModel: this.servedModel,
      routeReason: this.routeReason,
      routeShare: this.routeShare,
      replica: this.replica,
      attempts: this.attempts,
      status,
      errorClass: error?.code ?? null,
      errorMessage: error?.message ?? null,
      httpStatus,
      finishReason: this.finishReason,
      promptTokens: this.promptTokens,
      completionTokens: this.completionTokens,
      costUsd: this.costUsd,
      engineSeconds: this.engineSeconds,
      measuredCostUsd: this.measuredCostUsd,
      latencyMs: performance.now() - this.startedClock,
      ttftMs: this.ttftMs,
      stream: this.stream,
      metadata: this.metadata,
      startedAt: this.startedAt,
      requestBody: this.requestBody,
      replyBody: this.replyBody,
      cached: this.cached,
      costSavedUsd: this.costSavedUsd,
    };
  }
}
