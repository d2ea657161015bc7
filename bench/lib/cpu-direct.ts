/**
 * The direct path: node-llama-cpp in the benchmark's own process, set up as
 * taskgate's `llama-cpp` engine sets it up (src/engines/llama-cpp/): the
 * prebuilt CPU binary with `maxThreads` = threads, one context with
 * `sequences` sequences and the same `threads`, the chat wrapper resolved once,
 * one `LlamaChat` per sequence reused from call to call, and the sampling
 * options generate-reply.ts passes for `temperature: 0` (node-llama-cpp's own
 * defaults differ: its repeat penalty is on unless told otherwise).
 *
 * What taskgate adds on top (its prompt-token count, the lease pool, the
 * chunk channel, HTTP and SSE, tracing) is what the comparison shows.
 */
import {
  getLlama,
  LlamaChat,
  LlamaLogLevel,
  resolveChatWrapper,
  type ChatHistoryItem,
  type Llama,
  type LlamaContext,
  type LlamaModel,
} from 'node-llama-cpp';
import type { BenchModel } from './cpu-models.js';
import { promptMessages } from './cpu-models.js';
import type { CallTiming, GenerationCall } from './cpu-rounds.js';

export interface DirectModel {
  /** One call on a free sequence; at most `sequences` at a time. */
  call(maxTokens: number, deadlineMs: number): GenerationCall;
  dispose(): Promise<void>;
}

export interface DirectRuntime {
  load(model: BenchModel, settings: { sequences: number; contextSize: number }): Promise<DirectModel>;
  dispose(): Promise<void>;
}

export async function startDirectRuntime(threads: number): Promise<DirectRuntime> {
  const llama: Llama = await getLlama({
    gpu: false,
    build: 'never',
    skipDownload: true,
    progressLogs: false,
    maxThreads: threads,
    logLevel: LlamaLogLevel.warn,
  });
  return {
    async load(benchModel, { sequences, contextSize }) {
      const model: LlamaModel = await llama.loadModel({ modelPath: benchModel.file });
      const context: LlamaContext = await model.createContext({
        contextSize: Math.min(contextSize, model.trainContextSize),
        sequences,
        threads,
      });
      const chatWrapper = resolveChatWrapper(model);
      const free = Array.from({ length: sequences }, () => new LlamaChat({ contextSequence: context.getSequence(), chatWrapper }));
      return {
        call: (maxTokens, deadlineMs) => async (callNumber) => {
          const chat = free.pop();
          if (chat === undefined) throw new Error('more direct calls at once than sequences');
          try {
            return await generate(chat, callNumber, maxTokens, deadlineMs);
          } finally {
            free.push(chat);
          }
        },
        async dispose() {
          await context.dispose();
          await model.dispose();
        },
      };
    },
    dispose: () => llama.dispose(),
  };
}

async function generate(chat: LlamaChat, callNumber: number, maxTokens: number, deadlineMs: number): Promise<CallTiming> {
  // As chat-history.ts turns the same messages into history (LlamaChat opens the model turn itself).
  const history = promptMessages(callNumber).map((message): ChatHistoryItem => ({ type: message.role, text: message.content }));
  const meterBefore = chat.sequence.tokenMeter.getState().usedOutputTokens;
  let first = Number.NaN;
  let last = Number.NaN;
  const started = performance.now();
  await chat.generateResponse(history, {
    signal: AbortSignal.timeout(deadlineMs),
    maxTokens,
    // What generate-reply.ts passes for a call with `temperature: 0` and no other sampling parameter.
    temperature: 0,
    topP: 0.95,
    topK: 40,
    minP: 0.05,
    repeatPenalty: false,
    onTextChunk: (text) => {
      if (text.length === 0) return;
      last = performance.now();
      if (Number.isNaN(first)) first = last;
    },
  });
  const ended = performance.now();
  return {
    firstTokenMs: first - started,
    decodeMs: last - first,
    totalMs: ended - started,
    completionTokens: chat.sequence.tokenMeter.getState().usedOutputTokens - meterBefore,
    promptTokens: null,
  };
}
