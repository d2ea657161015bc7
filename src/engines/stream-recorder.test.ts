import { describe, expect, it } from 'vitest';
import type { FinishReason } from '../api/chat-types.js';
import type { EngineChunk } from './engine.js';
import { StreamRecorder } from './stream-recorder.js';

const content = (text: string, finish: FinishReason | null = null): EngineChunk => ({
  choices: [{ index: 0, delta: { content: text }, finish_reason: finish }],
});

/** What the recorder's reply body must read as: JSON.stringify of the whole completion. */
function expected(recorder: StreamRecorder, id: string, created: number, model: string): string {
  const usage = recorder.usage ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  return JSON.stringify({
    id,
    object: 'chat.completion',
    created,
    model,
    choices: [{ index: 0, message: recorder.message(), finish_reason: recorder.finishReason }],
    usage,
  });
}

describe('StreamRecorder.replyBody', () => {
  it('writes the assembled stream as JSON.stringify writes the chat.completion', () => {
    const texts = new StreamRecorder(true);
    for (const chunk of [
      content('Hello'),
      content(', "wörld" \\ \n\u2028'),
      content('', 'stop'),
      { choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } },
    ])
      texts.observe(chunk);
    expect(texts.replyBody('chatcmpl-"1"', 1_700_000_000, 'org/model:q4')).toBe(
      expected(texts, 'chatcmpl-"1"', 1_700_000_000, 'org/model:q4'),
    );
    expect(JSON.parse(texts.replyBody('c', 1, 'm') ?? '')).toMatchObject({
      choices: [{ message: { role: 'assistant', content: 'Hello, "wörld" \\ \n\u2028' }, finish_reason: 'stop' }],
      usage: { total_tokens: 5 },
    });

    // Tool calls, no content, no finish reason and no usage (a stream cut short).
    const tools = new StreamRecorder(true);
    tools.observe({
      choices: [
        {
          index: 0,
          delta: { tool_calls: [{ index: 0, id: 't1', type: 'function', function: { name: 'f', arguments: '{"a"' } }] },
          finish_reason: null,
        },
      ],
    });
    tools.observe({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }, finish_reason: null }] });
    expect(tools.replyBody('c', 0, 'm')).toBe(expected(tools, 'c', 0, 'm'));
    expect(JSON.parse(tools.replyBody('c', 0, 'm') ?? '')).toMatchObject({
      choices: [{ message: { content: null, tool_calls: [{ function: { arguments: '{"a":1}' } }] }, finish_reason: null }],
    });
  });

  it('keeps no body when told not to', () => {
    const recorder = new StreamRecorder(false);
    recorder.observe(content('x', 'stop'));
    expect(recorder.replyBody('c', 1, 'm')).toBeNull();
    expect(recorder.finishReason).toBe('stop');
  });
});
