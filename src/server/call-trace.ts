/**
 * What one inference call has learnt about itself, filled in as it goes and
 * turned into exactly one trace when it ends, however it ends.
 */
import { performance } from 'node:perf_hooks';
import type { GatewayError } from '../api/errors.js';
import type { ApiKey, Trace, TraceStatus } from '../store/store.js';

export class CallTrace {
  readonly startedAt = Date.now();
  readonly startedClock = performance.now();
  project: string | null = null;
  workload: string | null = null;
  user: string | null = null;
  requestedModel: string | null = null;
  servedModel: string | null = null;
  replica: string | null = null;
  finishReason: string | null = null;
  promptTokens = 0;
  completionTokens = 0;
  costUsd = 0;
  ttftMs: number | null = null;
  stream = false;
  metadata: Record<string, string> | null = null;
  requestBody: string | null = null;
  replyBody: string | null = null;

  constructor(
    readonly requestId: string,
    readonly key: ApiKey,
  ) {}

  markFirstToken(): void {
    this.ttftMs = performance.now() - this.startedClock;
  }

  finish(httpStatus: number, error: GatewayError | null): Trace {
    const status: TraceStatus = error === null ? 'ok' : error.code === 'client_closed' ? 'aborted' : 'error';
    return {
      requestId: this.requestId,
      accountId: this.key.accountId,
      keyId: this.key.id,
      environment: this.key.environment,
      project: this.project,
      workload: this.workload,
      user: this.user,
      requestedModel: this.requestedModel,
      servedModel: this.servedModel,
      replica: this.replica,
      status,
      errorClass: error?.code ?? null,
      errorMessage: error?.message ?? null,
      httpStatus,
      finishReason: this.finishReason,
      promptTokens: this.promptTokens,
      completionTokens: this.completionTokens,
      costUsd: this.costUsd,
      latencyMs: performance.now() - this.startedClock,
      ttftMs: this.ttftMs,
      stream: this.stream,
      metadata: this.metadata,
      startedAt: this.startedAt,
      requestBody: this.requestBody,
      replyBody: this.replyBody,
    };
  }
}
