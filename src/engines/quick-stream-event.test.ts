import { describe, expect, it } from 'vitest';
import { parseStreamEventFully } from './openai-wire.js';
import { readQuickStreamEvent } from './quick-stream-event.js';

/** Events as real servers send them, byte for byte in their field order. */
const quickEvents = {
  vllmRole:
    '{"id":"chatcmpl-9f2","object":"chat.completion.chunk","created":1718000000,"model":"Qwen/Qwen2.5-7B-Instruct","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}',
  vllmContent:
    '{"id":"chatcmpl-9f2","object":"chat.completion.chunk","created":1718000000,"model":"Qwen/Qwen2.5-7B-Instruct","choices":[{"index":0,"delta":{"content":" Hello"},"logprobs":null,"finish_reason":null}]}',
  vllmFinish:
    '{"id":"chatcmpl-9f2","object":"chat.completion.chunk","created":1718000000,"model":"Qwen/Qwen2.5-7B-Instruct","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"length"}]}',
  vllmEmptyDelta:
    '{"id":"chatcmpl-9f2","object":"chat.completion.chunk","created":1718000000,"model":"m","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}',
  openai:
    '{"id":"chatcmpl-B1","object":"chat.completion.chunk","created":1740000000,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_06737a9306","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"Q4g1"}',
  llamaCpp:
    '{"choices":[{"finish_reason":null,"index":0,"delta":{"content":" world"}}],"created":1718000001,"id":"chatcmpl-Xy","model":"qwen2.5-0.5b-instruct-q4_k_m.gguf","system_fingerprint":"b4200-5f1a","object":"chat.completion.chunk"}',
  llamaCppRole:
    '{"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"created":1718000001,"id":"chatcmpl-Xy","model":"q","system_fingerprint":"b4200","object":"chat.completion.chunk"}',
  llamaCppFinish:
    '{"choices":[{"finish_reason":"stop","index":0,"delta":{}}],"created":1718000001,"id":"chatcmpl-Xy","model":"q","system_fingerprint":"b4200","object":"chat.completion.chunk"}',
  escapes:
    '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"line\\n\\"quoted\\" caf\\u00e9 \\ud83d\\ude00 \\/"},"logprobs":null,"finish_reason":null}]}',
  unicode:
    '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Grüße, 世界 😀"},"logprobs":null,"finish_reason":null}]}',
  usage:
    '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}',
  vllmUsage:
    '{"id":"chatcmpl-9f2","object":"chat.completion.chunk","created":1718000000,"model":"Qwen/Qwen2.5-7B-Instruct","choices":[],"usage":{"prompt_tokens":24,"total_tokens":32,"completion_tokens":8}}',
  openaiUsage:
    '{"id":"chatcmpl-B1","object":"chat.completion.chunk","created":1740000000,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_06737a9306","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":0,"total_tokens":9},"obfuscation":"Q4g1"}',
  oddFinish:
    '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":2,"delta":{"content":"x"},"logprobs":null,"finish_reason":"eos_token"}]}',
};

/** Events the full reader must take (usage, errors, tool calls, reasoning, several choices, pretty JSON...). */
const fullEvents = {
  usageWithDetails:
    '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":"fp_1","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7,"prompt_tokens_details":{"cached_tokens":3}}}',
  usageThenNull:
    '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7},"usage":null}',
  usageHugeCount:
    '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":1234567890123456789}}',
  vllmError: '{"error":{"object":"error","message":"out of memory","type":"InternalServerError","code":400}}',
  vllmOldError: '{"object":"error","message":"boom","type":"BadRequestError","code":400}',
  toolCall:
    '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"t","type":"function","function":{"name":"f","arguments":"{}"}}]},"logprobs":null,"finish_reason":null}]}',
  vllmEmptyTools:
    '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"x","tool_calls":[]},"logprobs":null,"finish_reason":null}]}',
  reasoning:
    '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"reasoning_content":"hmm"},"logprobs":null,"finish_reason":null}]}',
  sglang:
    '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":null,"content":"x","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}',
  twoChoices:
    '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"a"},"logprobs":null,"finish_reason":null},{"index":1,"delta":{"content":"b"},"logprobs":null,"finish_reason":null}]}',
  pretty:
    '{"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [{"index": 0, "delta": {"content": "x"}, "logprobs": null, "finish_reason": null}]}',
  azurePlaceholder: '{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[]}',
  continuousUsage:
    '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"x"},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}',
};

describe('readQuickStreamEvent', () => {
  it.each(Object.entries(quickEvents))('reads %s as the full reader does', (_name, event) => {
    const quick = readQuickStreamEvent(event);
    expect(quick).toBeDefined();
    expect(quick).toStrictEqual(parseStreamEventFully(event, 'e'));
  });

  it('reads a lone surrogate in the content as the full reader does', () => {
    const lone = quickEvents.vllmContent.replace(' Hello', 'a\ud83db');
    const chunk = readQuickStreamEvent(lone);
    expect(chunk?.choices[0]?.delta.content).toBe('a\ud83db');
    expect(chunk).toStrictEqual(parseStreamEventFully(lone, 'e'));
  });

  it.each(Object.entries(fullEvents))('leaves %s to the full reader', (_name, event) => {
    expect(readQuickStreamEvent(event)).toBeUndefined();
  });

  it('never reads a mutated event differently from the full reader (20,000 mutations: deleted, inserted and repeated characters)', () => {
    let seed = 0x2545f491;
    const random = (below: number) => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % below;
    };
    const inserts = [
      '"',
      '\\',
      ',',
      ':',
      '{',
      '}',
      '[',
      ']',
      ' ',
      '0',
      '1',
      '-',
      'e',
      '.',
      'n',
      '\u0001',
      '\n',
      'null',
      '"role":"assistant",',
      '"content":"x",',
      '"usage":null,',
      '"error":1,',
    ];
    const events = Object.values(quickEvents);
    let quickRead = 0;
    for (let round = 0; round < 20_000; round++) {
      let event = events[random(events.length)] as string;
      for (let edits = 1 + random(2); edits > 0; edits--) {
        const at = random(event.length + 1);
        const kind = random(3);
        if (kind === 0) event = event.slice(0, at) + event.slice(at + 1);
        else if (kind === 1) event = event.slice(0, at) + (inserts[random(inserts.length)] as string) + event.slice(at);
        else event = event.slice(0, at) + event.slice(at, at + 1 + random(12)) + event.slice(at);
      }
      const quick = readQuickStreamEvent(event);
      if (quick === undefined) continue;
      quickRead += 1;
      let full: unknown;
      try {
        full = parseStreamEventFully(event, 'e');
      } catch (error) {
        throw new Error(`quick read an event the full reader refuses (${String(error)}): ${event}`, { cause: error });
      }
      expect(quick, event).toStrictEqual(full);
    }
    // The mutations reach the quick reader often enough to prove something.
    expect(quickRead).toBeGreaterThan(1_000);
  });
});
