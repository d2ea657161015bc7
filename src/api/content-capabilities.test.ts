import { describe, expect, it } from 'vitest';
import type { ChatMessage } from './chat-types.js';
import { canTakeContent, checkModelTakesContent, firstImagePart } from './content-capabilities.js';

const withImage: ChatMessage[] = [
  { role: 'system', content: 'Describe.' },
  {
    role: 'user',
    content: [
      { type: 'text', text: 'What?' },
      { type: 'input_audio', input_audio: { data: 'AA', format: 'wav' } },
      { type: 'image_url', image_url: { url: 'https://a.example/x.png' } },
    ],
  },
];
const textOnly: ChatMessage[] = [
  {
    role: 'user',
    content: [
      { type: 'text', text: 'hi' },
      { type: 'file', file: { file_id: 'f' } },
    ],
  },
];
const vision = { id: 'sees', supports: new Set(['tools', 'vision']) };
const blind = { id: 'blind', supports: new Set(['tools', 'json']) };

describe('content a model can take', () => {
  it('finds the first image part', () => {
    expect(firstImagePart(withImage)).toBe('messages[1].content[2]');
    expect(firstImagePart(textOnly)).toBeUndefined();
  });

  it('needs vision for images only', () => {
    expect(canTakeContent(withImage, vision)).toBe(true);
    expect(canTakeContent(withImage, blind)).toBe(false);
    expect(canTakeContent(textOnly, blind)).toBe(true);
    expect(() => checkModelTakesContent(withImage, vision)).not.toThrow();
    expect(() => checkModelTakesContent(textOnly, blind)).not.toThrow();
  });

  it('refuses an image to a model without vision, naming the part', () => {
    expect(() => checkModelTakesContent(withImage, blind)).toThrow(
      expect.objectContaining({
        status: 400,
        param: 'messages[1].content[2]',
        code: 'unsupported_content',
        message: expect.stringContaining("the model 'blind' does not read images"),
      }),
    );
  });
});
