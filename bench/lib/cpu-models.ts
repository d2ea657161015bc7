/**
 * The models the CPU benchmark runs, written on the spot by the tests' own
 * helper (no weights can be downloaded): looping models, so every call
 * generates exactly its token limit whatever it is asked.
 *
 * - tiny: the tests' shape (64 wide, 2 layers), about 0.5 MB. Its compute is
 *   negligible, so its figures are the per-token cost of everything around
 *   llama.cpp's matrix products: node-llama-cpp's JS loop, sampling, and
 *   (through taskgate) the HTTP stream.
 * - small: 512 wide, 8 layers, 8 heads, feed-forward 1536: 27 M parameters,
 *   110 MB of F32 weights, so a token costs real compute and memory traffic,
 *   like a (very) small real model; batching several calls pays off here.
 *
 * The layers' weights are zero (the loop is carried by the embeddings and the
 * output matrix), but llama.cpp multiplies every one of them all the same.
 */
import { join } from 'node:path';
import { TINY_MODEL_SHAPE, writeLoopingModel, type TinyModelShape } from '../../test/helpers/tiny-models.js';
import type { ModelName } from './cpu-options.js';

export const MODEL_SHAPES: Record<ModelName, TinyModelShape> = {
  tiny: TINY_MODEL_SHAPE,
  small: { embeddingLength: 512, blockCount: 8, headCount: 8, feedForwardLength: 1536, contextLength: 65_536 },
};

/** Two multi-byte pieces, one token each: "tick tock tick tock …". */
const LOOP_PIECES = ['tick ', 'tock '];
/** 256 byte tokens, 3 control tokens, one per piece. */
const VOCABULARY_SIZE = 256 + 3 + LOOP_PIECES.length;

export interface BenchModel {
  name: ModelName;
  /** The model id in taskgate's config. */
  id: string;
  file: string;
  fileBytes: number;
  parameters: number;
  shape: TinyModelShape;
}

export function writeBenchModel(directory: string, name: ModelName): BenchModel {
  const shape = MODEL_SHAPES[name];
  const file = join(directory, `${name}-looping.gguf`);
  const fileBytes = writeLoopingModel(file, LOOP_PIECES, shape);
  return { name, id: `bench-${name}`, file, fileBytes, parameters: parameterCount(shape), shape };
}

function parameterCount({ embeddingLength: width, blockCount, feedForwardLength }: TinyModelShape): number {
  const perBlock = 4 * width * width + 3 * width * feedForwardLength + 2 * width;
  return 2 * VOCABULARY_SIZE * width + width + blockCount * perBlock;
}

/**
 * A chat call of about 300 tokens (the tokenizer is byte-level). The number
 * at the very start makes every prompt differ from the one before it on the
 * same sequence, so llama.cpp cannot reuse the previous call's KV cache and
 * every call evaluates its whole prompt, as a real workload would.
 */
export function promptMessages(callNumber: number): Array<{ role: 'system' | 'user'; content: string }> {
  return [
    {
      role: 'system',
      content: `Call ${callNumber}. You are the support assistant of an online hardware shop. Answer in two or three short sentences, in a friendly and factual tone.`,
    },
    {
      role: 'user',
      content:
        'My USB-C dock has not arrived and the tracking page has not changed for three days. Will it still arrive this week, or should I cancel?',
    },
  ];
}
