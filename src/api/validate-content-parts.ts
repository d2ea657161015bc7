/**
 * Message content as OpenAI's schema has it: a string, or a non-empty array
 * of parts whose kinds depend on the role (`ChatCompletionRequest*Message`):
 *
 *   system, developer, tool   text
 *   user                      text, image_url, input_audio, file
 *   assistant                 text, refusal (a refusal part becomes a text part)
 *
 * Each part is rebuilt from its known fields, so nothing unchecked reaches an
 * engine. `prompt_cache_breakpoint` (OpenAI's prompt caching) is checked,
 * dropped and reported as ignored. Whether the target model can take an image
 * is decided once the model is known (`content-capabilities.ts`).
 */
import type { ContentPart, Role } from './chat-types.js';
import {
  invalidTypeError,
  invalidValueError,
  isJsonObject,
  missingParameterError,
  optionalEnum,
  ownField,
  quoteForMessage,
  requiredObject,
  requiredString,
} from './field-checks.js';

const TEXT_ONLY = ['text'] as const;
const PART_KINDS: Readonly<Record<Role, readonly string[]>> = {
  system: TEXT_ONLY,
  developer: TEXT_ONLY,
  tool: TEXT_ONLY,
  user: ['text', 'image_url', 'input_audio', 'file'],
  assistant: ['text', 'refusal'],
};

/** A URI has a scheme (`https:`, `data:`): JSON Schema's `format: uri`, which OpenAI's `image_url.url` declares. */
const URI_SCHEME = /^[a-zA-Z][a-zA-Z0-9+.-]*:/;

/** `ignored` collects the names of fields that were accepted and set aside. */
export function validateContent(value: unknown, index: number, role: Role, ignored: string[]): string | ContentPart[] {
  // NUL and other control characters are valid in JSON strings; they are kept as sent.
  if (typeof value === 'string') return value;
  const kinds = PART_KINDS[role];
  if (!Array.isArray(value) || value.length === 0) {
    const expected = kinds.length === 1 ? 'a string or an array of text parts' : 'a string or an array of content parts';
    if (!Array.isArray(value)) throw invalidTypeError(`messages[${index}].content`, expected, value);
    throw invalidValueError(`messages[${index}].content`, `expected ${expected.replace('an array', 'a non-empty array')}, got [].`);
  }
  const parts: ContentPart[] = [];
  for (let partIndex = 0; partIndex < value.length; partIndex++) {
    parts.push(validatePart(value[partIndex], index, partIndex, role, kinds, ignored));
  }
  return parts;
}

/** `messages[i].content[j]` and a suffix: built only when needed, so a text part costs no string concatenation. */
function partParam(index: number, partIndex: number, suffix = ''): string {
  return `messages[${index}].content[${partIndex}]${suffix}`;
}

function validatePart(
  raw: unknown,
  index: number,
  partIndex: number,
  role: Role,
  kinds: readonly string[],
  ignored: string[],
): ContentPart {
  if (!isJsonObject(raw)) throw invalidTypeError(partParam(index, partIndex), 'a content part object', raw);
  const type = ownField(raw, 'type');
  // Text, the common part, without a breakpoint: no further checks.
  if (type === 'text') {
    const text = ownField(raw, 'text');
    if (typeof text === 'string' && ownField(raw, 'prompt_cache_breakpoint') === undefined) return { type: 'text', text };
  }
  const param = partParam(index, partIndex);
  if (typeof type !== 'string' || !kinds.includes(type)) {
    const typeParam = `${param}.type`;
    if (type === undefined || type === null) throw missingParameterError(typeParam);
    const list = kinds.map((kind) => `'${kind}'`).join(', ');
    if (typeof type !== 'string') throw invalidTypeError(typeParam, `one of ${list}`, type);
    throw invalidValueError(
      typeParam,
      `${role} messages take ${kinds.length === 1 ? 'only ' : ''}${list} parts, got ${quoteForMessage(type)}.`,
    );
  }
  if (checkPromptCacheBreakpoint(raw, param) && !ignored.includes('prompt_cache_breakpoint')) ignored.push('prompt_cache_breakpoint');
  switch (type) {
    case 'text':
      return { type: 'text', text: requiredString(ownField(raw, 'text'), `${param}.text`) };
    case 'refusal':
      // An earlier refusal is what the assistant said; engines know no refusal parts.
      return { type: 'text', text: requiredString(ownField(raw, 'refusal'), `${param}.refusal`) };
    case 'image_url':
      return imagePart(requiredObject(ownField(raw, 'image_url'), `${param}.image_url`), `${param}.image_url`);
    case 'input_audio': {
      const audio = requiredObject(ownField(raw, 'input_audio'), `${param}.input_audio`);
      const data = requiredString(ownField(audio, 'data'), `${param}.input_audio.data`);
      const format = optionalEnum(ownField(audio, 'format'), `${param}.input_audio.format`, ['wav', 'mp3'] as const);
      if (format === undefined) throw missingParameterError(`${param}.input_audio.format`);
      return { type: 'input_audio', input_audio: { data, format } };
    }
    default:
      return filePart(requiredObject(ownField(raw, 'file'), `${param}.file`), `${param}.file`);
  }
}

/** A part's `prompt_cache_breakpoint`, `{mode: "explicit"}` when sent; true when it was. */
export function checkPromptCacheBreakpoint(part: Record<string, unknown>, param: string): boolean {
  const breakpoint = ownField(part, 'prompt_cache_breakpoint');
  if (breakpoint === undefined || breakpoint === null) return false;
  const checked = requiredObject(breakpoint, `${param}.prompt_cache_breakpoint`);
  if (optionalEnum(ownField(checked, 'mode'), `${param}.prompt_cache_breakpoint.mode`, ['explicit']) === undefined) {
    throw missingParameterError(`${param}.prompt_cache_breakpoint.mode`);
  }
  return true;
}

function imagePart(image: Record<string, unknown>, param: string): ContentPart {
  const url = requiredString(ownField(image, 'url'), `${param}.url`);
  if (!URI_SCHEME.test(url)) {
    throw invalidValueError(`${param}.url`, `expected a URL with a scheme (https: or data:), got ${quoteForMessage(url)}.`);
  }
  const detail = optionalEnum(ownField(image, 'detail'), `${param}.detail`, ['auto', 'low', 'high'] as const);
  return { type: 'image_url', image_url: detail === undefined ? { url } : { url, detail } };
}

function filePart(file: Record<string, unknown>, param: string): ContentPart {
  const part: { filename?: string; file_data?: string; file_id?: string } = {};
  for (const field of ['filename', 'file_data', 'file_id'] as const) {
    const value = ownField(file, field);
    if (value === undefined || value === null) continue;
    part[field] = requiredString(value, `${param}.${field}`);
  }
  return { type: 'file', file: part };
}
