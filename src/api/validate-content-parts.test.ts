import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from './errors.js';
import { validateChatRequest } from './validate-chat-request.js';
import { invalidRequestOf } from '../../test/helpers/invalid-request.js';

const request = (messages: unknown[]) => validateChatRequest({ model: 'm', messages });
const rejected = (messages: unknown[]): InvalidRequestError => invalidRequestOf(() => request(messages));

const text = { type: 'text', text: 'hi' };
const image = { type: 'image_url', image_url: { url: 'https://example.com/a.png' } };
const audio = { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } };
const file = { type: 'file', file: { file_id: 'file-1' } };
const refusal = { type: 'refusal', refusal: 'No.' };

describe("content parts by role, as OpenAI's schema has them", () => {
  it('user messages take text, image_url, input_audio and file parts, rebuilt from their known fields', () => {
    const parts = request([
      { role: 'user', content: [{ ...text, cache_control: { type: 'ephemeral' } }, image, audio, file, { type: 'file', file: {} }] },
    ]).messages[0]?.content;
    expect(parts).toStrictEqual([text, image, audio, file, { type: 'file', file: {} }]);
  });

  it('system, developer and tool messages take text parts only', () => {
    for (const role of ['system', 'developer', 'tool']) {
      expect(request([{ role, content: [text], tool_call_id: 'c' }]).messages[0]?.content).toStrictEqual([text]);
      for (const part of [image, audio, file, refusal]) {
        const error = rejected([{ role, content: [text, part], tool_call_id: 'c' }]);
        expect(error.param).toBe('messages[0].content[1].type');
        expect(error.message).toBe(
          `Invalid value for 'messages[0].content[1].type': ${role} messages take only 'text' parts, got "${part.type}".`,
        );
      }
    }
  });

  it('assistant messages take text and refusal parts; a refusal part reaches engines as text', () => {
    expect(request([{ role: 'assistant', content: [text, refusal] }]).messages[0]?.content).toStrictEqual([
      text,
      { type: 'text', text: 'No.' },
    ]);
    expect(rejected([{ role: 'assistant', content: [image] }]).param).toBe('messages[0].content[0].type');
    expect(rejected([{ role: 'user', content: [refusal] }]).param).toBe('messages[0].content[0].type');
  });

  it.each<[string, unknown, string]>([
    ['an unknown type', { type: 'video' }, 'messages[0].content[0].type'],
    ['an image without image_url', { type: 'image_url' }, 'messages[0].content[0].image_url'],
    ['an image_url that is a string', { type: 'image_url', image_url: 'https://example.com/a.png' }, 'messages[0].content[0].image_url'],
    ['an image without url', { type: 'image_url', image_url: { detail: 'low' } }, 'messages[0].content[0].image_url.url'],
    ['an image url without a scheme', { type: 'image_url', image_url: { url: '/a.png' } }, 'messages[0].content[0].image_url.url'],
    [
      'an unknown image detail',
      { type: 'image_url', image_url: { url: 'data:,', detail: 'max' } },
      'messages[0].content[0].image_url.detail',
    ],
    ['audio without data', { type: 'input_audio', input_audio: { format: 'wav' } }, 'messages[0].content[0].input_audio.data'],
    ['audio without format', { type: 'input_audio', input_audio: { data: 'AA' } }, 'messages[0].content[0].input_audio.format'],
    ['audio in flac', { type: 'input_audio', input_audio: { data: 'AA', format: 'flac' } }, 'messages[0].content[0].input_audio.format'],
    ['a file that is an id string', { type: 'file', file: 'file-1' }, 'messages[0].content[0].file'],
    ['a file id that is a number', { type: 'file', file: { file_id: 1 } }, 'messages[0].content[0].file.file_id'],
    ['a refusal without text', { type: 'refusal' }, 'messages[0].content[0].refusal'],
    [
      'a breakpoint of another mode',
      { ...text, prompt_cache_breakpoint: { mode: 'implicit' } },
      'messages[0].content[0].prompt_cache_breakpoint.mode',
    ],
    ['a breakpoint without mode', { ...text, prompt_cache_breakpoint: {} }, 'messages[0].content[0].prompt_cache_breakpoint.mode'],
  ])('%s is a 400 naming its path', (_name, part, param) => {
    const role = (part as { type?: string }).type === 'refusal' ? 'assistant' : 'user';
    expect(rejected([{ role, content: [part] }]).param).toBe(param);
  });

  it('reports prompt_cache_breakpoint as ignored, once', () => {
    const breakpoint = { ...text, prompt_cache_breakpoint: { mode: 'explicit' } };
    const checked = request([
      { role: 'system', content: [breakpoint] },
      { role: 'user', content: [breakpoint, breakpoint] },
    ]);
    expect(checked.messages[1]?.content).toStrictEqual([text, text]);
    expect(checked.notes?.ignoredFields).toStrictEqual(['prompt_cache_breakpoint']);
  });
});
