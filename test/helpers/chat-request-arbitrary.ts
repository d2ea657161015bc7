/**
 * Chat requests generated from OpenAI's `CreateChatCompletionRequest`, and
 * mutations of them, for the property test in openai-conformance.test.ts.
 *
 * Valid requests: the schema's arbitrary (`schema-arbitrary.ts`), then the
 * rules OpenAI states in its descriptions rather than its schema, which
 * taskgate enforces as OpenAI does (`applyDocumentedRules`):
 *   - function, custom-tool and response-schema names match
 *     ^[a-zA-Z0-9_-]{1,64}$ and tool names differ;
 *   - `tool_choice` / `function_call` only with tools, naming an offered tool
 *     of the kind they say; `allowed_tools` lists references to offered tools;
 *   - `top_logprobs` needs `logprobs: true`; `stream_options` needs `stream: true`;
 *   - metadata: at most 16 pairs, keys ≤ 64 characters, values ≤ 512;
 *     logit_bias: token ids to -100..100;
 * and taskgate's own documented limits: `model` names a catalog model,
 * `max_tokens` / `max_completion_tokens` at least 1 and equal when both are
 * sent. The values taskgate cannot serve (audio output, web search, n > 1)
 * are kept in a few requests, which then expect a 400 naming that field.
 */
import fc from 'fast-check';
import { fixture, withoutNullable, type SchemaObject } from './openai-schemas.js';
import { schemaArbitrary, shortString } from './schema-arbitrary.js';

export type JsonObject = Record<string, unknown>;

const NAME = fc.stringMatching(/^[a-zA-Z0-9_-]{1,64}$/);
const schemas = withoutNullable(fixture.schemas) as Record<string, SchemaObject>;

/** Fields taskgate answers with a 400 saying why (DESIGN section 2). */
export const UNSERVABLE_FIELDS = ['modalities', 'audio', 'web_search_options', 'n'] as const;

/** `unservable`: whether a tenth of the requests keep audio, web search or n > 1. */
export function requestArbitrary(model: string, options: { unservable: boolean }): fc.Arbitrary<JsonObject> {
  const raw = schemaArbitrary('CreateChatCompletionRequest', {
    schemas,
    optionalRate: 0.35,
    overrides: {
      'CreateChatCompletionRequest.model': fc.constant(model),
      'FunctionObject.name': NAME,
      'ChatCompletionFunctions.name': NAME,
      'CustomToolChatCompletions.custom.name': NAME,
      'ResponseFormatJsonSchema.json_schema.name': NAME,
      'ChatCompletionFunctionCallOption.name': NAME,
      'CreateChatCompletionRequest.max_tokens': fc.integer({ min: 1, max: 100_000 }),
      'CreateChatCompletionRequest.max_completion_tokens': fc.integer({ min: 1, max: 100_000 }),
      'CreateChatCompletionRequest.n': fc.oneof(
        { weight: 9, arbitrary: fc.constant(1) },
        { weight: 1, arbitrary: fc.integer({ min: 2, max: 128 }) },
      ),
      'CreateChatCompletionRequest.logit_bias': fc.dictionary(fc.nat({ max: 200_000 }).map(String), fc.integer({ min: -100, max: 100 }), {
        maxKeys: 4,
      }),
      Metadata: fc.dictionary(shortString(8), shortString(24), { maxKeys: 4 }),
    },
  });
  return fc
    .tuple(raw, fc.integer({ min: 0, max: 9 }))
    .map(([request, dice]) => applyDocumentedRules(request as JsonObject, model, options.unservable && dice === 0));
}

/** The prose rules listed above; `keepUnservable` leaves audio, web search and n > 1 in. */
export function applyDocumentedRules(generated: JsonObject, model: string, keepUnservable: boolean): JsonObject {
  const request = structuredClone(generated);
  request.model = model;
  if (!keepUnservable) {
    delete request.audio;
    delete request.web_search_options;
    if (Array.isArray(request.modalities)) request.modalities = request.modalities.filter((modality) => modality !== 'audio');
    if (typeof request.n === 'number') request.n = 1;
  }
  if (request.stream_options !== undefined && request.stream_options !== null) request.stream = true;
  if (request.top_logprobs !== undefined && request.top_logprobs !== null) request.logprobs = true;
  if (typeof request.max_tokens === 'number' && typeof request.max_completion_tokens === 'number')
    request.max_completion_tokens = request.max_tokens;

  const offered: Array<{ name: string; kind: 'function' | 'custom' }> = [];
  const used = new Set<string>();
  const uniqueName = (name: string): string => {
    let candidate = name;
    for (let suffix = 1; used.has(candidate); suffix++) candidate = `${name.slice(0, 58)}_${suffix}`;
    used.add(candidate);
    return candidate;
  };
  for (const tool of Array.isArray(request.tools) ? (request.tools as JsonObject[]) : []) {
    const kind = tool.type === 'custom' ? 'custom' : 'function';
    const definition = tool[kind] as JsonObject;
    definition.name = uniqueName(definition.name as string);
    offered.push({ name: definition.name as string, kind });
  }
  for (const definition of Array.isArray(request.functions) ? (request.functions as JsonObject[]) : []) {
    definition.name = uniqueName(definition.name as string);
    offered.push({ name: definition.name as string, kind: 'function' });
  }
  const firstOf = (kind: 'function' | 'custom') => offered.find((tool) => tool.kind === kind)?.name;

  if (offered.length === 0) {
    delete request.tool_choice;
    delete request.function_call;
  }
  const choice = request.tool_choice;
  if (typeof choice === 'object' && choice !== null) {
    const typed = choice as JsonObject;
    if (typed.type === 'allowed_tools') {
      const allowed = typed.allowed_tools as JsonObject;
      allowed.tools = offered.slice(0, 2).map((tool) => ({ type: tool.kind, [tool.kind]: { name: tool.name } }));
    } else {
      const kind = typed.type as 'function' | 'custom';
      const name = firstOf(kind);
      request.tool_choice = name === undefined ? 'auto' : { type: kind, [kind]: { name } };
    }
  }
  const functionCall = request.function_call;
  if (typeof functionCall === 'object' && functionCall !== null) {
    const name = firstOf('function');
    request.function_call = name === undefined ? 'auto' : { name };
  }
  return request;
}

/** The unservable fields a request carries (a 400 must name one of them). */
export function unservableFieldsOf(request: JsonObject): string[] {
  const fields: string[] = [];
  if (Array.isArray(request.modalities) && request.modalities.includes('audio')) fields.push('modalities');
  if (request.audio !== undefined && request.audio !== null) fields.push('audio');
  if (request.web_search_options !== undefined && request.web_search_options !== null) fields.push('web_search_options');
  if (typeof request.n === 'number' && request.n > 1) fields.push('n');
  return fields;
}

export type MutationKind =
  'unknown-field' | 'wrong-type' | 'null' | 'out-of-range' | 'bad-part' | 'remove-required' | 'deep' | 'huge-valid';

export interface Mutant {
  kind: MutationKind;
  /** The body as sent: a string when it must be written by hand (deep nesting). */
  body: JsonObject | string;
  /** For kinds whose outcome is known whatever the schema says: the status, and the param a 400 must name (or start with). */
  expect?: { status: 200 } | { status: 400; param?: string | RegExp };
}

/** Paths of a request's values outside free-form zones (tool parameters, JSON schemas, metadata maps). */
function typedPaths(
  value: unknown,
  path: Array<string | number> = [],
  found: Array<Array<string | number>> = [],
): Array<Array<string | number>> {
  if (path.length > 0) found.push(path);
  const last = path.at(-1);
  if (last === 'parameters' || last === 'schema' || last === 'metadata' || last === 'logit_bias') return found;
  if (Array.isArray(value)) value.forEach((item, index) => typedPaths(item, [...path, index], found));
  else if (value !== null && typeof value === 'object')
    for (const [key, inner] of Object.entries(value)) typedPaths(inner, [...path, key], found);
  return found;
}

function setAt(target: JsonObject, path: Array<string | number>, value: unknown): void {
  let node: unknown = target;
  for (const step of path.slice(0, -1)) node = (node as Record<string | number, unknown>)[step];
  (node as Record<string | number, unknown>)[path.at(-1)!] = value;
}

function deleteAt(target: JsonObject, path: Array<string | number>): void {
  let node: unknown = target;
  for (const step of path.slice(0, -1)) node = (node as Record<string | number, unknown>)[step];
  if (Array.isArray(node)) node.splice(path.at(-1) as number, 1);
  else delete (node as Record<string, unknown>)[path.at(-1) as string];
}

const OTHER_TYPES: unknown[] = [7, 1.5, 'text', true, [], {}, [1, 'a'], { unexpected: 1 }];

function jsonType(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
}

const OUT_OF_RANGE: Array<[string, unknown, JsonObject?]> = [
  ['temperature', 2.5],
  ['temperature', -0.5],
  ['top_p', 1.01],
  ['presence_penalty', 2.5],
  ['frequency_penalty', -3],
  ['top_logprobs', 21, { logprobs: true }],
  ['top_logprobs', -1, { logprobs: true }],
  ['n', 0],
  ['n', 129],
  ['seed', 1e19],
  ['seed', -1e19],
  ['seed', 2.5],
  ['max_tokens', 2.5],
  ['safety_identifier', 's'.repeat(65)],
  ['service_tier', 'gold'],
  ['reasoning_effort', 'extreme'],
  ['verbosity', 'loud'],
  ['prompt_cache_retention', '1y'],
  ['stop', ['a', 'b', 'c', 'd', 'e']],
  ['logit_bias', { '42': 1.5 }],
  ['functions', []],
];

const BAD_PARTS: unknown[] = [
  { type: 'video', video: {} },
  { type: 'image_url' },
  { type: 'text', text: 5 },
  { type: 'text' },
  { text: 'no type' },
  { type: 'input_audio', input_audio: { data: 'AAAA', format: 'ogg' } },
  { type: 'image_url', image_url: { url: 5 } },
  { type: 'image_url', image_url: { url: 'https://a.example/i.png', detail: 'ultra' } },
  { type: 'file', file: 'id' },
  { type: 'refusal', refusal: 'no' },
  'plain string',
  42,
  null,
];

export function mutantArbitrary(valid: fc.Arbitrary<JsonObject>): fc.Arbitrary<Mutant> {
  return fc.tuple(valid, fc.nat(), fc.nat(), fc.integer({ min: 0, max: 7 })).map(([request, pick, pick2, kindIndex]): Mutant => {
    const body = structuredClone(request);
    const kinds: MutationKind[] = [
      'unknown-field',
      'wrong-type',
      'null',
      'out-of-range',
      'bad-part',
      'remove-required',
      'deep',
      'huge-valid',
    ];
    const kind = kinds[kindIndex]!;
    switch (kind) {
      case 'unknown-field': {
        const name = `x_unknown_${pick % 1000}`;
        body[name] = OTHER_TYPES[pick2 % OTHER_TYPES.length];
        return { kind, body, expect: { status: 400, param: name } };
      }
      case 'wrong-type':
      case 'null': {
        const paths = typedPaths(body).filter((path) => path[0] !== 'model');
        const path = paths[pick % paths.length]!;
        let current: unknown = body;
        for (const step of path) current = (current as Record<string | number, unknown>)[step];
        const candidates = kind === 'null' ? [null] : OTHER_TYPES.filter((value) => jsonType(value) !== jsonType(current));
        setAt(body, path, structuredClone(candidates[pick2 % candidates.length]));
        return { kind, body };
      }
      case 'out-of-range': {
        const [field, value, extra] = OUT_OF_RANGE[pick % OUT_OF_RANGE.length]!;
        body[field] = value;
        if (extra !== undefined) Object.assign(body, extra);
        return { kind, body };
      }
      case 'bad-part': {
        const messages = body.messages as JsonObject[];
        const index = pick % messages.length;
        const message = messages[index]!;
        const part = BAD_PARTS[pick2 % BAD_PARTS.length];
        // A refusal part is fine for an assistant: put it elsewhere.
        if (message.role === 'assistant' || message.role === 'function') message.role = 'user';
        message.content = [{ type: 'text', text: 'before' }, part];
        if (message.role === 'tool' && typeof message.tool_call_id !== 'string') message.tool_call_id = 'call_1';
        return { kind, body, expect: { status: 400, param: new RegExp(`^messages\\[${index}\\]\\.content`) } };
      }
      case 'remove-required': {
        const messages = body.messages as JsonObject[];
        const choices: Array<Array<string | number>> = [['model'], ['messages'], ['messages', pick % messages.length, 'role']];
        const message = messages[pick % messages.length]!;
        if (message.role !== 'assistant') choices.push(['messages', pick % messages.length, 'content']);
        const path = choices[pick2 % choices.length]!;
        deleteAt(body, path);
        return { kind, body, expect: { status: 400, param: path.length === 1 ? (path[0] as string) : `messages[${path[1]}].${path[2]}` } };
      }
      case 'deep': {
        const depth = 8 + (pick % 90);
        const nested = `${'['.repeat(depth)}${']'.repeat(depth)}`;
        const tools = [{ type: 'function', function: { name: 'deep', parameters: { type: 'object' } } }];
        const text = JSON.stringify({
          ...body,
          metadata: undefined,
          functions: undefined,
          tool_choice: undefined,
          function_call: undefined,
          tools,
        });
        // body 1 > tools 2 > tool 3 > function 4 > parameters 5 > the nested arrays.
        const sent = text.replace('{"type":"object"}', `{"type":"object","x":${nested}}`);
        const tooDeep = 5 + depth > 64;
        return { kind, body: sent, expect: tooDeep ? { status: 400, param: 'tools' } : { status: 200 } };
      }
      case 'huge-valid': {
        const messages = body.messages as JsonObject[];
        // One word: the scripted engine streams a reply word by word, and echoes this one.
        messages.push({ role: 'user', content: '\u00e9'.repeat(100_000 + (pick % 100_000)) });
        return { kind, body, expect: { status: 200 } };
      }
    }
  });
}
