/**
 * `POST /v1/chat/completions`, the hot path: admit (key, rate) -> read and
 * validate -> scope -> model -> engine pool -> reply -> one trace. A routed
 * model's whole reply passes the per-call guard first (`reply-guard.ts`).
 * Nothing here waits for the store but a scope's first call; the trace is
 * enqueued, never awaited.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { AssistantMessage, ChatCompletion, ChatCompletionRequest, GenerationParameters, Usage } from '../api/chat-types.js';
import { asGatewayError, ClientAbortError, ClientStalledError, EngineUnavailableError, type GatewayError } from '../api/errors.js';
import { parseJsonObject } from '../api/parse-json-body.js';
import { isValidWorkloadName, resolveScope, SCOPE_PROJECT_HEADER, SCOPE_WORKLOAD_HEADER, scopeOf } from '../api/scope.js';
import { validateChatRequest } from '../api/validate-chat-request.js';
import { replyChoices } from '../api/chat-reply.js';
import { canTakeContent, checkModelTakesContent } from '../api/content-capabilities.js';
import { costOf, type Catalog, type CatalogModel } from '../catalog/catalog.js';
import type { ModelPool } from '../engines/engine-pool.js';
import type { RouteTable } from '../routing/route-table.js';
import type { RouterWorker } from '../routing/router-worker.js';
import { drawRoute, routeReason } from '../routing/route-reason.js';
import type { CallSpan, Telemetry } from '../telemetry/telemetry.js';
import type { Metrics } from '../tracking/metrics.js';
import type { MeasuredPrices } from '../tracking/measured-prices.js';
import type { Retention } from '../tracking/retention.js';
import { errorFields, type Logger } from '../log/logger.js';
import type { TraceWriter } from '../store/trace-writer.js';
import { engineReply, noUsage, type CallReply } from './call-reply.js';
import { CallTrace } from './call-trace.js';
import { createConnectionSignals } from '../fast-path/connection-signals.js';
import type { CallGate } from './call-gate.js';
import { headerScope, setScopeHeaders } from './header-scope.js';
import { sendError, sendJsonText } from './http-response.js';
import { readJsonBody } from './read-body.js';
import { createReplyGuard } from './reply-guard.js';
import { resolveModel, servedModelFor } from './resolve-model.js';
import { serverTiming } from './server-timing.js';
import type { ScopeRegistry } from './scope-registry.js';
import { SsePings } from './sse-pings.js';
import { SseWriter } from './sse-writer.js';
import { StreamRecorder } from '../engines/stream-recorder.js';

export interface ChatCompletionsDependencies {
  gate: CallGate;
  catalog: Catalog;
  /** Which model serves each workload's requested model (the router's choice or a pin). */
  routes: RouteTable;
  /** Takes a sample of successful production calls for shadow replay. */
  router: RouterWorker;
  /** Counts every finished call for `/metrics`. */
  metrics: Metrics;
  /** Learns each model's measured cost per token from finished calls (for `routing.cost: measured`). */
  measuredPrices: MeasuredPrices;
  /** Which calls keep their bodies (per project). */
  retention: Retention;
  pools: ReadonlyMap<string, ModelPool>;
  scopes: ScopeRegistry;
  traces: TraceWriter;
  logger: Logger;
  maxBodyBytes: number;
  /** How long a body may take to arrive (`server.request_timeout_ms`). */
  bodyTimeoutMs: number;
  keepBodies: boolean;
  pingIntervalMs: number;
  /** A streaming client that reads nothing for this long is disconnected (`server.stream_stall_timeout_ms`). */
  stallTimeoutMs: number;
  /** A span per call, with children per engine call (no-ops when OpenTelemetry export is off). */
  telemetry: Telemetry;
}

/** Read once: `performance.timeOrigin` is a call into Node's bindings each time (not measured yet: docs/benchmarks.md). */
const timeOrigin = performance.timeOrigin;

export function createChatCompletionsHandler(dependencies: ChatCompletionsDependencies) {
  const { gate, catalog, routes, router, pools, scopes, traces, metrics, retention, logger, keepBodies, telemetry } = dependencies;
  const connections = createConnectionSignals();
  const pings = new SsePings(dependencies.pingIntervalMs);
  const guard = createReplyGuard({ catalog, routes, router, pools });

  /** Offers a finished production call to the router's sampler (it decides; nothing waits). */
  function offerSample(reply: CallReply, message: AssistantMessage | null | undefined, usage: Usage | null): void {
    if (message == null || usage === null) return;
    router.offer(
      {
        scope: reply.scope,
        environment: reply.call.key.environment,
        requestedModel: reply.requested.id,
        servedModel: reply.model.id,
        latencyMs: performance.now() - reply.call.startedClock,
        ttftMs: reply.call.ttftMs,
        stream: reply.chat.stream,
        parameters: reply.parameters,
        reply: message,
        usage,
      },
      () => reply.span.origin(reply.call.requestId),
    );
  }

  async function serve(
    call: CallTrace,
    span: CallSpan,
    request: IncomingMessage,
    response: ServerResponse,
    headers: OutgoingHttpHeaders,
    signal: AbortSignal,
  ): Promise<void> {
    const reading = readJsonBody(request, { maxBytes: dependencies.maxBodyBytes, timeoutMs: dependencies.bodyTimeoutMs });
    const text = typeof reading === 'string' ? reading : await reading;
    if (keepBodies) call.requestBody = text;
    const body = parseJsonObject(text);

    // The scope is settled before the rest of the body is checked, so even a
    // 400 reports the project and workload it was counted against.
    const task = typeof body.task === 'string' && isValidWorkloadName(body.task) ? body.task : undefined;
    const scope = scopeOf(
      call.key.accountId,
      resolveScope({ projectHeader: request.headers[SCOPE_PROJECT_HEADER], workloadHeader: request.headers[SCOPE_WORKLOAD_HEADER], task }),
    );
    call.scope = scope;
    setScopeHeaders(headers, scope);

    const chat = validateChatRequest(body);
    if (chat.notes !== undefined && chat.notes.ignoredFields.length > 0)
      headers['x-taskgate-ignored-fields'] = chat.notes.ignoredFields.join(', ');
    call.stream = chat.stream;
    call.requestedModel = chat.model;
    call.user = chat.user ?? null;
    call.metadata = chat.metadata ?? null;

    const requested = resolveModel(catalog, chat.model);
    checkModelTakesContent(chat.messages, requested);
    const route = routes.route(scope, requested.id);
    // The request is what a share's per-call policy reads its features from; drawRoute reads it only on a route with a policy.
    const draw = drawRoute(route, requested.id, Math.random, chat);
    const routed = servedModelFor(catalog, pools, draw.model, requested);
    // A route picked on text calls may name a model without vision: an image call stays on the model asked for.
    const model = canTakeContent(chat.messages, routed) ? routed : requested;
    const pool = pools.get(model.id);
    if (pool === undefined) throw new EngineUnavailableError(`No engine serves '${model.id}'.`);
    call.servedModel = model.id;
    const reason = routeReason(route, draw, requested.id, routed.id, model.id);
    call.routeReason = reason;
    call.routeShare = reason === 'split' || reason === 'policy' ? draw.share : null;
    if (telemetry.enabled) span.setRouteReason(reason);
    const created = scopes.ensure(scope);
    if (created !== undefined) await created;

    const reply: CallReply = {
      call,
      span,
      scope,
      requested,
      model,
      chat,
      pool,
      response,
      headers,
      signal,
      parameters: generationParameters(chat),
      id: `chatcmpl-${call.requestId.slice(4)}`,
      created: Math.floor(call.startedAt / 1000),
    };
    await (chat.stream ? streamReply(reply) : jsonReply(reply));
  }

  /**
   * Stamps `Server-Timing` on a reply about to send its head, and counts the
   * gateway's own part of it: the time since the request reached the handler,
   * less what was spent waiting on engines (`upstreamMs`).
   */
  function markHead(headers: OutgoingHttpHeaders, startedClock: number, upstreamMs: number, stream: boolean): void {
    metrics.observeGatewayOverhead(stampHead(headers, startedClock, upstreamMs) / 1000, stream);
  }

  async function jsonReply(reply: CallReply): Promise<void> {
    const { call, chat, pool, response, headers, id, created } = reply;
    const first = await engineReply(reply, reply.model, pool, false);
    const { completion, replica, model, extraCostUsd } = await guard(reply, first);
    call.replica = replica;
    const usage = completion.usage ?? noUsage;
    recordUsage(call, model, usage, completion.choices[0]?.finish_reason ?? null);
    call.costUsd += extraCostUsd;
    const body: ChatCompletion = {
      id,
      object: 'chat.completion',
      created,
      model: model.id,
      choices: replyChoices(completion.choices, chat.notes),
      usage,
    };
    if (completion.system_fingerprint != null) body.system_fingerprint = completion.system_fingerprint;
    if (chat.metadata !== undefined) body.metadata = chat.metadata;
    const text = JSON.stringify(body);
    if (keepBodies) call.replyBody = text;
    markHead(headers, call.startedClock, call.upstreamMs, false);
    sendJsonText(response, 200, text, headers);
    if (model === reply.model) offerSample(reply, completion.choices[0]?.message, completion.usage);
  }

  async function streamReply(reply: CallReply): Promise<void> {
    const { call, model, chat, parameters, pool, response, headers, signal, id, created } = reply;
    // The pool resolves at the first upstream chunk, so this wait is the time to the first upstream byte.
    // The engine's span lasts until the stream ends.
    const engine = reply.span.startEngineCall(model.id);
    // Timed here rather than through call.waitUpstream: two promises and their ticks fewer on the way to the first byte.
    const since = performance.now();
    // The engine request is sent within this call; what the reply needs is made while the engine works.
    const opening = pool.openStream(parameters, signal, call);
    const writer = new SseWriter(response, {
      id,
      created,
      model: model.id,
      metadata: chat.metadata,
      notes: chat.notes,
      includeUsage: chat.stream_options?.include_usage === true,
      pings,
      stallTimeoutMs: dependencies.stallTimeoutMs,
    });
    // The assembled reply is what the router samples, bodies kept or not.
    const recorder = new StreamRecorder(true);
    let opened: Awaited<typeof opening>;
    try {
      opened = await opening;
    } catch (error) {
      engine.end({ replica: call.replica, error });
      throw error;
    } finally {
      call.upstreamMs += performance.now() - since;
    }
    const { replica, chunks } = opened;
    call.replica = replica;
    call.markFirstToken();
    // Counted once the stream is over: the first byte waits for nothing it does not need.
    const gatewayMs = stampHead(headers, call.startedClock, call.upstreamMs);
    writer.open(headers);
    try {
      for (;;) {
        const next = await chunks.next();
        if (next.done === true) break;
        // Written before it is recorded: the client's bytes first.
        const drained = writer.writeChunks(next.value, signal);
        for (const chunk of next.value) recorder.observe(chunk);
        if (drained !== undefined) await drained;
      }
      if (signal.aborted) throw new ClientAbortError();
      writer.done();
      engine.end({ replica, usage: recorder.usage, finishReason: recorder.finishReason });
      offerSample(reply, recorder.message(), recorder.usage);
    } catch (thrown) {
      const error = writer.stalled
        ? new ClientStalledError(dependencies.stallTimeoutMs)
        : signal.aborted
          ? new ClientAbortError()
          : asGatewayError(thrown);
      engine.end({ replica, error });
      if (signal.aborted) writer.close();
      else writer.fail(error);
      throw error;
    } finally {
      // Whatever ended the loop, the upstream call and its replica slot are released now.
      void chunks.return?.();
      metrics.observeGatewayOverhead(gatewayMs / 1000, true);
      recordUsage(call, model, recorder.usage ?? noUsage, recorder.finishReason);
      if (keepBodies) call.replyBody = recorder.replyBody(id, created, model.id);
    }
  }

  return async function handleChatCompletions(
    request: IncomingMessage,
    response: ServerResponse,
    requestId: string,
    headers: OutgoingHttpHeaders,
  ): Promise<void> {
    const startedClock = performance.now();
    let call: CallTrace;
    try {
      // A key the cache knows comes back at once: no await, so no tick, on the way to the engine.
      const key = gate.authenticate(request);
      call = new CallTrace(requestId, key instanceof Promise ? await key : key, startedClock);
    } catch (thrown) {
      markHead(headers, startedClock, 0, false);
      // Echoed only: no call is counted, no project made, for a caller without a valid key.
      const scope = headerScope(request);
      if (scope !== undefined) setScopeHeaders(headers, scope);
      sendError(response, asGatewayError(thrown), headers);
      return;
    }
    // Only authenticated calls get a span: an unauthenticated flood cannot fill the export queue.
    const span = telemetry.startCall(request.headers, timeOrigin + startedClock);

    const signal = connections.of(request.socket);
    let failure: GatewayError | null = null;
    try {
      // Awaited even when the limiter answers at once: the parser hands over a
      // request's head before it reads the body that came in the same packet,
      // and after this tick the body is in, to be taken whole
      // (fast-path/buffered-body.ts; measured: docs/benchmarks.md).
      await gate.limit(call.key, headers);
      await serve(call, span, request, response, headers, signal);
    } catch (thrown) {
      failure = thrown instanceof ClientStalledError ? thrown : signal.aborted ? new ClientAbortError() : asGatewayError(thrown);
      if (failure.status >= 500)
        logger.warn('call failed', { request_id: requestId, status: failure.status, ...errorFields(failure), cause: causeOf(failure) });
      // Refused before the body could name the workload (429, 413, 415, 408, a body that is not JSON):
      // the call is counted against, and its reply names, the scope its headers give.
      if (call.scope === null) {
        const names = headerScope(request);
        if (names !== undefined) {
          call.scope = scopeOf(call.key.accountId, names);
          setScopeHeaders(headers, names);
        }
      }
      if (!signal.aborted && !response.headersSent) {
        markHead(headers, call.startedClock, call.upstreamMs, call.stream);
        sendError(response, failure, headers);
      }
    }
    const httpStatus =
      failure?.code === 'client_closed' && !response.headersSent
        ? 499
        : response.headersSent
          ? response.statusCode
          : (failure?.status ?? 200);
    const finished = call.finish(httpStatus, failure);
    span.end(finished, failure);
    // The key's token budget pays for what the call used, failed or aborted ones included.
    gate.spendTokens(call.key, finished.promptTokens + finished.completionTokens);
    const trace =
      finished.requestBody === null || retention.keepsBodies(finished.accountId, finished.project)
        ? finished
        : { ...finished, requestBody: null, replyBody: null };
    traces.enqueue(trace);
    metrics.observeCall(trace);
    dependencies.measuredPrices.observe(trace);
  };
}

/** Sets `Server-Timing` (the gateway's own time and the engines') on a reply's head; returns the gateway's milliseconds. */
function stampHead(headers: OutgoingHttpHeaders, startedClock: number, upstreamMs: number): number {
  const gatewayMs = Math.max(0, performance.now() - startedClock - upstreamMs);
  headers['server-timing'] = serverTiming(gatewayMs, upstreamMs);
  return gatewayMs;
}

function generationParameters(chat: ChatCompletionRequest): GenerationParameters {
  const {
    model: _model,
    stream: _stream,
    stream_options: _streamOptions,
    task: _task,
    metadata: _metadata,
    notes: _notes,
    ...parameters
  } = chat;
  return parameters;
}

function recordUsage(call: CallTrace, model: CatalogModel, usage: Usage, finishReason: string | null): void {
  call.promptTokens = usage.prompt_tokens;
  call.completionTokens = usage.completion_tokens;
  call.costUsd = costOf(model, usage);
  call.finishReason = finishReason;
}

function causeOf(error: Error): string | undefined {
  const cause = error.cause;
  return cause instanceof Error ? `${cause.name}: ${cause.message}` : cause === undefined ? undefined : String(cause);
}
