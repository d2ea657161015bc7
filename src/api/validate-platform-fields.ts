/**
 * The fields of OpenAI's request that are about OpenAI's platform rather than
 * the generation. Each is checked against OpenAI's schema (a malformed one is
 * a 400 like any other), then:
 *   - ignored and reported (`x-taskgate-ignored-fields`) when it means
 *     nothing on own capacity: `store`, `service_tier`, `prompt_cache_key`,
 *     `prompt_cache_options`, `prompt_cache_retention`, `safety_identifier`,
 *     `moderation`, `prediction`, and `modalities: ["text"]`;
 *   - refused with a 400 that says why when it asks for what cannot be
 *     served: audio output (`audio`, `modalities` with "audio") and web
 *     search (`web_search_options`).
 * `null` means "not sent" for all of them, as everywhere in the request.
 */
import {
  invalidTypeError,
  invalidValueError,
  isJsonObject,
  missingParameterError,
  optionalBoolean,
  optionalEnum,
  optionalString,
  ownField,
  requiredObject,
  requiredString,
  showValue,
  unsupportedError,
} from './field-checks.js';
import { checkPromptCacheBreakpoint } from './validate-content-parts.js';

export const IGNORED_PLATFORM_FIELDS = [
  'store',
  'service_tier',
  'prompt_cache_key',
  'prompt_cache_options',
  'prompt_cache_retention',
  'safety_identifier',
  'moderation',
  'prediction',
] as const;
export type IgnoredPlatformField = (typeof IGNORED_PLATFORM_FIELDS)[number];

const SERVICE_TIERS = ['auto', 'default', 'flex', 'scale', 'priority', 'fast'] as const;
const MODERATION_MODES = ['score', 'block'] as const;
const MAX_SAFETY_IDENTIFIER_LENGTH = 64;
/** No length in OpenAI's schema; the body limit bounds it. */
const UNBOUNDED = Number.MAX_SAFE_INTEGER;

/** Checks one ignored field; when it was sent, adds its name to `ignored`. */
export function checkIgnoredField(field: IgnoredPlatformField, value: unknown, ignored: string[]): void {
  if (value === undefined || value === null) return;
  switch (field) {
    case 'store':
      optionalBoolean(value, field);
      break;
    case 'service_tier':
      optionalEnum(value, field, SERVICE_TIERS);
      break;
    case 'prompt_cache_key':
      optionalString(value, field, UNBOUNDED);
      break;
    case 'prompt_cache_options': {
      const options = requiredObject(value, field);
      optionalEnum(ownField(options, 'ttl'), 'prompt_cache_options.ttl', ['30m'] as const);
      optionalEnum(ownField(options, 'mode'), 'prompt_cache_options.mode', ['implicit', 'explicit'] as const);
      break;
    }
    case 'prompt_cache_retention':
      optionalEnum(value, field, ['in_memory', '24h'] as const);
      break;
    case 'safety_identifier':
      optionalString(value, field, MAX_SAFETY_IDENTIFIER_LENGTH);
      break;
    case 'moderation':
      checkModeration(value);
      break;
    case 'prediction':
      checkPrediction(value);
      break;
  }
  ignored.push(field);
}

/** Text is what every engine makes: `["text"]` (or `[]`) is ignored; "audio" is a 400. */
export function checkModalities(value: unknown, ignored: string[]): void {
  if (value === undefined || value === null) return;
  if (!Array.isArray(value)) throw invalidTypeError('modalities', 'an array of output modalities', value);
  for (let index = 0; index < value.length; index++) {
    const modality = optionalEnum(value[index], `modalities[${index}]`, ['text', 'audio'] as const);
    if (modality === undefined) throw invalidTypeError(`modalities[${index}]`, "'text' or 'audio'", value[index]);
    if (modality === 'audio') {
      throw unsupportedError(
        'modalities',
        'audio output cannot be served: taskgate\'s engines generate text only. Ask for ["text"] or leave the field out.',
      );
    }
  }
  ignored.push('modalities');
}

/** `audio` configures audio output, which no engine here makes. */
export function refuseAudio(value: unknown): void {
  if (value === undefined || value === null) return;
  if (!isJsonObject(value)) throw invalidTypeError('audio', 'an object with voice and format', value);
  throw unsupportedError('audio', "audio output cannot be served: taskgate's engines generate text only. Leave the field out.");
}

/** `web_search_options` asks for OpenAI's hosted web search. */
export function refuseWebSearch(value: unknown): void {
  if (value === undefined || value === null) return;
  if (!isJsonObject(value)) throw invalidTypeError('web_search_options', 'an object', value);
  throw unsupportedError(
    'web_search_options',
    "web search cannot be served: taskgate's engines have no search tool. Offer your own search as a function tool instead.",
  );
}

/** `ModerationParam`: `{model, policy?: {input?, output?: {mode: "score" | "block"}}}`. */
function checkModeration(value: unknown): void {
  const moderation = requiredObject(value, 'moderation');
  requiredString(ownField(moderation, 'model'), 'moderation.model');
  const policy = ownField(moderation, 'policy');
  if (policy === undefined || policy === null) return;
  const checked = requiredObject(policy, 'moderation.policy');
  for (const side of ['input', 'output'] as const) {
    const config = ownField(checked, side);
    if (config === undefined || config === null) continue;
    const mode = optionalEnum(
      ownField(requiredObject(config, `moderation.policy.${side}`), 'mode'),
      `moderation.policy.${side}.mode`,
      MODERATION_MODES,
    );
    if (mode === undefined) throw missingParameterError(`moderation.policy.${side}.mode`);
  }
}

/** `PredictionContent`: `{type: "content", content: string | text parts}`. */
function checkPrediction(value: unknown): void {
  const prediction = requiredObject(value, 'prediction');
  if (optionalEnum(ownField(prediction, 'type'), 'prediction.type', ['content'] as const) === undefined) {
    throw missingParameterError('prediction.type');
  }
  const content = ownField(prediction, 'content');
  if (typeof content === 'string') return;
  if (content === undefined || content === null) throw missingParameterError('prediction.content');
  if (!Array.isArray(content)) throw invalidTypeError('prediction.content', 'a string or an array of text parts', content);
  if (content.length === 0) throw invalidValueError('prediction.content', 'expected a string or a non-empty array of text parts, got [].');
  for (let index = 0; index < content.length; index++) {
    const part = requiredObject(content[index], `prediction.content[${index}]`, 'a text part');
    const type = ownField(part, 'type');
    if (type !== 'text') {
      if (type === undefined || type === null) throw missingParameterError(`prediction.content[${index}].type`);
      throw invalidValueError(`prediction.content[${index}].type`, `expected 'text', got ${showValue(type)}.`);
    }
    requiredString(ownField(part, 'text'), `prediction.content[${index}].text`);
    checkPromptCacheBreakpoint(part, `prediction.content[${index}]`);
  }
}
