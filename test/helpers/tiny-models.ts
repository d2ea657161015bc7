/**
 * Tiny llama-architecture GGUF models for tests, written on the spot because
 * no weights can be downloaded: each file is about half a megabyte, loads in
 * milliseconds and generates hundreds of tokens a second on one CPU thread.
 *
 *   writeAnsweringModel(path, TINY_ANSWERS.plain);        // always answers "Hello from taskgate."
 *   writeAnsweringModel(path, { pieces: ['{"a"', ':', '1}'] });
 *   writeToolCallingModel(path, { name: 'get_weather', arguments: { city: 'Paris' } });
 *   writeLoopingModel(path, ['tick', ' tock']);           // "tick tocktick tock…" until stopped
 *   writeRandomModel(path, 7);                            // printable gibberish that varies with the sampling seed
 *
 * Every model shares one shape (2 layers, 64 wide, 4 heads; the looping and
 * random models take a bigger one for benchmarks), a byte-level
 * `gpt2` tokenizer (the 256 GPT-2 byte tokens and no merges, so text is
 * tokenized one UTF-8 byte per token) with `<|endoftext|>`, `<|im_start|>` and
 * `<|im_end|>` as control tokens, and a Qwen-style ChatML chat template, for
 * which node-llama-cpp resolves its `ChatMLChatWrapper`. Byte-level prompts
 * are long: offering functions adds a system prompt of about a thousand tokens.
 *
 * How an answering model answers whatever it is asked: the attention and
 * feed-forward outputs are zero, so the last position's hidden state is just
 * its token's embedding, and the next token depends on the last token alone.
 * The chain "\n" → piece 1 → … → piece n → `<|im_end|>` gets one embedding
 * direction per link and an `output` matrix that gives the successor a logit
 * 48 above every other token: greedy and temperature sampling both follow it.
 * The chain starts at "\n" because a ChatML prompt ends with
 * `<|im_start|>assistant\n`. A piece longer than one byte is a vocabulary
 * token of its own, which the tokenizer (having no merges) never produces, so
 * prompts are still spelt byte by byte; a one-byte piece uses the byte's token.
 * As a token has one successor and llama.cpp refuses two tokens with the same
 * text, pieces must differ from each other and from "\n".
 */
import {
  ggufBool,
  ggufFloat32,
  ggufInt32Array,
  ggufString,
  ggufStringArray,
  ggufUint32,
  writeGguf,
  type GgufTensor,
  type GgufValue,
} from './gguf-writer.js';
import { seededRandom } from './seeded-random.js';

/**
 * The size of a model: hidden width, layers, attention heads (they must divide
 * the width), feed-forward width, and the context it claims to be trained on.
 */
export interface TinyModelShape {
  readonly embeddingLength: number;
  readonly blockCount: number;
  readonly headCount: number;
  readonly feedForwardLength: number;
  readonly contextLength: number;
}

/** The shape every tiny model shares; small enough that a file stays under 1 MB. */
export const TINY_MODEL_SHAPE: TinyModelShape = {
  embeddingLength: 64,
  blockCount: 2,
  headCount: 4,
  feedForwardLength: 128,
  contextLength: 65_536,
};

/** The ChatML template of Qwen models, without the tools part. */
const CHATML_TEMPLATE =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/** Ready-made answers, each exactly what the model built from it generates. */
export const TINY_ANSWERS = {
  plain: 'Hello from taskgate.',
  /** Valid under a JSON-schema grammar for `{ city: string, temperature: number }`. */
  json: '{"city": "Paris", "temperature": 21}',
  /** Repeated characters, a newline, a space at the end and non-ASCII text. */
  tricky: 'Line one: "quoted".\nLine two: café ☕ ',
} as const;

/** A ready-made call for `writeToolCallingModel`; fits a `get_weather` tool whose parameters are `{ city: string }`. */
export const TINY_TOOL_CALL: TinyToolCall = { name: 'get_weather', arguments: { city: 'Paris' } };

/**
 * An answer: a text, which `answerPieces` splits into tokens, or the exact
 * pieces, one generated token each. No two pieces may be equal, nor a piece
 * "\n" (the token that starts every answer), so that no token has two
 * successors.
 */
export type TinyAnswer = string | { readonly pieces: readonly string[] };

/**
 * The pieces `writeAnsweringModel` generates for an answer, one per token
 * (without `<|im_end|>`). A text is split into words with their leading
 * whitespace; a word seen before is glued to the next one, so pieces stay unique.
 */
export function answerPieces(answer: TinyAnswer): string[] {
  const pieces = typeof answer === 'string' ? splitIntoUniquePieces(answer) : [...answer.pieces];
  const seen = new Set([CHAIN_START]);
  for (const piece of pieces) {
    if (piece === '' || seen.has(piece))
      throw new Error(`answer pieces must be non-empty, unique and not "\\n"; got ${JSON.stringify(piece)}`);
    seen.add(piece);
  }
  if (pieces.length === 0) throw new Error('an answer needs at least one piece');
  return pieces;
}

function splitIntoUniquePieces(text: string): string[] {
  const pieces: string[] = [];
  const seen = new Set([CHAIN_START]);
  let pending = '';
  for (const word of text.match(/\s*\S+|\s+/g) ?? []) {
    pending += word;
    if (seen.has(pending)) continue;
    seen.add(pending);
    pieces.push(pending);
    pending = '';
  }
  // A repeated last word goes onto the piece before it.
  if (pending !== '' && pieces.length > 0) pieces.push(`${pieces.pop()!}${pending}`);
  return pieces;
}

/** A model that answers `answer`, then `<|im_end|>`, whatever the prompt. Returns the file size in bytes. */
export function writeAnsweringModel(path: string, answer: TinyAnswer): number {
  return writeChainModel(path, 'taskgate tiny answering model', answerPieces(answer), 'end', TINY_MODEL_SHAPE);
}

/**
 * A model that never ends by itself: it answers the pieces over and over
 * (`['tick', ' tock']`: "tick tocktick tock…") until a token limit, a stop
 * trigger or an abort. For cancellation and queueing tests, and for
 * benchmarks: every call generates exactly its token limit. A bigger `shape`
 * costs the compute of a real model of that size (the layers' weights are
 * zero, but llama.cpp multiplies them all the same).
 */
export function writeLoopingModel(path: string, pieces: readonly string[], shape: TinyModelShape = TINY_MODEL_SHAPE): number {
  return writeChainModel(path, 'taskgate tiny looping model', answerPieces({ pieces }), 'loop', shape);
}

/** "\n" → pieces…, then `<|im_end|>` or back to the first piece. */
function writeChainModel(path: string, name: string, pieces: readonly string[], after: 'end' | 'loop', shape: TinyModelShape): number {
  const vocabulary = buildVocabulary(pieces);
  const chain = [CHAIN_START, ...pieces].map((piece) => vocabulary.idOf(piece));
  const successors = [...chain.slice(1), after === 'end' ? vocabulary.imEndId : chain[1]!];
  // Every link owns a ±axis direction: 64 axes (in the tiny shape), two signs, so up to 128 links.
  const width = shape.embeddingLength;
  if (chain.length > 2 * width) throw new Error(`a chain has at most ${2 * width - 1} pieces, got ${pieces.length}`);

  const embeddings = new Float32Array(width * vocabulary.tokens.length);
  const output = new Float32Array(width * vocabulary.tokens.length);
  chain.forEach((token, link) => {
    const axis = link % width;
    const sign = link < width ? 1 : -1;
    embeddings[token * width + axis] = sign;
    // RMS norm turns ±1 on one axis into ±√width (8 in the tiny shape), so the successor's logit is 8 × 6 = 48;
    // the successor of the link with the same axis and the other sign gets -48.
    output[successors[link]! * width + axis] = sign * 6;
  });
  return writeTinyModel(path, name, vocabulary, { embeddings, output, layerWeight: () => 0 }, shape);
}

/** A function call in OpenAI terms: the tool's name and its arguments object. */
export interface TinyToolCall {
  readonly name: string;
  readonly arguments: Readonly<Record<string, unknown>>;
}

/**
 * The pieces of a function call as node-llama-cpp's `ChatMLChatWrapper` (the
 * wrapper it resolves for these models) parses it: `||call: name(arguments)`.
 * "(" and ")" must be tokens of their own: node-llama-cpp closes the name and
 * the arguments on them, and a token that runs past either breaks the call.
 */
function toolCallPieces(call: TinyToolCall): string[] {
  return ['||call: ', call.name, '(', JSON.stringify(call.arguments), ')'];
}

/**
 * A model that calls `call` whenever node-llama-cpp offers it functions
 * (without functions, it answers the call's text as plain content). The call
 * must pass node-llama-cpp's grammar for the offered functions: a known name,
 * and arguments with every property of the schema, in the schema's order.
 * Otherwise the grammar masks the chain and generation runs to the token limit.
 */
export function writeToolCallingModel(path: string, call: TinyToolCall): number {
  return writeAnsweringModel(path, { pieces: toolCallPieces(call) });
}

/**
 * A model with seeded pseudo-random weights that writes printable ASCII:
 * sampling with a temperature gives varied text, the same sampling seed the
 * same text. `<|im_end|>` is as likely as any printable character, so an
 * answer ends after about a hundred tokens: tests should set a token limit.
 */
export function writeRandomModel(path: string, seed: number, shape: TinyModelShape = TINY_MODEL_SHAPE): number {
  const random = seededRandom(seed);
  const uniform = (scale: number) => (random() * 2 - 1) * scale;
  const vocabulary = buildVocabulary([]);
  const width = shape.embeddingLength;

  // Axis 0 of every embedding is a large constant that stays large after the
  // final RMS norm, so `output`'s column 0 acts as a per-token bias: about -20
  // for control tokens and bytes outside printable ASCII. The small layer
  // weights keep the hidden state from collapsing onto a few favourite tokens.
  const embeddings = Float32Array.from({ length: width * vocabulary.tokens.length }, (_, index) =>
    index % width === 0 ? 4 : uniform(0.5),
  );
  const output = Float32Array.from({ length: width * vocabulary.tokens.length }, () => uniform(0.2));
  vocabulary.tokens.forEach((_, token) => {
    const printable = token >= 0x20 && token <= 0x7e; // byte tokens have the byte's id
    output[token * width] = printable || token === vocabulary.imEndId ? 0 : -3;
  });
  return writeTinyModel(
    path,
    `taskgate tiny random model ${seed}`,
    vocabulary,
    {
      embeddings,
      output,
      layerWeight: () => uniform(0.05),
    },
    shape,
  );
}

// ---------------------------------------------------------------------------

/** The token every answer follows: a ChatML prompt ends with `<|im_start|>assistant\n`. */
const CHAIN_START = '\n';

interface Vocabulary {
  /** Vocabulary strings in GPT-2's byte-to-unicode form, all different (llama.cpp asserts it). */
  readonly tokens: string[];
  /** llama.cpp token types: 1 normal, 3 control. */
  readonly tokenTypes: number[];
  readonly endOfTextId: number;
  readonly imEndId: number;
  /** The token of a one-byte text or of an extra piece. */
  idOf(text: string): number;
}

/**
 * Token ids 0-255 are the bytes, 256-258 the control tokens, then one token
 * for each extra piece longer than a byte (one-byte pieces use the byte's).
 */
function buildVocabulary(extraPieces: readonly string[]): Vocabulary {
  const tokens = [...BYTE_TO_UNICODE, '<|endoftext|>', '<|im_start|>', '<|im_end|>'];
  const tokenTypes = tokens.map((_, id) => (id < 256 ? 1 : 3));
  const idByText = new Map(tokens.map((token, id) => [token, id]));
  for (const piece of extraPieces) {
    const encoded = encodeTokenText(piece);
    if (idByText.has(encoded)) {
      if (encoded.length > 1) throw new Error(`the piece ${JSON.stringify(piece)} spells a control token`);
      continue;
    }
    idByText.set(encoded, tokens.push(encoded) - 1);
    tokenTypes.push(1);
  }
  const idOf = (text: string): number => {
    const id = idByText.get(encodeTokenText(text));
    if (id === undefined) throw new Error(`no token for ${JSON.stringify(text)}`);
    return id;
  };
  return { tokens, tokenTypes, endOfTextId: 256, imEndId: 258, idOf };
}

/**
 * GPT-2's byte-to-unicode table: printable Latin-1 bytes stand for
 * themselves, the others are moved to U+0100 and up (space is 'Ġ', "\n" 'Ċ').
 */
const BYTE_TO_UNICODE: readonly string[] = (() => {
  const isPrintable = (byte: number) => (byte >= 0x21 && byte <= 0x7e) || (byte >= 0xa1 && byte <= 0xac) || (byte >= 0xae && byte <= 0xff);
  let moved = 0;
  return Array.from({ length: 256 }, (_, byte) => String.fromCodePoint(isPrintable(byte) ? byte : 256 + moved++));
})();

/** A text as a byte-level vocabulary string: its UTF-8 bytes through `BYTE_TO_UNICODE`. */
function encodeTokenText(text: string): string {
  return Array.from(new TextEncoder().encode(text), (byte) => BYTE_TO_UNICODE[byte]!).join('');
}

interface Weights {
  /** `token_embd`, one row of `embeddingLength` values per token. */
  readonly embeddings: Float32Array;
  /** `output`, one row per token: a token's logit is its row · the normalized hidden state. */
  readonly output: Float32Array;
  /** Each value of the attention and feed-forward matrices, in file order. */
  readonly layerWeight: () => number;
}

function writeTinyModel(path: string, name: string, vocabulary: Vocabulary, weights: Weights, shape: TinyModelShape): number {
  const { embeddingLength: width, blockCount, headCount, feedForwardLength, contextLength } = shape;
  if (width % headCount !== 0) throw new Error(`the head count (${headCount}) must divide the width (${width})`);
  const vocabularySize = vocabulary.tokens.length;
  const ones = (length: number) => new Float32Array(length).fill(1);
  const matrix = (inputs: number, outputs: number) => Float32Array.from({ length: inputs * outputs }, weights.layerWeight);

  const tensors: GgufTensor[] = [
    { name: 'token_embd.weight', dimensions: [width, vocabularySize], data: weights.embeddings },
    { name: 'output_norm.weight', dimensions: [width], data: ones(width) },
    { name: 'output.weight', dimensions: [width, vocabularySize], data: weights.output },
  ];
  for (let block = 0; block < blockCount; block++) {
    const layer = (suffix: string, dimensions: number[], data: Float32Array): GgufTensor => ({
      name: `blk.${block}.${suffix}.weight`,
      dimensions,
      data,
    });
    tensors.push(
      layer('attn_norm', [width], ones(width)),
      layer('attn_q', [width, width], matrix(width, width)),
      layer('attn_k', [width, width], matrix(width, width)),
      layer('attn_v', [width, width], matrix(width, width)),
      layer('attn_output', [width, width], matrix(width, width)),
      layer('ffn_norm', [width], ones(width)),
      layer('ffn_gate', [width, feedForwardLength], matrix(width, feedForwardLength)),
      layer('ffn_up', [width, feedForwardLength], matrix(width, feedForwardLength)),
      layer('ffn_down', [feedForwardLength, width], matrix(feedForwardLength, width)),
    );
  }

  const metadata: Record<string, GgufValue> = {
    'general.architecture': ggufString('llama'),
    'general.name': ggufString(name),
    'general.file_type': ggufUint32(0), // all F32
    'llama.context_length': ggufUint32(contextLength),
    'llama.embedding_length': ggufUint32(width),
    'llama.block_count': ggufUint32(blockCount),
    'llama.feed_forward_length': ggufUint32(feedForwardLength),
    'llama.attention.head_count': ggufUint32(headCount),
    'llama.attention.head_count_kv': ggufUint32(headCount),
    'llama.attention.layer_norm_rms_epsilon': ggufFloat32(1e-6),
    'llama.rope.dimension_count': ggufUint32(width / headCount),
    'llama.rope.freq_base': ggufFloat32(10_000),
    'llama.vocab_size': ggufUint32(vocabularySize),
    'tokenizer.ggml.model': ggufString('gpt2'),
    'tokenizer.ggml.pre': ggufString('default'),
    'tokenizer.ggml.tokens': ggufStringArray(vocabulary.tokens),
    'tokenizer.ggml.token_type': ggufInt32Array(vocabulary.tokenTypes),
    'tokenizer.ggml.merges': ggufStringArray([]),
    'tokenizer.ggml.bos_token_id': ggufUint32(vocabulary.endOfTextId),
    'tokenizer.ggml.eos_token_id': ggufUint32(vocabulary.imEndId),
    'tokenizer.ggml.eot_token_id': ggufUint32(vocabulary.imEndId),
    'tokenizer.ggml.padding_token_id': ggufUint32(vocabulary.endOfTextId),
    'tokenizer.ggml.add_bos_token': ggufBool(false),
    'tokenizer.chat_template': ggufString(CHATML_TEMPLATE),
  };
  return writeGguf(path, { metadata, tensors });
}
