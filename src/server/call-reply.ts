/**
 * One admitted, validated chat call on its way to an engine, and the engine
 * call of a whole reply: what the handler and the per-call guard
 * (`reply-guard.ts`) share.
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { ChatCompletionRequest, GenerationParameters, Usage } from '../api/chat-types.js';
import type { CatalogModel } from '../catalog/catalog.js';
import type { ModelPool } from '../engines/engine-pool.js';
import type { EngineCompletion } from '../engines/engine.js';
import type { Scope } from '../api/scope.js';
import type { CallSpan } from '../telemetry/telemetry.js';
import type { CallTrace } from './call-trace.js';

/** One admitted, validated call on its way to an engine. */
export interface CallReply {
  call: CallTrace;
  span: CallSpan;
  scope: Scope;
  /** The model the caller asked for (canonical). */
  requested: CatalogModel;
  /** The model that serves: the requested one, or the cheaper one the route names. */
  model: CatalogModel;
  chat: ChatCompletionRequest;
  parameters: GenerationParameters;
  pool: ModelPool;
  response: ServerResponse;
  headers: OutgoingHttpHeaders;
  signal: AbortSignal;
  /** The completion id (`chatcmpl-…`), shared with the request id. */
  id: string;
  /** Unix seconds. */
  created: number;
}

/** A whole reply and the replica that gave it. */
export interface EngineReply {
  completion: EngineCompletion;
  replica: string;
}

/** The usage of a reply whose engine reported none. */
export const noUsage: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };

/** One engine call of a whole reply: timed as the wait on engines, inside its engine span (the guard's re-ask marked). */
export async function engineReply(reply: CallReply, model: CatalogModel, pool: ModelPool, reask: boolean): Promise<EngineReply> {
  const engine = reply.span.startEngineCall(model.id, reask);
  try {
    const result = await reply.call.waitUpstream(performance.now(), pool.complete(reply.parameters, reply.signal, reply.call));
    engine.end({
      replica: result.replica,
      usage: result.completion.usage,
      finishReason: result.completion.choices[0]?.finish_reason ?? null,
    });
    return result;
  } catch (error) {
    engine.end({ replica: reply.call.replica, error });
    throw error;
  }
}
