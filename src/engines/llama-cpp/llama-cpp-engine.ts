/**
 * The `llama-cpp` engine: GGUF models served in-process on the CPU through
 * node-llama-cpp, the embedded default.
 *
 * Each model the engine serves is loaded once, on its first call, and shared
 * by all calls: one context with `sequences` sequences, each a slot for one
 * call at a time. Calls beyond that wait in a bounded queue (`max_queue`);
 * past it they get a 503 with `retry-after`. A call that ends early (client
 * gone, stream closed) aborts its generation and frees its slot at once.
 *
 * A model whose file is not on disk is not an error of the engine: its calls
 * get a 503 naming the command that fetches the file, and once the file is
 * there the next call loads it, with no restart.
 */
import { existsSync } from 'node:fs';
import { LlamaChat, resolveChatWrapper, type LlamaContext, type LlamaGrammar, type LlamaModel } from 'node-llama-cpp';
import type { ChunkDelta, FinishReason } from '../../api/chat-types.js';
import { EngineError, InvalidRequestError, type GatewayError } from '../../api/errors.js';
import type { Logger } from '../../log/logger.js';
import type { Engine, EngineChunk, EngineCompletion, EngineRequest } from '../engine.js';
import { ChunkChannel } from './chunk-channel.js';
import { generateReply, type GeneratedReply, type GenerationListener, type GrammarSource } from './generate-reply.js';
import { createLeasePool, type LeasePool } from './lease-pool.js';
import type { LlamaRuntime } from './llama-runtime.js';

export interface LlamaCppModel {
  /** The name calls use: `served_by[].name`, by default the catalog id. */
  name: string;
  /** Absolute path of the GGUF file. */
  file: string;
  /** Tokens per sequence (prompt and reply); capped at what the model was trained on. */
  contextSize: number;
  /** Calls generated at once (one context sequence each). */
  sequences: number;
  /** The 503 for a call while the file is not there: how to fetch it, or how far its download is. */
  missingFile(): GatewayError;
}

export interface LlamaCppEngineOptions {
  id: string;
  runtime: LlamaRuntime;
  models: LlamaCppModel[];
  /** Calls that may wait per model for a free sequence. */
  maxQueue: number;
  logger: Logger;
}

interface LoadedModel {
  model: LlamaModel;
  context: LlamaContext;
  slots: LeasePool<LlamaChat>;
}

const grammarCacheSize = 64;

export function createLlamaCppEngine(options: LlamaCppEngineOptions): Engine {
  return new LlamaCppEngine(options);
}

class LlamaCppEngine implements Engine {
  readonly id: string;
  private readonly options: LlamaCppEngineOptions;
  private readonly models: Map<string, LlamaCppModel>;
  private readonly loading = new Map<string, Promise<LoadedModel>>();
  /** The models whose loading finished, for `occupancy()`. */
  private readonly loaded = new Map<string, LoadedModel>();
  private readonly grammars = new Map<string, Promise<LlamaGrammar>>();

  constructor(options: LlamaCppEngineOptions) {
    this.id = options.id;
    this.options = options;
    this.models = new Map(options.models.map((model) => [model.name, model]));
    const missing = options.models.filter((model) => !existsSync(model.file)).map((model) => model.name);
    options.logger.info('cpu engine configured', {
      threads: options.runtime.threads,
      models: options.models.length,
      ...(missing.length > 0
        ? {
            without_files: missing.join(', '),
            hint: 'calls to these get a 503 naming the command that fetches the file (taskgate models pull <id>)',
          }
        : {}),
    });
  }

  async complete(request: EngineRequest, signal: AbortSignal): Promise<EngineCompletion> {
    const loaded = await this.load(request.model);
    const chat = await loaded.slots.acquire(signal);
    try {
      const reply = await generateReply(chat, request, this.grammarFor, signal);
      return { choices: [{ index: 0, message: messageOf(reply), finish_reason: reply.finishReason }], usage: reply.usage };
    } finally {
      loaded.slots.release(chat);
    }
  }

  async *stream(request: EngineRequest, signal: AbortSignal): AsyncGenerator<EngineChunk[]> {
    const loaded = await this.load(request.model);
    const chat = await loaded.slots.acquire(signal);
    // Aborted when the caller's signal fires or when it stops reading early.
    const generation = new AbortController();
    const abort = () => generation.abort();
    signal.addEventListener('abort', abort, { once: true });
    const channel = new ChunkChannel<EngineChunk>();
    let roleSent = false;
    let callsStarted = 0;
    const push = (delta: ChunkDelta, finishReason: FinishReason | null = null) => {
      if (!roleSent) delta.role = 'assistant';
      roleSent = true;
      if (delta.tool_calls?.[0]?.id !== undefined) callsStarted++;
      channel.push({ choices: [{ index: 0, delta, finish_reason: finishReason }] });
    };
    const listener: GenerationListener = {
      onText: (text) => {
        if (text.length > 0) push({ content: text });
      },
      // As OpenAI streams a call: id, type and name once, in its first delta; then arguments only.
      onToolCallArguments: (index, id, name, argumentsText) =>
        push({
          tool_calls: [
            index === callsStarted
              ? { index, id, type: 'function', function: { name, arguments: argumentsText } }
              : { index, function: { arguments: argumentsText } },
          ],
        }),
    };
    const finished = generateReply(chat, request, this.grammarFor, generation.signal, listener).then(
      (reply) => {
        push({}, reply.finishReason);
        channel.push({ choices: [], usage: reply.usage });
        channel.end();
      },
      (error: unknown) => channel.fail(error),
    );
    try {
      yield* channel;
    } finally {
      generation.abort();
      signal.removeEventListener('abort', abort);
      await finished;
      loaded.slots.release(chat);
    }
  }

  occupancy(): Array<{ model: string; inFlight: number; queued: number }> {
    return [...this.loaded].map(([model, loaded]) => ({ model, inFlight: loaded.slots.inUse, queued: loaded.slots.waiting }));
  }

  async checkReady(): Promise<void> {
    await this.options.runtime.load();
  }

  unavailableReason(name: string): string | null {
    const model = this.models.get(name);
    if (model === undefined) return `the CPU engine '${this.id}' has no model '${name}'`;
    return existsSync(model.file) ? null : model.missingFile().message;
  }

  async close(): Promise<void> {
    const loaded = await Promise.allSettled(this.loading.values());
    this.loading.clear();
    this.loaded.clear();
    for (const result of loaded) {
      if (result.status !== 'fulfilled') continue;
      await result.value.context.dispose();
      await result.value.model.dispose();
    }
  }

  private load(name: string): Promise<LoadedModel> {
    const existing = this.loading.get(name);
    if (existing !== undefined) return existing;
    const model = this.models.get(name);
    if (model === undefined) return Promise.reject(new EngineError(`The CPU engine '${this.id}' has no model '${name}'.`));
    // Checked on every call until the file is there, so a pull needs no restart.
    if (!existsSync(model.file)) return Promise.reject(model.missingFile());
    const loading = this.loadModel(model).then(
      (loaded) => {
        this.loaded.set(name, loaded);
        return loaded;
      },
      (error: unknown) => {
        this.loading.delete(name);
        throw error;
      },
    );
    this.loading.set(name, loading);
    return loading;
  }

  private async loadModel(model: LlamaCppModel): Promise<LoadedModel> {
    const llama = await this.options.runtime.load();
    const started = performance.now();
    let loadedModel: LlamaModel;
    try {
      loadedModel = await llama.loadModel({ modelPath: model.file });
    } catch (error) {
      throw new EngineError(
        `The CPU engine cannot load ${model.file}: ${error instanceof Error ? error.message : String(error)}`,
        error,
        'model_load_failed',
      );
    }
    const contextSize = Math.min(model.contextSize, loadedModel.trainContextSize);
    const context = await loadedModel.createContext({ contextSize, sequences: model.sequences, threads: this.options.runtime.threads });
    // Resolving the chat template (from the GGUF metadata) takes about half a second: once per model.
    const chatWrapper = resolveChatWrapper(loadedModel);
    const chats = Array.from({ length: model.sequences }, () => new LlamaChat({ contextSequence: context.getSequence(), chatWrapper }));
    this.options.logger.info('model loaded', {
      model: model.name,
      file: model.file,
      context_size: context.contextSize,
      sequences: model.sequences,
      threads: this.options.runtime.threads,
      chat_template: chatWrapper.wrapperName,
      load_ms: Math.round(performance.now() - started),
    });
    return {
      model: loadedModel,
      context,
      slots: createLeasePool({ resources: chats, maxWaiting: this.options.maxQueue, name: model.name }),
    };
  }

  /** Grammars are compiled once per schema and kept (a few dozen at most). */
  private readonly grammarFor: GrammarSource = (schema, param) => {
    const key = schema === undefined ? '' : JSON.stringify(schema);
    const cached = this.grammars.get(key);
    if (cached !== undefined) return cached;
    const created = this.options.runtime.load().then(async (llama) => {
      try {
        return schema === undefined
          ? await llama.getGrammarFor('json')
          : await llama.createGrammarForJsonSchema(schema as Parameters<typeof llama.createGrammarForJsonSchema>[0]);
      } catch (error) {
        this.grammars.delete(key);
        throw new InvalidRequestError(
          `The CPU engine cannot turn this JSON schema into a grammar: ${error instanceof Error ? error.message : String(error)}`,
          param,
          'unsupported_schema',
          error,
        );
      }
    });
    if (this.grammars.size >= grammarCacheSize) this.grammars.delete(this.grammars.keys().next().value as string);
    this.grammars.set(key, created);
    return created;
  };
}

function messageOf(reply: GeneratedReply): EngineCompletion['choices'][number]['message'] {
  if (reply.toolCalls.length === 0) return { role: 'assistant', content: reply.text };
  return { role: 'assistant', content: reply.text.length > 0 ? reply.text : null, tool_calls: reply.toolCalls };
}
