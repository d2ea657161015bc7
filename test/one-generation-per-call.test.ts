/**
 * One generation per call, against engines that misbehave on purpose (a raw
 * TCP engine scripted per request), through the real server and the stock
 * `openai` client with its own retries off: a call reaches an engine a second
 * time only when the first provably never started it, every attempt is in the
 * trace, and every call ends within its timeouts with the status docs/api.md
 * ("Errors") and docs/configuration.md ("One generation per call") give.
 * Run against both transports.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { malformedVariants, startMisbehavingEngine, type Behaviour, type MisbehavingEngine } from './helpers/misbehaving-engine.js';
import { startTestGateway, type TestGateway } from './helpers/test-gateway.js';

/** Chat requests each engine read in full: the generations it would have run. */
const generationsOf = (engine: MisbehavingEngine): number =>
  engine.requests().filter((request) => request.path.endsWith('/chat/completions')).length;

describe.each(['http1', 'undici'] as const)('with the %s transport', (transport) => {
  let first: MisbehavingEngine;
  let second: MisbehavingEngine;
  let taskgate: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    [first, second] = await Promise.all([startMisbehavingEngine(), startMisbehavingEngine()]);
    const engine = (id: string, url: string) =>
      `  - { id: ${id}, type: openai, base_url: "${url}", transport: ${transport}, timeout_ms: 600, idle_timeout_ms: 600, circuit_breaker: { failures: 1000 } }`;
    taskgate = await startTestGateway(`engines:
${engine('first', first.baseUrl)}
${engine('second', second.baseUrl)}
models:
  - { id: solo, served_by: [{ engine: first }], price: { input: 1, output: 1 }, context_window: 4096 }
  - { id: pair, served_by: [{ engine: first }, { engine: second }], price: { input: 1, output: 1 }, context_window: 4096 }`);
    client = taskgate.client(undefined, { maxRetries: 0 });
  });
  afterAll(async () => {
    await taskgate.stop();
    await Promise.all([first.close(), second.close()]);
  });
  beforeEach(() => {
    first.setScript({ kind: 'reply' });
    second.setScript({ kind: 'reply' });
  });

  const generations = (): number => generationsOf(first) + generationsOf(second);

  /** One call through the gateway: its status, error code and trace, and the generations it cost. */
  async function call(model: string, stream = false) {
    const before = generations();
    const response = await taskgate.postChat({ model, messages: [{ role: 'user', content: 'hi' }], stream });
    const text = await response.text();
    const code = response.ok ? null : (JSON.parse(text) as { error: { code: string } }).error.code;
    const trace = await taskgate.traceOf(response.headers.get('x-request-id'));
    return { status: response.status, code, text, trace, cost: generations() - before };
  }

  /** The next chat request, on whichever engine, behaves as `behaviour`; the ones after it reply. */
  function nextChat(behaviour: Behaviour): void {
    let seen = false;
    const script = (request: { path: string }): Behaviour => {
      if (seen || !request.path.endsWith('/chat/completions')) return { kind: 'reply' };
      seen = true;
      return behaviour;
    };
    first.setScript(script);
    second.setScript(script);
  }

  it('a reused keep-alive connection the engine closes after reading the request: one generation and a 502, with idle connections to spare and with two replicas', async () => {
    // Three idle connections to the first engine.
    await Promise.all(
      [1, 2, 3].map(() => client.chat.completions.create({ model: 'solo', messages: [{ role: 'user', content: 'warm' }] })),
    );
    first.setScript({ kind: 'close' });
    expect(await call('solo')).toMatchObject({ status: 502, code: 'engine_connection_closed', cost: 1 });
    second.setScript({ kind: 'close' });
    const pair = await call('pair');
    expect(pair).toMatchObject({ status: 502, code: 'engine_connection_closed', cost: 1 });
    expect(pair.trace).toMatchObject({ httpStatus: 502, errorClass: 'engine_connection_closed', attempts: null });
  });

  it('an engine that dies only on the first copy: the client hears 502 after one generation, and its own retry is served', async () => {
    nextChat({ kind: 'close' });
    expect(await call('pair')).toMatchObject({ status: 502, code: 'engine_connection_closed', cost: 1 });
    expect(await call('pair')).toMatchObject({ status: 200, cost: 1 });
  });

  it('a stall: 504 within the timeout after one generation, no failover, and the abandoned request is cancelled at the engine', async () => {
    first.setScript({ kind: 'stall' });
    second.setScript({ kind: 'stall' });
    const closedBefore = first.closedByClient().length + second.closedByClient().length;
    const stalled = await call('pair');
    expect(stalled).toMatchObject({ status: 504, code: 'engine_timeout', cost: 1 });
    expect(first.closedByClient().length + second.closedByClient().length).toBe(closedBefore + 1);
    const streamed = await call('pair', true);
    expect(streamed).toMatchObject({ status: 504, code: 'engine_timeout', cost: 1 });
  });

  it.each([...malformedVariants, 'trailing-bytes', 'gzip'] as const)(
    'a reply that is %s: 502 engine_bad_reply after one generation, and the connection is never reused',
    async (variant) => {
      const behaviour: Behaviour =
        variant === 'trailing-bytes' ? { kind: 'trailing-bytes' } : variant === 'gzip' ? { kind: 'gzip' } : { kind: 'malformed', variant };
      first.setScript(behaviour);
      second.setScript(behaviour);
      const bad = await call('pair');
      expect(bad).toMatchObject({ status: 502, code: 'engine_bad_reply', cost: 1 });
      expect(bad.trace).toMatchObject({ httpStatus: 502, errorClass: 'engine_bad_reply' });
      first.setScript({ kind: 'reply' });
      second.setScript({ kind: 'reply' });
      const connectionsBefore = first.connections().length + second.connections().length;
      const served = await call('pair');
      expect(served).toMatchObject({ status: 200, cost: 1 });
      const fresh = [first, second].flatMap((engine) => engine.requests().slice(-1)).filter((request) => request.onConnection === 1);
      expect(first.connections().length + second.connections().length >= connectionsBefore).toBe(true);
      expect(fresh.length).toBeGreaterThan(0);
    },
  );

  it('a refusal (503 or 429) before any work goes once to the other replica, and the trace shows both attempts', async () => {
    for (const status of [503, 429] as const) {
      first.setScript({ kind: 'refuse', status, retryAfterSeconds: 2 });
      second.setScript({ kind: 'reply', content: 'the other replica' });
      // Whichever replica the pool picks first, the call ends on the second engine.
      const results = [await call('pair'), await call('pair')];
      for (const result of results) expect(result).toMatchObject({ status: 200 });
      const resent = results.find((result) => result.trace?.attempts !== null);
      expect(resent?.trace?.attempts).toEqual([
        { replica: 'first', outcome: status === 503 ? 'engine_unavailable' : 'engine_overloaded' },
        { replica: 'second', outcome: 'ok' },
      ]);
    }
    first.setScript({ kind: 'refuse', status: 503 });
    second.setScript({ kind: 'refuse', status: 503 });
    const refused = await call('pair');
    expect(refused).toMatchObject({ status: 503, code: 'engine_unavailable' });
    expect(refused.trace?.attempts?.map((attempt) => attempt.outcome)).toEqual(['engine_unavailable', 'engine_unavailable']);
  });

  it('a stream the engine cuts short ends with an error event, not [DONE], after one generation', async () => {
    first.setScript({ kind: 'stream', events: 5, closeAfter: 2 });
    second.setScript({ kind: 'stream', events: 5, closeAfter: 2 });
    const cut = await call('pair', true);
    expect(cut.status).toBe(200);
    expect(cut.cost).toBe(1);
    expect(cut.text).toContain('event: error');
    expect(cut.text).not.toContain('[DONE]');
  });
});
