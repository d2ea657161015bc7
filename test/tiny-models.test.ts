/**
 * The tiny GGUF models our tests write, loaded by the real node-llama-cpp:
 * they must load, answer exactly what they were built to answer (also under
 * sampling, token limits, stop triggers, a JSON grammar and function calling),
 * and the random model must vary with the sampling seed.
 */
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  ChatMLChatWrapper,
  getLlama,
  LlamaChat,
  LlamaLogLevel,
  readGgufFileInfo,
  type ChatHistoryItem,
  type ChatModelFunctions,
  type LLamaChatGenerateResponseOptions,
  type Llama,
  type LlamaContext,
  type LlamaModel,
} from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ggufBool,
  ggufFloat32,
  ggufFloat32Array,
  ggufInt32,
  ggufInt32Array,
  ggufString,
  ggufStringArray,
  ggufUint32,
  writeGguf,
} from './helpers/gguf-writer.js';
import {
  answerPieces,
  TINY_ANSWERS,
  TINY_TOOL_CALL,
  writeAnsweringModel,
  writeLoopingModel,
  writeRandomModel,
  writeToolCallingModel,
} from './helpers/tiny-models.js';
import { temporaryDirectory } from './helpers/temporary-directory.js';

const functions = {
  get_weather: {
    description: 'The current weather in a city',
    params: { type: 'object', properties: { city: { type: 'string' } } },
  },
} as const satisfies ChatModelFunctions;

const history: ChatHistoryItem[] = [
  { type: 'system', text: 'You are terse.' },
  { type: 'user', text: 'What is the weather in Paris?' },
  { type: 'model', response: [] },
];

let directory: string;
let llama: Llama;
const openModels: Array<{ model: LlamaModel; context: LlamaContext }> = [];

beforeAll(async () => {
  directory = temporaryDirectory('taskgate-gguf-');
  llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
});

afterAll(async () => {
  for (const { context, model } of openModels) {
    await context.dispose();
    await model.dispose();
  }
  await llama?.dispose();
  rmSync(directory, { recursive: true, force: true });
});

interface LoadedModel {
  model: LlamaModel;
  context: LlamaContext;
  path: string;
}

/**
 * What node-llama-cpp resolves for every tiny model (the first test checks
 * it), given explicitly: resolving renders the Jinja template against every
 * known wrapper, about 0.4 s per `new LlamaChat` on this machine.
 */
const chatWrapper = new ChatMLChatWrapper();

let fileCount = 0;
/** Writes a model with `write` and loads it with a two-sequence context. */
async function load(write: (path: string) => number): Promise<LoadedModel> {
  const path = join(directory, `model-${fileCount++}.gguf`);
  write(path);
  const model = await llama.loadModel({ modelPath: path });
  const context = await model.createContext({
    sequences: 2,
    // Not 512: the system prompt node-llama-cpp writes for functions is about
    // a thousand tokens with a byte-level tokenizer.
    contextSize: 2048,
    // One thread, not availableParallelism(): a model this small gains nothing
    // from a second thread, and when the other core is busy (parallel test
    // files) llama.cpp's waiting threads make 200 tokens take 10 s, not 0.1 s.
    threads: 1,
  });
  openModels.push({ model, context });
  return { model, context, path };
}

/**
 * One `generateResponse` on a fresh sequence, with the tokens it used. At most
 * 100 tokens unless told, so a broken model fails fast instead of timing out.
 */
async function ask({ context }: LoadedModel, options: LLamaChatGenerateResponseOptions<typeof functions> = {}) {
  const chat = new LlamaChat({ contextSequence: context.getSequence(), chatWrapper });
  try {
    const result = await chat.generateResponse(history, { maxTokens: 100, ...options });
    return { ...result, usage: chat.sequence.tokenMeter.getState() };
  } finally {
    chat.dispose({ disposeSequence: true });
  }
}

describe('gguf writer', () => {
  it('writes every metadata type and F32 tensors that node-llama-cpp reads back', async () => {
    const path = join(directory, 'writer.gguf');
    writeGguf(path, {
      metadata: {
        'test.uint32': ggufUint32(4_000_000_000),
        'test.int32': ggufInt32(-7),
        'test.float32': ggufFloat32(0.5),
        'test.bool': ggufBool(true),
        'test.string': ggufString('café'),
        'test.strings': ggufStringArray(['a', '', 'Ġb']),
        'test.int32s': ggufInt32Array([1, -2]),
        'test.float32s': ggufFloat32Array([0.25, -1]),
      },
      tensors: [
        { name: 'first', dimensions: [3], data: Float32Array.of(1, 2, 3) },
        { name: 'second', dimensions: [2, 2], data: Float32Array.of(4, 5, 6, 7) },
      ],
    });
    const info = await readGgufFileInfo(path, { logWarnings: false });
    expect(info.version).toBe(3);
    expect(info.metadata).toMatchObject({
      general: { alignment: 32 },
      test: {
        uint32: 4_000_000_000,
        int32: -7,
        float32: 0.5,
        bool: true,
        string: 'café',
        strings: ['a', '', 'Ġb'],
        int32s: [1, -2],
        float32s: [0.25, -1],
      },
    });
    expect(
      info.tensorInfo?.map(({ name, dimensions, ggmlType, offset }) => ({ name, dimensions, ggmlType, offset: Number(offset) })),
    ).toEqual([
      { name: 'first', dimensions: [3], ggmlType: 0, offset: 0 },
      { name: 'second', dimensions: [2, 2], ggmlType: 0, offset: 32 },
    ]);
    const bytes = readFileSync(path);
    const second = info.tensorInfo?.[1];
    const secondStart = Number(second?.fileOffset);
    expect(secondStart % 32).toBe(0);
    expect([0, 1, 2, 3].map((index) => bytes.readFloatLE(secondStart + index * 4))).toEqual([4, 5, 6, 7]);
  });
});

describe('answering model', () => {
  it('is a small llama file that node-llama-cpp reads through its ChatML wrapper', async () => {
    const { model, context, path } = await load((modelPath) => writeAnsweringModel(modelPath, TINY_ANSWERS.plain));
    expect(statSync(path).size).toBeLessThan(1_000_000);
    expect(model.fileInfo.metadata.general.architecture).toBe('llama');
    expect(model.tokens.eosString).toBe('<|im_end|>');
    // What `new LlamaChat` picks when not told: `||call: name(params)` is the function-call syntax.
    const chat = new LlamaChat({ contextSequence: context.getSequence() });
    expect(chat.chatWrapper).toBeInstanceOf(ChatMLChatWrapper);
    chat.dispose({ disposeSequence: true });
  });

  it('answers its text exactly, greedily and with temperature sampling', async () => {
    const tiny = await load((path) => writeAnsweringModel(path, TINY_ANSWERS.plain));
    const greedy = await ask(tiny);
    expect(greedy.response).toBe(TINY_ANSWERS.plain);
    expect(greedy.metadata.stopReason).toBe('eogToken');
    const sampled = await ask(tiny, { temperature: 1.5, seed: 7 });
    expect(sampled.response).toBe(TINY_ANSWERS.plain);
  });

  it('keeps newlines, quotes, non-ASCII text and a trailing space', async () => {
    const tiny = await load((path) => writeAnsweringModel(path, TINY_ANSWERS.tricky));
    expect((await ask(tiny, { temperature: 0.8, seed: 1 })).response).toBe(TINY_ANSWERS.tricky);
  });

  it('follows a repeated word without looping', async () => {
    const answer = 'ha ha ha ha';
    expect(answerPieces(answer)).toEqual(['ha', ' ha', ' ha ha']);
    const tiny = await load((path) => writeAnsweringModel(path, answer));
    expect((await ask(tiny)).response).toBe(answer);
  });

  it('rejects pieces that would give a token two successors', () => {
    expect(() => answerPieces({ pieces: ['"', 'a', '"'] })).toThrow(/unique/);
    expect(() => answerPieces({ pieces: ['\n', 'a'] })).toThrow(/unique/);
  });

  it('uses one token per prompt byte and one per answer piece, plus the end token', async () => {
    const tiny = await load((path) => writeAnsweringModel(path, TINY_ANSWERS.plain));
    const { usage } = await ask(tiny);
    const prompt =
      '<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nWhat is the weather in Paris?<|im_end|>\n<|im_start|>assistant\n';
    expect(usage.usedInputTokens).toBe(tiny.model.tokenize(prompt, true).length);
    expect(usage.usedOutputTokens).toBe(answerPieces(TINY_ANSWERS.plain).length + 1);
    // The tokenizer never produces a piece: it spells the answer byte by byte.
    const answerTokens = tiny.model.tokenize(TINY_ANSWERS.plain);
    expect(answerTokens).toHaveLength(Buffer.byteLength(TINY_ANSWERS.plain));
    expect(tiny.model.detokenize(answerTokens)).toBe(TINY_ANSWERS.plain);
  });

  it('stops at maxTokens', async () => {
    const tiny = await load((path) => writeAnsweringModel(path, TINY_ANSWERS.plain));
    const result = await ask(tiny, { maxTokens: 2 });
    expect(result.response).toBe('Hello from');
    expect(result.metadata.stopReason).toBe('maxTokens');
  });

  it('stops early at a custom stop trigger', async () => {
    const tiny = await load((path) => writeAnsweringModel(path, TINY_ANSWERS.plain));
    const result = await ask(tiny, { customStopTriggers: ['task'] });
    expect(result.response).toBe('Hello from ');
    expect(result.metadata.stopReason).toBe('customStopTrigger');
  });

  it('answers JSON that passes a JSON-schema grammar and the generic JSON grammar', async () => {
    const tiny = await load((path) => writeAnsweringModel(path, TINY_ANSWERS.json));
    const grammar = await llama.createGrammarForJsonSchema({
      type: 'object',
      properties: { city: { type: 'string' }, temperature: { type: 'number' } },
    });
    const result = await ask(tiny, { grammar });
    expect(result.response).toBe(TINY_ANSWERS.json);
    expect(grammar.parse(result.response)).toEqual({ city: 'Paris', temperature: 21 });
    const jsonResult = await ask(tiny, { grammar: await llama.getGrammarFor('json'), temperature: 0.8, seed: 2 });
    expect(JSON.parse(jsonResult.response)).toEqual({ city: 'Paris', temperature: 21 });
  });
});

describe('looping model', () => {
  it('repeats its pieces until the token limit', async () => {
    const tiny = await load((path) => writeLoopingModel(path, ['tick', ' tock']));
    const result = await ask(tiny, { maxTokens: 5, temperature: 0.8, seed: 4 });
    expect(result.response).toBe('tick tocktick tocktick');
    expect(result.metadata.stopReason).toBe('maxTokens');
  });
});

describe('tool-calling model', () => {
  it('calls the function it is offered', async () => {
    const tiny = await load((path) => writeToolCallingModel(path, TINY_TOOL_CALL));
    const result = await ask(tiny, { functions, temperature: 0.8, seed: 3 });
    expect(result.metadata.stopReason).toBe('functionCalls');
    expect(result.response).toBe('');
    expect(result.functionCalls?.map(({ functionName, params }) => ({ functionName, params }))).toEqual([
      { functionName: 'get_weather', params: { city: 'Paris' } },
    ]);
  });

  it('answers the call as plain text when no functions are offered', async () => {
    const tiny = await load((path) => writeToolCallingModel(path, TINY_TOOL_CALL));
    expect((await ask(tiny)).response).toBe('||call: get_weather({"city":"Paris"})');
  });
});

describe('random model', () => {
  const sample = async (tiny: LoadedModel, seed: number) => (await ask(tiny, { temperature: 0.8, seed, maxTokens: 40 })).response;

  it('writes printable text that follows the sampling seed', async () => {
    const tiny = await load((path) => writeRandomModel(path, 1));
    const first = await sample(tiny, 11);
    expect(first.length).toBeGreaterThan(5);
    expect(first).toMatch(/^[\x20-\x7e]+$/);
    expect(await sample(tiny, 11)).toBe(first);
    expect(await sample(tiny, 12)).not.toBe(first);
  });

  it('has different weights for a different seed', async () => {
    const one = await load((path) => writeRandomModel(path, 1));
    const two = await load((path) => writeRandomModel(path, 2));
    expect(await sample(two, 11)).not.toBe(await sample(one, 11));
  });
});
