/**
 * A fake engine server on raw TCP (node:net, 127.0.0.1, random port) whose
 * behaviour is scripted per request, for the wire cases that node:http will
 * not produce: malformed replies, connections closed at the worst moment,
 * stalls, stray bytes. It keeps the facts a test needs to prove what a client
 * did: every request it read in full (its "generations"), every connection,
 * which side closed each one and when, and how far a reply got.
 *
 *   const engine = await startMisbehavingEngine((request) =>
 *     request.ordinal === 1 ? { kind: 'close' } : { kind: 'reply' });   // first copy dies, second succeeds
 *   ... engine.origin ... engine.baseUrl ... engine.generations() ... engine.closedByClient() ...
 *   await engine.close();
 *
 * Good replies are what taskgate's `openai` engine expects from vLLM (see
 * `scripted-engine.ts`): `GET /v1/models` lists the engine's model, and a chat
 * completion is JSON with a content-length, or (`stream: true`) SSE in chunked
 * encoding ending with `data: [DONE]`. Connections are kept alive after a good
 * reply, so the next request may reuse them.
 */
import { once } from 'node:events';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { gzipSync } from 'node:zlib';

export type Behaviour =
  /** The good reply for the path: the model list, or a chat completion (SSE when the body says `stream: true`). */
  | { kind: 'reply'; content?: string; delayMs?: number; headers?: Array<[string, string]> }
  /** A chat completion as JSON with a content-length, whatever the body asks. */
  | { kind: 'json'; content?: string; delayMs?: number; headers?: Array<[string, string]> }
  /**
   * SSE, chunked: a role chunk, `events` content chunks `gapMs` apart, the finish chunk, `[DONE]`.
   * `endless`: content chunks every `gapMs` until the client goes. `eventBytes`: each content chunk padded to about that size.
   * `closeAfter`: the engine closes the connection after that many content chunks (a reply cut short).
   */
  | { kind: 'stream'; events?: number; gapMs?: number; endless?: boolean; eventBytes?: number; closeAfter?: number }
  /** An endless SSE stream written as fast as the socket takes it (waiting for `drain`): for backpressure. */
  | { kind: 'flood'; eventBytes?: number }
  /** Closes the connection right after reading the request: no reply. */
  | { kind: 'close' }
  /** Reads the request and sends nothing. */
  | { kind: 'stall' }
  /** Sends a JSON reply's head (with its content-length) and nothing more. */
  | { kind: 'head-then-stall' }
  /** A reply that is not valid HTTP/1.1; the connection is left open (closing it is the client's job) and serves the next request. */
  | { kind: 'malformed'; variant: MalformedVariant }
  /** A good JSON reply with `bytes` after it in the same write. */
  | { kind: 'trailing-bytes'; bytes?: string }
  /** A good JSON reply, then `bytes` on the idle connection `afterMs` later. */
  | { kind: 'stray-later'; afterMs?: number; bytes?: string }
  /** A good JSON reply, then the engine closes the connection if no request came on it within `afterMs`. */
  | { kind: 'close-idle'; afterMs: number }
  /** A JSON chat completion with `content-encoding: gzip`. */
  | { kind: 'gzip'; content?: string }
  /** An overloaded engine's refusal (vLLM's 503, a proxy's 429) with `retry-after`. */
  | { kind: 'refuse'; status: 429 | 503; retryAfterSeconds?: number }
  /** An error reply (500 unless told). */
  | { kind: 'error'; status?: number; message?: string };

export type MalformedVariant = (typeof malformedVariants)[number];

/** Each reply the framing rules refuse (RFC 9112): both framings, two lengths, a folded header, bad status lines, garbage, a 1 MB head, a transfer-encoding that is not chunked. */
export const malformedVariants = [
  'te-and-cl',
  'two-lengths-same',
  'two-lengths-different',
  'folded-header',
  'status-2000',
  'status-http2',
  'status-htp',
  'garbage',
  'huge-head',
  'te-not-chunked',
] as const;

export interface EngineRequest {
  /** 1-based, in the order the engine read requests in full. */
  readonly ordinal: number;
  /** 1-based ordinal of the connection it came on. */
  readonly connection: number;
  /** 1-based: the how-manieth request on its connection (above 1: a reused connection). */
  readonly onConnection: number;
  readonly method: string;
  readonly path: string;
  /** Lower-case names; repeated fields joined with `, `. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** The body parsed, when it is a JSON object. */
  readonly json: Record<string, unknown> | null;
}

export interface RequestRecord extends EngineRequest {
  readonly behaviour: Behaviour;
  /** Bytes of reply written to the socket (accepted by `write`, not necessarily read). */
  readonly bytesWritten: number;
  /** Writes that found the socket's buffer full (the client was not reading). */
  readonly blockedWrites: number;
  /** The whole reply was written. */
  readonly replied: boolean;
  /** When the client closed the connection while this request was its last (ms since the epoch), or null. */
  readonly clientClosedAt: number | null;
}

export interface ConnectionRecord {
  /** 1-based, in accept order. */
  readonly id: number;
  readonly openedAt: number;
  readonly closedAt: number | null;
  /** Who closed it first: the client (FIN or reset), the engine (its script or `close()`), or nobody yet. */
  readonly closedBy: 'client' | 'engine' | null;
  /** Ordinals of the requests read on it. */
  readonly requests: readonly number[];
}

export type Script = Behaviour | ((request: EngineRequest) => Behaviour);

export interface MisbehavingEngine {
  /** `http://127.0.0.1:<port>/v1` */
  readonly baseUrl: string;
  /** `http://127.0.0.1:<port>` */
  readonly origin: URL;
  /** Requests read in full: each is a generation the engine would have started. */
  generations(): number;
  requests(): readonly RequestRecord[];
  connections(): readonly ConnectionRecord[];
  closedByClient(): readonly ConnectionRecord[];
  /** Replaces the script for the requests that follow. */
  setScript(script: Script): void;
  /** Resolves once `condition()` holds; rejects after `timeoutMs` naming `what`. */
  waitFor(condition: () => boolean, what: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

interface MutableRequest extends RequestRecord {
  bytesWritten: number;
  blockedWrites: number;
  replied: boolean;
  clientClosedAt: number | null;
}

interface MutableConnection extends ConnectionRecord {
  closedAt: number | null;
  closedBy: 'client' | 'engine' | null;
  requests: number[];
}

const maxRequestHeadBytes = 64 * 1024;

export async function startMisbehavingEngine(
  script: Script = { kind: 'reply' },
  options: { model?: string } = {},
): Promise<MisbehavingEngine> {
  const model = options.model ?? 'misbehaving';
  const requests: MutableRequest[] = [];
  const connections: MutableConnection[] = [];
  const sockets = new Set<Socket>();
  let current = script;

  const server = createServer((socket) => {
    const record: MutableConnection = { id: connections.length + 1, openedAt: Date.now(), closedAt: null, closedBy: null, requests: [] };
    connections.push(record);
    sockets.add(socket);
    new EngineConnection(socket, record, {
      nextOrdinal: () => requests.length + 1,
      behaviourFor: (request) => (typeof current === 'function' ? current(request) : current),
      recordRequest: (request) => requests.push(request),
      model,
    });
    socket.once('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    origin: new URL(`http://127.0.0.1:${port}`),
    generations: () => requests.length,
    requests: () => requests,
    connections: () => connections,
    closedByClient: () => connections.filter((connection) => connection.closedBy === 'client'),
    setScript(next) {
      current = next;
    },
    async waitFor(condition, what, timeoutMs = 2_000) {
      const deadline = Date.now() + timeoutMs;
      while (!condition()) {
        if (Date.now() > deadline) throw new Error(`misbehaving engine: ${what} did not happen within ${timeoutMs} ms`);
        await sleep(5);
      }
    },
    async close() {
      for (const connection of connections) if (connection.closedBy === null) connection.closedBy = 'engine';
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

interface EngineHooks {
  nextOrdinal(): number;
  behaviourFor(request: EngineRequest): Behaviour;
  recordRequest(request: MutableRequest): void;
  model: string;
}

/** One accepted connection: reads requests one at a time (no pipelining) and plays each one's behaviour. */
class EngineConnection {
  private pending = Buffer.alloc(0);
  /** A reply is being played: what arrives meanwhile waits. */
  private busy = false;
  /** The request whose reply was last played here. */
  private last: MutableRequest | null = null;
  private idleTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly socket: Socket,
    private readonly record: MutableConnection,
    private readonly hooks: EngineHooks,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (bytes: Buffer) => {
      this.pending = Buffer.concat([this.pending, bytes]);
      this.next();
    });
    // A client that goes away sends FIN (`end`) or a reset (`error`); either way, note it before `close`.
    socket.on('end', () => this.closed('client'));
    socket.on('error', () => this.closed('client'));
    socket.on('close', () => {
      this.closed('client');
      if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    });
  }

  private get gone(): boolean {
    return this.socket.destroyed || this.record.closedAt !== null;
  }

  private closed(by: 'client' | 'engine'): void {
    if (this.record.closedAt !== null) return;
    this.record.closedAt = Date.now();
    this.record.closedBy ??= by;
    if (this.record.closedBy === 'client' && this.last !== null) this.last.clientClosedAt = this.record.closedAt;
    this.socket.destroy();
  }

  /** The engine closes the connection itself. */
  private hangUp(): void {
    this.record.closedBy ??= 'engine';
    this.closed('engine');
  }

  /** Parses and plays the next whole request, if one has arrived and none is playing. */
  private next(): void {
    if (this.busy || this.gone) return;
    const headEnd = this.pending.indexOf('\r\n\r\n');
    if (headEnd === -1) {
      if (this.pending.length > maxRequestHeadBytes) this.badRequest();
      return;
    }
    const lines = this.pending.toString('latin1', 0, headEnd).split('\r\n');
    const [method = '', path = ''] = (lines[0] ?? '').split(' ');
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon <= 0) return this.badRequest();
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    }
    if (headers['transfer-encoding'] !== undefined) return this.badRequest();
    const length = Number(headers['content-length'] ?? '0');
    const bodyStart = headEnd + 4;
    if (this.pending.length < bodyStart + length) return;
    const body = this.pending.toString('utf8', bodyStart, bodyStart + length);
    this.pending = this.pending.subarray(bodyStart + length);
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    this.idleTimer = null;

    const request: EngineRequest = {
      ordinal: this.hooks.nextOrdinal(),
      connection: this.record.id,
      onConnection: this.record.requests.length + 1,
      method,
      path,
      headers,
      body,
      json: parseObject(body),
    };
    const behaviour = this.hooks.behaviourFor(request);
    const record: MutableRequest = { ...request, behaviour, bytesWritten: 0, blockedWrites: 0, replied: false, clientClosedAt: null };
    this.hooks.recordRequest(record);
    this.record.requests.push(request.ordinal);
    this.last = record;
    this.busy = true;
    new Reply(this, record, this.hooks.model).play(behaviour).then(
      () => this.replied(record, behaviour),
      () => this.hangUp(),
    );
  }

  /** A reply was played: the connection may carry the next request, unless the behaviour said otherwise. */
  private replied(request: MutableRequest, behaviour: Behaviour): void {
    if (!request.replied || this.gone) return;
    this.busy = false;
    if (behaviour.kind === 'close-idle') {
      this.idleTimer = setTimeout(() => this.hangUp(), behaviour.afterMs);
    } else if (behaviour.kind === 'stray-later') {
      this.idleTimer = setTimeout(() => this.write(request, behaviour.bytes ?? strayReply), behaviour.afterMs ?? 50);
    }
    this.next();
  }

  private badRequest(): void {
    this.socket.write('HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
    this.hangUp();
  }

  /** For `Reply`: writes unless the connection is gone; resolves once the socket can take more. */
  async write(request: MutableRequest, bytes: string | Buffer): Promise<void> {
    if (this.gone) return;
    const length = typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.length;
    request.bytesWritten += length;
    if (this.socket.write(bytes)) return;
    request.blockedWrites += 1;
    await Promise.race([once(this.socket, 'drain'), once(this.socket, 'close')]);
  }

  isGone(): boolean {
    return this.gone;
  }

  close(): void {
    this.hangUp();
  }
}

/** What a stray reply on an idle connection looks like: a whole, valid response nobody asked for. */
const strayReply = 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok';

/** One request's reply being played. */
class Reply {
  private readonly id: string;
  private readonly created = Math.floor(Date.now() / 1000);

  constructor(
    private readonly connection: EngineConnection,
    private readonly request: MutableRequest,
    private readonly model: string,
  ) {
    this.id = `chatcmpl-misbehaving-${request.ordinal}`;
  }

  async play(behaviour: Behaviour): Promise<void> {
    switch (behaviour.kind) {
      case 'reply':
        if (behaviour.delayMs !== undefined) await sleep(behaviour.delayMs);
        if (this.request.method === 'GET' && this.request.path.endsWith('/models')) {
          return this.finish(jsonReply(200, { object: 'list', data: [{ id: this.model, object: 'model', owned_by: 'taskgate-test' }] }));
        }
        if (this.request.json?.stream === true) return this.stream({ kind: 'stream' });
        return this.finish(jsonReply(200, this.completion(behaviour.content), behaviour.headers));
      case 'json':
        if (behaviour.delayMs !== undefined) await sleep(behaviour.delayMs);
        return this.finish(jsonReply(200, this.completion(behaviour.content), behaviour.headers));
      case 'stream':
        return this.stream(behaviour);
      case 'flood':
        return this.flood(behaviour.eventBytes ?? 16 * 1024);
      case 'close':
        return this.connection.close();
      case 'stall':
        return;
      case 'head-then-stall': {
        const reply = jsonReply(200, this.completion());
        await this.connection.write(this.request, reply.subarray(0, reply.indexOf('\r\n\r\n') + 4));
        return;
      }
      case 'malformed':
        // Counted as replied: a client that wrongly reuses the connection gets its next request answered, and the test sees the reuse.
        return this.finish(Buffer.from(malformedReply(behaviour.variant, JSON.stringify(this.completion()))));
      case 'trailing-bytes':
        return this.finish(Buffer.concat([jsonReply(200, this.completion()), Buffer.from(behaviour.bytes ?? strayReply)]));
      case 'stray-later':
      case 'close-idle':
        return this.finish(jsonReply(200, this.completion()));
      case 'gzip': {
        const body = gzipSync(JSON.stringify(this.completion(behaviour.content)));
        const head = `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\ncontent-length: ${body.length}\r\n\r\n`;
        return this.finish(Buffer.concat([Buffer.from(head), body]));
      }
      case 'refuse': {
        const seconds = behaviour.retryAfterSeconds ?? 1;
        const message = behaviour.status === 503 ? 'the engine is overloaded' : 'too many requests';
        return this.finish(
          jsonReply(behaviour.status, { error: { message, type: 'server_error', code: behaviour.status } }, [
            ['retry-after', String(seconds)],
          ]),
        );
      }
      case 'error':
        return this.finish(
          jsonReply(behaviour.status ?? 500, {
            error: { message: behaviour.message ?? 'engine failure', type: 'server_error', code: behaviour.status ?? 500 },
          }),
        );
    }
  }

  private async finish(bytes: Buffer): Promise<void> {
    await this.connection.write(this.request, bytes);
    this.request.replied = !this.connection.isGone();
  }

  private completion(content?: string): Record<string, unknown> {
    const text = content ?? `echo: ${lastUserText(this.request.json)}`;
    const completionTokens = wordCount(text);
    const promptTokens = wordCount(lastUserText(this.request.json));
    return {
      id: this.id,
      object: 'chat.completion',
      created: this.created,
      model: this.request.json?.model ?? this.model,
      choices: [{ index: 0, message: { role: 'assistant', content: text, tool_calls: [] }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
    };
  }

  private chunkEvent(delta: Record<string, unknown>, finishReason: string | null = null): string {
    const chunk = {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.request.json?.model ?? this.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    };
    return `data: ${JSON.stringify(chunk)}\n\n`;
  }

  private async stream(behaviour: Extract<Behaviour, { kind: 'stream' }>): Promise<void> {
    const write = (text: string) => this.connection.write(this.request, chunked(text));
    await this.connection.write(
      this.request,
      `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n`,
    );
    await write(this.chunkEvent({ role: 'assistant', content: '' }));
    const events = behaviour.endless === true ? Number.POSITIVE_INFINITY : (behaviour.events ?? 3);
    const words: string[] = [];
    for (let index = 0; index < events && !this.connection.isGone(); index++) {
      if (behaviour.closeAfter === index) return this.connection.close();
      if (behaviour.gapMs !== undefined) await sleep(behaviour.gapMs);
      const word = `word${index} ${'x'.repeat(Math.max(0, (behaviour.eventBytes ?? 0) - 200))}`;
      words.push(word);
      await write(this.chunkEvent({ content: word }));
    }
    if (this.connection.isGone()) return;
    await write(this.chunkEvent({}, 'stop'));
    const streamOptions = this.request.json?.stream_options as { include_usage?: unknown } | undefined;
    if (streamOptions?.include_usage === true) {
      const promptTokens = wordCount(lastUserText(this.request.json));
      const usage = { prompt_tokens: promptTokens, completion_tokens: words.length, total_tokens: promptTokens + words.length };
      await write(
        `data: ${JSON.stringify({ id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.request.json?.model ?? this.model, choices: [], usage })}\n\n`,
      );
    }
    await write('data: [DONE]\n\n');
    await this.finish(Buffer.from('0\r\n\r\n'));
  }

  private async flood(eventBytes: number): Promise<void> {
    await this.connection.write(this.request, `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n`);
    const event = chunked(this.chunkEvent({ content: 'x'.repeat(eventBytes) }));
    while (!this.connection.isGone()) await this.connection.write(this.request, event);
  }
}

function jsonReply(status: number, body: unknown, headers: Array<[string, string]> = []): Buffer {
  const text = JSON.stringify(body);
  const extra = headers.map(([name, value]) => `${name}: ${value}\r\n`).join('');
  return Buffer.from(
    `HTTP/1.1 ${status} ${reasons[status] ?? 'Status'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n${extra}\r\n${text}`,
  );
}

const reasons: Record<number, string> = { 200: 'OK', 429: 'Too Many Requests', 500: 'Internal Server Error', 503: 'Service Unavailable' };

function malformedReply(variant: MalformedVariant, body: string): string {
  const length = Buffer.byteLength(body);
  const json = 'content-type: application/json\r\n';
  switch (variant) {
    case 'te-and-cl':
      return `HTTP/1.1 200 OK\r\n${json}transfer-encoding: chunked\r\ncontent-length: ${length}\r\n\r\n${chunked(body)}0\r\n\r\n`;
    case 'two-lengths-same':
      return `HTTP/1.1 200 OK\r\n${json}content-length: ${length}\r\ncontent-length: ${length}\r\n\r\n${body}`;
    case 'two-lengths-different':
      return `HTTP/1.1 200 OK\r\n${json}content-length: ${length}\r\ncontent-length: ${length + 10}\r\n\r\n${body}`;
    case 'folded-header':
      return `HTTP/1.1 200 OK\r\n${json}x-folded: first part\r\n second part\r\ncontent-length: ${length}\r\n\r\n${body}`;
    case 'status-2000':
      return `HTTP/1.1 2000 OK\r\n${json}content-length: ${length}\r\n\r\n${body}`;
    case 'status-http2':
      return `HTTP/2 200\r\n${json}content-length: ${length}\r\n\r\n${body}`;
    case 'status-htp':
      return `HTP/1.1 200 OK\r\n${json}content-length: ${length}\r\n\r\n${body}`;
    case 'garbage':
      return '<html><body>502 Bad Gateway</body></html>\r\n\r\n';
    case 'te-not-chunked':
      // RFC 9112 would read this to the connection's end; the contract refuses it.
      return `HTTP/1.1 200 OK\r\n${json}transfer-encoding: gzip\r\n\r\n${body}`;
    case 'huge-head':
      // Some 1 MB of header lines, and the head never ends.
      return `HTTP/1.1 200 OK\r\n${json}${`x-padding: ${'p'.repeat(1_000)}\r\n`.repeat(1_000)}`;
  }
}

function chunked(text: string): string {
  return `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function lastUserText(body: Record<string, unknown> | null): string {
  const messages = Array.isArray(body?.messages) ? (body.messages as Array<{ role?: unknown; content?: unknown }>) : [];
  const lastUser = [...messages].reverse().find((message) => message.role === 'user');
  return typeof lastUser?.content === 'string' ? lastUser.content : '';
}

function wordCount(text: string): number {
  return text.split(/\s+/).filter((word) => word.length > 0).length;
}

function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}
