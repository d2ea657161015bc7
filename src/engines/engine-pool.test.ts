import { describe, expect, it } from 'vitest';
import {
  ClientAbortError,
  EngineError,
  EngineTimeoutError,
  EngineUnavailableError,
  GatewayError,
  InvalidRequestError,
} from '../api/errors.js';
import type { GenerationParameters } from '../api/chat-types.js';
import { silentLogger } from '../log/logger.js';
import type { Engine, EngineChunk, EngineCompletion, EngineRequest } from './engine.js';
import { createModelPool, type ModelPool } from './engine-pool.js';

/** What the fake engine does on one call. */
type Behaviour =
  { kind: 'ok'; chunks?: number } | { kind: 'fail'; error: Error; afterChunks?: number } | { kind: 'hang' } | { kind: 'empty' };

const chunk = (text: string): EngineChunk => ({ choices: [{ index: 0, delta: { content: text }, finish_reason: null }] });
const completion: EngineCompletion = {
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: null,
};

class FakeEngine implements Engine {
  readonly requests: EngineRequest[] = [];
  /** Streams whose generator has finished, however it ended. */
  streamsClosed = 0;
  private readonly queue: Behaviour[] = [];
  standing: Behaviour = { kind: 'ok' };

  constructor(readonly id: string) {}

  then(...behaviours: Behaviour[]): this {
    this.queue.push(...behaviours);
    return this;
  }

  private behaviour(request: EngineRequest): Behaviour {
    this.requests.push(request);
    return this.queue.shift() ?? this.standing;
  }

  async complete(request: EngineRequest, signal: AbortSignal): Promise<EngineCompletion> {
    const behaviour = this.behaviour(request);
    if (behaviour.kind === 'fail') throw behaviour.error;
    if (behaviour.kind === 'hang') await abortOf(signal);
    return completion;
  }

  async *stream(request: EngineRequest, signal: AbortSignal): AsyncGenerator<EngineChunk[]> {
    const behaviour = this.behaviour(request);
    try {
      await Promise.resolve();
      if (behaviour.kind === 'empty') return;
      if (behaviour.kind === 'hang') return await abortOf(signal);
      const count = behaviour.kind === 'ok' ? (behaviour.chunks ?? 3) : (behaviour.afterChunks ?? 0);
      for (let index = 0; index < count; index++) {
        if (signal.aborted) throw new ClientAbortError();
        yield [chunk(`${this.id}-${index}`)];
      }
      if (behaviour.kind === 'fail') throw behaviour.error;
    } finally {
      this.streamsClosed += 1;
    }
  }

  async checkReady(): Promise<void> {}
  async close(): Promise<void> {}
}

function abortOf(signal: AbortSignal): Promise<never> {
  if (signal.aborted) return Promise.reject(new ClientAbortError());
  return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new ClientAbortError()), { once: true }));
}

const parameters: GenerationParameters = { messages: [{ role: 'user', content: 'hi' }] };
const live = (): AbortSignal => new AbortController().signal;
const engineError = (): EngineError => new EngineError('boom');
/** A refusal before any work (connection refused, 503): the one kind of failure sent to another replica. */
const refused = (): EngineUnavailableError => new EngineUnavailableError('refused');

function poolOf(engines: FakeEngine[], clock = { now: 0 }): ModelPool {
  return createModelPool({
    modelId: 'qwen-7b',
    replicas: engines.map((engine) => ({ engine, modelName: `${engine.id}/Qwen` })),
    logger: silentLogger,
    now: () => clock.now,
  });
}

async function failure(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise;
  } catch (error) {
    return error as GatewayError;
  }
  throw new Error('expected a failure');
}

async function drain(chunks: AsyncIterator<EngineChunk[]>): Promise<string[]> {
  const texts: string[] = [];
  for (let next = await chunks.next(); next.done !== true; next = await chunks.next())
    for (const chunk of next.value) texts.push(chunk.choices[0]?.delta.content ?? '');
  return texts;
}

describe('ModelPool.complete', () => {
  it('sends the replica’s model name and balances concurrent calls by in-flight count', async () => {
    const engines = [new FakeEngine('a'), new FakeEngine('b')];
    engines.forEach((engine) => (engine.standing = { kind: 'hang' }));
    const pool = poolOf(engines);
    const controller = new AbortController();
    const calls = [1, 2, 3, 4].map(() => pool.complete(parameters, controller.signal).catch((error: unknown) => error));
    expect(pool.inFlight()).toBe(4);
    expect(pool.replicaStates()).toEqual([
      { replica: 'a', inFlight: 2, circuit: 'closed' },
      { replica: 'b', inFlight: 2, circuit: 'closed' },
    ]);
    expect(engines[0]!.requests[0]!.model).toBe('a/Qwen');
    controller.abort();
    for (const result of await Promise.all(calls)) expect(result).toBeInstanceOf(ClientAbortError);
    expect(pool.inFlight()).toBe(0);
    expect(pool.replicaStates().map((state) => state.circuit)).toEqual(['closed', 'closed']);
  });

  it('sends a call the first replica refused to another, names the replica that served, and records both attempts', async () => {
    const engines = [new FakeEngine('a').then({ kind: 'fail', error: refused() }), new FakeEngine('b')];
    const attempt = {
      replica: null as string | null,
      engineSeconds: null,
      measuredCostUsd: null,
      attempts: null as Array<{ replica: string; outcome: string }> | null,
    };
    const result = await poolOf(engines).complete(parameters, live(), attempt);
    expect(result.replica).toBe('b');
    expect(engines.map((engine) => engine.requests.length)).toEqual([1, 1]);
    expect(attempt.attempts).toEqual([
      { replica: 'a', outcome: 'engine_unavailable' },
      { replica: 'b', outcome: 'ok' },
    ]);
  });

  it('never sends a call again once an engine may have started it (5xx, timeout, closed connection, bad reply)', async () => {
    const started = [
      engineError(),
      new EngineTimeoutError('slow'),
      new EngineError('closed', undefined, 'engine_connection_closed'),
      new EngineError('bad', undefined, 'engine_bad_reply'),
    ];
    for (const error of started) {
      const engines = [new FakeEngine('a').then({ kind: 'fail', error }), new FakeEngine('b')];
      const attempt = { replica: null as string | null, engineSeconds: null, measuredCostUsd: null, attempts: null };
      expect(await failure(poolOf(engines).complete(parameters, live(), attempt))).toBe(error);
      expect(engines.map((engine) => engine.requests.length)).toEqual([1, 0]);
      expect(attempt).toMatchObject({ replica: 'a', attempts: null });
      const streamed = [new FakeEngine('a').then({ kind: 'fail', error }), new FakeEngine('b')];
      expect(await failure(poolOf(streamed).openStream(parameters, live()))).toBe(error);
      expect(streamed.map((engine) => engine.requests.length)).toEqual([1, 0]);
    }
  });

  it('records the replica tried last, so a failed call can be traced to it', async () => {
    const engine = new FakeEngine('a').then({ kind: 'fail', error: engineError() }, { kind: 'fail', error: engineError() });
    const attempt = { replica: null as string | null, engineSeconds: null, measuredCostUsd: null, attempts: null };
    await failure(poolOf([engine]).complete(parameters, live(), attempt));
    expect(attempt.replica).toBe('a');
    const streamed = { replica: null as string | null, engineSeconds: null, measuredCostUsd: null, attempts: null };
    await failure(poolOf([engine]).openStream(parameters, live(), streamed));
    expect(streamed.replica).toBe('a');
  });

  it('sends again only once and never to the same replica', async () => {
    const engines = ['a', 'b', 'c'].map((id) => new FakeEngine(id));
    engines[0]!.then({ kind: 'fail', error: new EngineTimeoutError('no connection', undefined, true) });
    engines[1]!.then({ kind: 'fail', error: new EngineUnavailableError('down') });
    const error = await failure(poolOf(engines).complete(parameters, live()));
    expect(error).toBeInstanceOf(EngineUnavailableError);
    expect(engines.map((engine) => engine.requests.length)).toEqual([1, 1, 0]);
    const single = new FakeEngine('only').then({ kind: 'fail', error: refused() });
    expect(await failure(poolOf([single]).complete(parameters, live()))).toBeInstanceOf(EngineUnavailableError);
    expect(single.requests).toHaveLength(1);
  });

  it('does not retry an invalid request or an abort', async () => {
    for (const error of [new InvalidRequestError('too long'), new ClientAbortError()]) {
      const engines = [new FakeEngine('a').then({ kind: 'fail', error }), new FakeEngine('b')];
      expect(await failure(poolOf(engines).complete(parameters, live()))).toBe(error);
      expect(engines[1]!.requests).toHaveLength(0);
    }
  });

  it('takes a failing replica out, then fails with no_healthy_replica, then readmits it through a trial', async () => {
    const clock = { now: 0 };
    const engine = new FakeEngine('a');
    engine.standing = { kind: 'fail', error: engineError() };
    const pool = poolOf([engine], clock);
    for (let call = 0; call < 3; call++) await failure(pool.complete(parameters, live()));
    expect(pool.replicaStates()[0]!.circuit).toBe('open');
    const error = await failure(pool.complete(parameters, live()));
    expect({ code: error.code, status: error.status, retryAfter: error.headers?.['retry-after'] }).toEqual({
      code: 'no_healthy_replica',
      status: 503,
      retryAfter: '5',
    });
    expect(error.message).toContain('qwen-7b');
    expect(engine.requests).toHaveLength(3);
    clock.now = 5_000;
    engine.standing = { kind: 'ok' };
    expect(pool.replicaStates()[0]!.circuit).toBe('half-open');
    expect((await pool.complete(parameters, live())).replica).toBe('a');
    expect(pool.replicaStates()[0]!.circuit).toBe('closed');
  });

  it('does not count invalid requests or aborts against the circuit', async () => {
    const engine = new FakeEngine('a');
    engine.standing = { kind: 'fail', error: new InvalidRequestError('bad') };
    const pool = poolOf([engine]);
    for (let call = 0; call < 5; call++) await failure(pool.complete(parameters, live()));
    expect(pool.replicaStates()[0]!.circuit).toBe('closed');
  });

  it('routes around an open circuit to the healthy replica', async () => {
    const engines = [new FakeEngine('a'), new FakeEngine('b')];
    engines[0]!.standing = { kind: 'fail', error: refused() };
    const pool = poolOf(engines);
    for (let call = 0; call < 6; call++) expect((await pool.complete(parameters, live())).replica).toBe('b');
    expect(pool.replicaStates()[0]!.circuit).toBe('open');
  });
});

describe('ModelPool.openStream', () => {
  it('resolves after the first chunk and yields it first', async () => {
    const pool = poolOf([new FakeEngine('a')]);
    const { replica, chunks } = await pool.openStream(parameters, live());
    expect(replica).toBe('a');
    expect(pool.inFlight()).toBe(1);
    expect(await drain(chunks)).toEqual(['a-0', 'a-1', 'a-2']);
    expect(pool.inFlight()).toBe(0);
    expect(await chunks.next()).toEqual({ done: true, value: undefined });
  });

  it('sends a stream the first replica refused to another', async () => {
    const engines = [new FakeEngine('a').then({ kind: 'fail', error: refused() }), new FakeEngine('b')];
    const pool = poolOf(engines);
    const { replica, chunks } = await pool.openStream(parameters, live());
    expect(replica).toBe('b');
    expect(await drain(chunks)).toEqual(['b-0', 'b-1', 'b-2']);
    expect(pool.inFlight()).toBe(0);
  });

  it('surfaces an invalid request before the first chunk without retrying', async () => {
    const engines = [new FakeEngine('a').then({ kind: 'fail', error: new InvalidRequestError('nope') }), new FakeEngine('b')];
    expect(await failure(poolOf(engines).openStream(parameters, live()))).toBeInstanceOf(InvalidRequestError);
    expect(engines[1]!.requests).toHaveLength(0);
  });

  it('resolves a stream with zero chunks to an iterator that is done at once', async () => {
    const pool = poolOf([new FakeEngine('a').then({ kind: 'empty' })]);
    const { chunks } = await pool.openStream(parameters, live());
    expect(await chunks.next()).toEqual({ done: true, value: undefined });
    expect(pool.inFlight()).toBe(0);
  });

  it('propagates an error after the first chunk from next() and counts it against the circuit', async () => {
    const engine = new FakeEngine('a');
    engine.standing = { kind: 'fail', error: engineError(), afterChunks: 1 };
    const other = new FakeEngine('b');
    const pool = poolOf([engine, other]);
    for (let call = 0; call < 3; call++) {
      const opened = await pool.openStream(parameters, live());
      if (opened.replica !== 'a') {
        await drain(opened.chunks);
        call -= 1;
        continue;
      }
      expect((await opened.chunks.next()).value?.[0]?.choices[0]?.delta.content).toBe('a-0');
      expect(await failure(opened.chunks.next())).toBeInstanceOf(EngineError);
      expect(pool.inFlight()).toBe(0);
    }
    expect(pool.replicaStates()[0]!.circuit).toBe('open');
    expect(other.requests.length).toBeGreaterThan(0);
  });

  it('return() cancels the engine stream and releases the replica exactly once', async () => {
    const engine = new FakeEngine('a');
    const pool = poolOf([engine]);
    const { chunks } = await pool.openStream(parameters, live());
    await chunks.next();
    await chunks.return!();
    await chunks.return!();
    expect(engine.streamsClosed).toBe(1);
    expect(pool.inFlight()).toBe(0);
    expect(pool.replicaStates()[0]).toEqual({ replica: 'a', inFlight: 0, circuit: 'closed' });
    expect(await chunks.next()).toEqual({ done: true, value: undefined });
  });

  it('an abort releases the replica at once and next() then throws ClientAbortError', async () => {
    const engine = new FakeEngine('a');
    const pool = poolOf([engine]);
    const controller = new AbortController();
    const { chunks } = await pool.openStream(parameters, controller.signal);
    await chunks.next();
    controller.abort();
    expect(pool.inFlight()).toBe(0);
    expect(await failure(chunks.next())).toBeInstanceOf(ClientAbortError);
    expect(pool.inFlight()).toBe(0);
    expect(pool.replicaStates()[0]!.circuit).toBe('closed');
  });

  it('an abort before the first chunk surfaces without a retry', async () => {
    const engines = [new FakeEngine('a').then({ kind: 'hang' }), new FakeEngine('b')];
    const pool = poolOf(engines);
    const controller = new AbortController();
    const opening = pool.openStream(parameters, controller.signal);
    controller.abort();
    expect(await failure(opening)).toBeInstanceOf(ClientAbortError);
    expect(engines[1]!.requests).toHaveLength(0);
    expect(pool.inFlight()).toBe(0);
  });

  it('works with for-await, and break cancels upstream', async () => {
    const engine = new FakeEngine('a');
    const pool = poolOf([engine]);
    const { chunks } = await pool.openStream(parameters, live());
    const iterable = { [Symbol.asyncIterator]: () => chunks };
    for await (const batch of iterable) if (batch[0]?.choices[0]?.delta.content === 'a-0') break;
    expect(engine.streamsClosed).toBe(1);
    expect(pool.inFlight()).toBe(0);
  });
});
