import { describe, expect, it } from 'vitest';
import type { EngineRequest } from './engine.js';
import { prepareOpenAIRequests, serializeChatRequest } from './openai-request.js';

const base: EngineRequest = { model: 'upstream', messages: [{ role: 'user', content: 'hi' }] };
const sent = (request: EngineRequest) => JSON.parse(serializeChatRequest(request, false)) as Record<string, unknown>;

describe('prepareOpenAIRequests', () => {
  it('appends the paths to the base URL and asks for an uncompressed reply, with the key and extra headers', () => {
    const requests = prepareOpenAIRequests(new URL('http://engine:8000/v1/'), { 'x-team': 'a' }, 'secret');
    expect(requests.modelsPath).toBe('/v1/models');
    expect(requests.json.head).toBe(
      'POST /v1/chat/completions HTTP/1.1\r\nhost: engine:8000\r\nx-team: a\r\ncontent-type: application/json\r\naccept-encoding: identity\r\nauthorization: Bearer secret\r\naccept: application/json\r\n',
    );
    expect(requests.stream.head).toContain('POST /v1/chat/completions HTTP/1.1\r\n');
    expect(requests.stream.head).toContain('accept: text/event-stream\r\n');
    expect(requests.ready.head).toMatch(/^GET \/v1\/models HTTP\/1\.1\r\n/);
    expect(prepareOpenAIRequests(new URL('http://engine/v1'), undefined, undefined).ready.head).not.toContain('authorization');
  });
});

describe('serializeChatRequest', () => {
  it('writes the model, the messages, stream and every forwarded field set, in order, as JSON.stringify would, and nothing else', () => {
    const full: EngineRequest = {
      model: 'upstream',
      messages: [
        { role: 'developer', content: 'be "brief"' },
        { role: 'user', content: 'hi\u2028' },
      ],
      max_tokens: 5,
      temperature: 0,
      top_p: 0.5,
      stop: ['\n'],
      seed: 3,
      response_format: { type: 'json_object' },
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
      tool_choice: 'auto',
      parallel_tool_calls: false,
      user: 'u',
      n: 1,
      presence_penalty: -1,
      frequency_penalty: 1.5,
      logit_bias: { '50256': -100 },
      logprobs: true,
      top_logprobs: 2,
      reasoning_effort: 'low',
      verbosity: 'high',
      top_k: 40,
      min_p: 0.05,
      repetition_penalty: 1.1,
    };
    const { model, messages, ...rest } = full;
    const developerAsSystem = [{ role: 'system', content: 'be "brief"' }, messages[1]];
    expect(serializeChatRequest(full, true)).toBe(
      JSON.stringify({ model, messages: developerAsSystem, stream: true, stream_options: { include_usage: true }, ...rest }),
    );
    expect(serializeChatRequest(full, false)).toBe(JSON.stringify({ model, messages: developerAsSystem, stream: false, ...rest }));
    // Unset, undefined and the gateway's own fields stay home; null is sent as null.
    const sparse = {
      ...base,
      temperature: undefined,
      stop: null,
      task: 'mine',
      metadata: { a: 'b' },
      stream: true,
    } as unknown as EngineRequest;
    expect(serializeChatRequest(sparse, false)).toBe(
      '{"model":"upstream","messages":[{"role":"user","content":"hi"}],"stream":false,"stop":null}',
    );
  });

  it('passes reasoning_effort and verbosity on', () => {
    expect(sent({ ...base, reasoning_effort: 'low', verbosity: 'high' })).toMatchObject({ reasoning_effort: 'low', verbosity: 'high' });
    expect(sent(base)).not.toHaveProperty('reasoning_effort');
  });

  it("keeps a seed of ±2^63 (int64's extremes as parsed) inside int64 on the wire", () => {
    expect(serializeChatRequest({ ...base, seed: 2 ** 63 }, false)).toContain('"seed":9223372036854775000');
    expect(serializeChatRequest({ ...base, seed: -(2 ** 63) }, false)).toContain('"seed":-9223372036854775000');
    expect(serializeChatRequest({ ...base, seed: 2 ** 62 }, false)).toContain('"seed":4611686018427388000');
    expect(sent({ ...base, seed: 7 }).seed).toBe(7);
  });
});
