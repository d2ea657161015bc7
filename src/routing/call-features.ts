/**
 * A request's features for per-call routing (issue 37 item 3): a sparse
 * vector of fixed dimension, built by hashing ("the hashing trick"), so the
 * model that reads it (call-policy.ts) needs no vocabulary and no downloaded
 * weights, and its weights are one array of `dimension` numbers.
 *
 * What is hashed, each in its own namespace (a word and a tool name of the
 * same text hash apart):
 * - the lower-cased words of the user messages (ASCII letters and digits,
 *   and any other letter outside the punctuation blocks; a CJK, kana or
 *   Hangul character is a word on its own), the last user message at weight
 *   1, earlier ones at `earlierUserWeight`; optionally word bigrams (off by
 *   default: on RouteLLM's data they did not help, and cost a third more);
 *   a word that repeats adds up (term frequency), and the words together
 *   are scaled to about unit length, so a long prompt does not outweigh the
 *   features below (each of those has the value `OTHER_FEATURE_VALUE`);
 * - the length of the user messages, as a bucket of log2(characters);
 * - the number of messages, tools offered (a bucket) and each tool's name,
 *   tool_choice, the response_format type (and json_schema name), the kinds
 *   of non-text content parts;
 * - `user` and each `metadata` key=value.
 * Not hashed: system and developer messages (within a workload mostly one
 * template; long, so costly on every call) and assistant or tool turns.
 *
 * Cost: one pass over the characters, no allocation per word (each word's
 * hash is built as it is read: FNV-1a over UTF-16 code units, finished by a
 * murmur3 mix so the low bits, taken as the index, are uniform). A message
 * longer than `maxCharacters` is read at its head and tail only.
 */
import type { ChatMessage, GenerationParameters } from '../api/chat-types.js';

/** What the features are read from: the engine's parameters, and the request's metadata. */
export type CallRequest = Pick<GenerationParameters, 'messages'> &
  Partial<Pick<GenerationParameters, 'tools' | 'tool_choice' | 'response_format' | 'user'>> & { metadata?: Record<string, string> };

/** A sparse vector: `values[k]` at `indices[k]`. An index may repeat; the vector is the sum. */
export interface CallFeatures {
  dimension: number;
  indices: number[];
  values: number[];
}

export interface FeatureOptions {
  /** A power of two; the model's weights have this length. */
  dimension?: number;
  bigrams?: boolean;
  /** Weight of the words of user messages before the last one (the last has 1). */
  earlierUserWeight?: number;
  /** Characters read of one message at most (half at its head, half at its tail). */
  maxCharacters?: number;
}

export const DEFAULT_FEATURE_DIMENSION = 2 ** 12;
const DEFAULTS: Required<FeatureOptions> = {
  dimension: DEFAULT_FEATURE_DIMENSION,
  bigrams: false,
  earlierUserWeight: 0.5,
  maxCharacters: 8_192,
};

/**
 * The value of every feature but the words. Most are the same on every call
 * of a workload, so they act as extra biases: at 1, five of them moved the
 * logit five times as far as the bias on every training step, and the
 * model's predictions swung from sample to sample (and did no better on
 * RouteLLM's data).
 */
const OTHER_FEATURE_VALUE = 0.25;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** Namespaces: the first code unit hashed, so equal text in two namespaces hashes apart. */
const enum Space {
  Word = 1,
  Bigram,
  Length,
  Turns,
  ToolCount,
  Tool,
  ToolChoice,
  Format,
  Schema,
  Part,
  User,
  Metadata,
}

export function callFeatures(request: CallRequest, options: FeatureOptions = {}): CallFeatures {
  const settings = { ...DEFAULTS, ...options };
  const { dimension } = settings;
  if (!(Number.isInteger(Math.log2(dimension)) && dimension >= 2))
    throw new RangeError(`dimension must be a power of two, got ${dimension}`);
  const mask = dimension - 1;
  const features: CallFeatures = { dimension, indices: [], values: [] };

  const users = request.messages.filter((message) => message.role === 'user');
  let squares = 0;
  let characters = 0;
  users.forEach((message, position) => {
    const weight = position === users.length - 1 ? 1 : settings.earlierUserWeight;
    for (const text of texts(message)) {
      characters += text.length;
      if (weight <= 0) continue;
      const added = hashWords(text, weight, settings, features);
      squares += added * weight * weight;
    }
  });
  if (squares > 0) {
    const scale = 1 / Math.sqrt(squares);
    for (let index = 0; index < features.values.length; index += 1) features.values[index] = (features.values[index] ?? 0) * scale;
  }

  const add = (space: Space, text: string): void => {
    features.indices.push(finish(hashText(fnvStep(FNV_OFFSET, space), text)) & mask);
    features.values.push(OTHER_FEATURE_VALUE);
  };
  add(Space.Length, String(Math.floor(Math.log2(characters + 1))));
  add(Space.Turns, String(Math.min(request.messages.length, 8)));
  const tools = request.tools ?? [];
  add(Space.ToolCount, tools.length <= 2 ? String(tools.length) : tools.length <= 4 ? '3-4' : tools.length <= 8 ? '5-8' : '9+');
  for (const tool of tools) add(Space.Tool, tool.function.name);
  if (request.tool_choice !== undefined)
    add(Space.ToolChoice, typeof request.tool_choice === 'string' ? request.tool_choice : `function ${request.tool_choice.function.name}`);
  add(Space.Format, request.response_format?.type ?? 'none');
  if (request.response_format?.type === 'json_schema') add(Space.Schema, request.response_format.json_schema.name);
  for (const message of users) {
    if (typeof message.content === 'string' || message.content === null) continue;
    for (const part of message.content) if (part.type !== 'text') add(Space.Part, part.type);
  }
  if (request.user !== undefined) add(Space.User, request.user);
  for (const [key, value] of Object.entries(request.metadata ?? {})) add(Space.Metadata, `${key}=${value}`);
  return features;
}

function texts(message: ChatMessage): string[] {
  if (typeof message.content === 'string') return [message.content];
  if (message.content === null) return [];
  return message.content.flatMap((part) => (part.type === 'text' ? [part.text] : []));
}

/** Hashes the words (and bigrams) of `text` into `features` at `weight`; returns how many entries it added. */
function hashWords(text: string, weight: number, settings: Required<FeatureOptions>, features: CallFeatures): number {
  const half = Math.floor(settings.maxCharacters / 2);
  if (text.length <= settings.maxCharacters) return hashRange(text, 0, text.length, weight, settings, features);
  return (
    hashRange(text, 0, half, weight, settings, features) + hashRange(text, text.length - half, text.length, weight, settings, features)
  );
}

function hashRange(
  text: string,
  start: number,
  end: number,
  weight: number,
  settings: Required<FeatureOptions>,
  features: CallFeatures,
): number {
  const mask = settings.dimension - 1;
  const wordStart = fnvStep(FNV_OFFSET, Space.Word);
  const before = features.indices.length;
  let hash = wordStart;
  let length = 0;
  let previous = -1;
  // One step past the end, as a separator, ends the last word.
  for (let index = start; index <= end; index += 1) {
    let code = index < end ? text.charCodeAt(index) : 32;
    let kind: Kind;
    if (code < 128) {
      if (code >= 65 && code <= 90) code += 32;
      kind = (code >= 97 && code <= 122) || (code >= 48 && code <= 57) ? Kind.Word : Kind.Separator;
    } else {
      kind = characterKind(code);
      if (kind === Kind.Word) code = lowerCase(code);
    }
    if (kind === Kind.Word) {
      hash = Math.imul(hash ^ code, FNV_PRIME);
      length += 1;
      continue;
    }
    if (length > 0) {
      previous = addWord(features, finish(hash), previous, weight, mask, settings.bigrams);
      hash = wordStart;
      length = 0;
    }
    if (kind === Kind.Single) previous = addWord(features, finish(fnvStep(wordStart, code)), previous, weight, mask, settings.bigrams);
  }
  return features.indices.length - before;
}

/** Adds a word (and the bigram with the word before it, when there is one and bigrams are on); returns the word, the next one's `previous`. */
function addWord(features: CallFeatures, word: number, previous: number, weight: number, mask: number, bigrams: boolean): number {
  features.indices.push(word & mask);
  features.values.push(weight);
  if (bigrams && previous >= 0) {
    features.indices.push(finish(Math.imul(previous ^ Space.Bigram, FNV_PRIME) ^ word) & mask);
    features.values.push(weight);
  }
  return word;
}

const enum Kind {
  Word,
  Separator,
  /** A character that is a word on its own (CJK ideographs, kana, Hangul). */
  Single,
}

/** The kind of a character outside ASCII. */
function characterKind(code: number): Kind {
  // Latin-1 punctuation and spaces, general punctuation, CJK punctuation, fullwidth ASCII punctuation, surrogates (emoji, rare scripts).
  if (
    code <= 0xbf ||
    (code >= 0x2000 && code <= 0x2bff) ||
    (code >= 0x3000 && code <= 0x303f) ||
    (code >= 0xff00 && code <= 0xff0f) ||
    (code >= 0xd800 && code <= 0xdfff)
  )
    return Kind.Separator;
  if ((code >= 0x3040 && code <= 0x9fff) || (code >= 0xac00 && code <= 0xd7af)) return Kind.Single;
  return Kind.Word;
}

const lowerCases = new Map<number, number>();
function lowerCase(code: number): number {
  let lower = lowerCases.get(code);
  if (lower === undefined) {
    lower = String.fromCharCode(code).toLowerCase().charCodeAt(0);
    if (lowerCases.size < 4_096) lowerCases.set(code, lower);
  }
  return lower;
}

function fnvStep(hash: number, code: number): number {
  return Math.imul(hash ^ code, FNV_PRIME);
}

function hashText(hash: number, text: string): number {
  let state = hash;
  for (let index = 0; index < text.length; index += 1) state = fnvStep(state, text.charCodeAt(index));
  return state;
}

/** murmur3's finaliser: every input bit reaches the low bits taken as the index. */
function finish(hash: number): number {
  let mixed = hash ^ (hash >>> 16);
  mixed = Math.imul(mixed, 0x85ebca6b);
  mixed ^= mixed >>> 13;
  mixed = Math.imul(mixed, 0xc2b2ae35);
  return (mixed ^ (mixed >>> 16)) >>> 0;
}

/**
 * What sending a call to a cheaper model saves, in the unit a per-call policy
 * weighs it in (call-policy.ts): 1 + the request's messages in estimated
 * tokens (characters / 4). The reply's length is not known before the call;
 * a longer prompt costs more on every model, so it saves more.
 */
export function requestSize(request: Pick<CallRequest, 'messages'>): number {
  let characters = 0;
  for (const message of request.messages) {
    const content = message.content;
    if (typeof content === 'string') characters += content.length;
    else if (content !== null && content !== undefined)
      for (const part of content) if (part.type === 'text' && typeof part.text === 'string') characters += part.text.length;
  }
  return 1 + characters / 4;
}
