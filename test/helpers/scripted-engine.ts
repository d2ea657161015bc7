/**
 * A scripted OpenAI-compatible server on 127.0.0.1 for tests: a real HTTP
 * server (node:http, random port) whose replies the test decides, so the
 * gateway is exercised through its real `openai` engine and real sockets.
 *
 *   const engine = await startScriptedEngine();
 *   engine.script({ kind: 'status', status: 500, body: { error: { message: 'boom' } } });
 *   engine.scriptNext({ kind: 'hang' });   // the next call only, then back to the script
 *   ... engine.baseUrl ... engine.requests ... await engine.waitForAbortedRequests(1) ...
 *   await engine.close();
 *
 * Replies look like vLLM's: `tool_calls: []` on plain messages, usage in a
 * final chunk with empty `choices` when `stream_options.include_usage`, the
 * `model` field echoing the request's.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { FinishReason, ToolCall, Usage } from '../../src/api/chat-types.js';

export type Behaviour =
  /** A whole reply; streamed in a few chunks when the request has `stream: true`. Default content: "echo: <last user text>". */
  | {
      kind: 'reply';
      content?: string;
      reasoning?: string;
      toolCalls?: ToolCall[];
      finishReason?: FinishReason;
      usage?: Usage;
      delayMs?: number;
    }
  /**
   * Always answers with SSE: a role chunk, one chunk per piece (`gapMs` apart,
   * the first after `firstChunkDelayMs`), a finish chunk, usage, `[DONE]`.
   * `errorAfter`: a vLLM-style error event after that many pieces, then `[DONE]`.
   * `dropAfter`: the socket is destroyed after that many pieces.
   */
  | {
      kind: 'stream';
      pieces: string[];
      gapMs?: number;
      firstChunkDelayMs?: number;
      errorAfter?: number;
      dropAfter?: number;
      finishReason?: FinishReason;
    }
  /** Any status with a JSON body (a string body is sent as plain text). */
  | { kind: 'status'; status: number; body: unknown; headers?: Record<string, string> }
  /** Raw bytes written in the given pieces (`gapMs` apart): for recorded SSE transcripts. */
  | { kind: 'raw'; pieces: Array<string | Uint8Array>; contentType?: string; status?: number; gapMs?: number }
  /** Never answers; the request counts as aborted when the client goes away. */
  | { kind: 'hang' }
  /** Destroys the socket at once, before any reply. */
  | { kind: 'destroy' }
  /** 200 with a body that is not JSON. */
  | { kind: 'garbage' };

export type Script = Behaviour | ((body: Record<string, unknown>) => Behaviour);

export interface ScriptedRequest {
  body: Record<string, unknown>;
  headers: IncomingHttpHeaders;
  /** The client went away before the reply ended. */
  aborted: boolean;
}

export interface ScriptedEngine {
  readonly name: string;
  /** `http://127.0.0.1:<port>/v1` */
  readonly baseUrl: string;
  /** Every `POST /v1/chat/completions`, in arrival order. */
  readonly requests: ScriptedRequest[];
  /** Requests whose client disconnected before the reply ended (not counting `destroy`/`dropAfter`). */
  readonly abortedRequests: number;
  /** TCP connections accepted so far (keep-alive reuse keeps this at 1). */
  readonly connections: number;
  /** Applies to every following request until changed; drops what `scriptNext` queued. */
  script(script: Script): void;
  /** Queues behaviours for the next requests, one each, before the standing script applies again. */
  scriptNext(...behaviours: Behaviour[]): void;
  /** `GET /v1/models` answers 503 while not ready. */
  setReady(ready: boolean): void;
  waitForAbortedRequests(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startScriptedEngine(options: { name?: string } = {}): Promise<ScriptedEngine> {
  const name = options.name ?? 'scripted';
  const requests: ScriptedRequest[] = [];
  const sockets = new Set<Socket>();
  const queued: Behaviour[] = [];
  let standing: Script = { kind: 'reply' };
  let abortedRequests = 0;
  let connections = 0;
  let ready = true;
  let sequence = 0;

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'text/plain' });
      response.end(`scripted engine bug: ${String(error)}`);
    });
  });
  server.on('connection', (socket: Socket) => {
    connections += 1;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = request.url ?? '';
    if (request.method === 'GET' && path === '/v1/models') {
      sendJson(
        response,
        ready ? 200 : 503,
        ready ? { object: 'list', data: [{ id: name, object: 'model', owned_by: 'taskgate-test' }] } : { error: { message: 'loading' } },
      );
      return;
    }
    if (request.method !== 'POST' || path !== '/v1/chat/completions') {
      sendJson(response, 404, { error: { message: `no route ${request.method} ${path}`, type: 'not_found_error' } });
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    const record: ScriptedRequest = { body, headers: request.headers, aborted: false };
    requests.push(record);
    const reply = new Reply(response, body, ++sequence);
    response.once('close', () => {
      if (response.writableFinished || reply.destroyedByScript) return;
      record.aborted = true;
      abortedRequests += 1;
    });
    const next = queued.shift();
    const behaviour = next ?? (typeof standing === 'function' ? standing(body) : standing);
    await reply.play(behaviour);
  }

  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;

  return {
    name,
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    get abortedRequests() {
      return abortedRequests;
    },
    get connections() {
      return connections;
    },
    script(script) {
      standing = script;
      queued.length = 0;
    },
    scriptNext(...behaviours) {
      queued.push(...behaviours);
    },
    setReady(value) {
      ready = value;
    },
    async waitForAbortedRequests(count, timeoutMs = 2_000) {
      const deadline = Date.now() + timeoutMs;
      while (abortedRequests < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} aborted requests, saw ${abortedRequests}`);
        await sleep(5);
      }
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  response.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json', ...headers });
  response.end(text);
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: { type?: unknown; text?: unknown }) => (part.type === 'text' && typeof part.text === 'string' ? part.text : ''))
    .join(' ');
}

function wordCount(text: string): number {
  return text.split(/\s+/).filter((word) => word.length > 0).length;
}

type Message = { role?: unknown; content?: unknown };

/** One reply being played; knows whether the client is still there. */
class Reply {
  destroyedByScript = false;
  private readonly id: string;
  private readonly created = Math.floor(Date.now() / 1000);
  private readonly model: unknown;
  private readonly messages: Message[];

  constructor(
    private readonly response: ServerResponse,
    private readonly body: Record<string, unknown>,
    sequence: number,
  ) {
    this.id = `chatcmpl-scripted-${sequence}`;
    this.model = body.model;
    this.messages = Array.isArray(body.messages) ? (body.messages as Message[]) : [];
  }

  private get gone(): boolean {
    return this.response.destroyed;
  }

  async play(behaviour: Behaviour): Promise<void> {
    switch (behaviour.kind) {
      case 'reply':
        if (behaviour.delayMs !== undefined) await sleep(behaviour.delayMs);
        if (this.gone) return;
        if (this.body.stream === true) return this.streamReply(behaviour);
        return sendJson(this.response, 200, this.completion(behaviour));
      case 'stream':
        return this.streamPieces(behaviour);
      case 'status':
        return sendJson(this.response, behaviour.status, behaviour.body, behaviour.headers);
      case 'raw':
        this.response.writeHead(behaviour.status ?? 200, { 'content-type': behaviour.contentType ?? 'text/event-stream' });
        for (const [index, piece] of behaviour.pieces.entries()) {
          if (index > 0) await sleep(behaviour.gapMs ?? 1);
          if (this.gone) return;
          this.response.write(piece);
        }
        this.response.end();
        return;
      case 'hang':
        return;
      case 'destroy':
        this.destroyedByScript = true;
        this.response.socket?.destroy();
        return;
      case 'garbage':
        this.response.writeHead(200, { 'content-type': 'application/json' });
        this.response.end('<html>502 Bad Gateway from a proxy</html>');
        return;
    }
  }

  private content(behaviour: { content?: string }): string {
    if (behaviour.content !== undefined) return behaviour.content;
    const lastUser = [...this.messages].reverse().find((message) => message.role === 'user');
    return `echo: ${textOf(lastUser?.content)}`;
  }

  private usage(completionText: string, usage?: Usage): Usage {
    if (usage !== undefined) return usage;
    const promptTokens = this.messages.reduce((sum, message) => sum + wordCount(textOf(message.content)), 0);
    const completionTokens = wordCount(completionText);
    return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
  }

  private completion(behaviour: Extract<Behaviour, { kind: 'reply' }>): Record<string, unknown> {
    const toolCalls = behaviour.toolCalls ?? [];
    const content = toolCalls.length > 0 && behaviour.content === undefined ? null : this.content(behaviour);
    return {
      id: this.id,
      object: 'chat.completion',
      created: this.created,
      model: this.model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content, reasoning_content: behaviour.reasoning ?? null, tool_calls: toolCalls },
          logprobs: null,
          finish_reason: behaviour.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
        },
      ],
      usage: this.usage(content ?? '', behaviour.usage),
    };
  }

  private startEventStream(): void {
    this.response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    this.response.flushHeaders();
  }

  private event(payload: unknown): void {
    if (!this.gone) this.response.write(`data: ${JSON.stringify(payload)}\n\n`);
  }

  private chunk(delta: Record<string, unknown>, finishReason: string | null = null): void {
    this.event({
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    });
  }

  private finish(finishReason: string, completionText: string, usage?: Usage): void {
    this.chunk({}, finishReason);
    const streamOptions = this.body.stream_options as { include_usage?: unknown } | undefined;
    if (streamOptions?.include_usage === true) {
      this.event({
        id: this.id,
        object: 'chat.completion.chunk',
        created: this.created,
        model: this.model,
        choices: [],
        usage: this.usage(completionText, usage),
      });
    }
    if (!this.gone) this.response.end('data: [DONE]\n\n');
  }

  private streamReply(behaviour: Extract<Behaviour, { kind: 'reply' }>): void {
    this.startEventStream();
    const toolCalls = behaviour.toolCalls ?? [];
    const content = toolCalls.length > 0 && behaviour.content === undefined ? '' : this.content(behaviour);
    this.chunk({ role: 'assistant', content: '' });
    if (behaviour.reasoning !== undefined) this.chunk({ reasoning_content: behaviour.reasoning });
    const pieces = content.match(/\S+\s*|\s+/g) ?? [];
    for (const piece of pieces) this.chunk({ content: piece, tool_calls: [] });
    toolCalls.forEach((toolCall, index) => {
      const { arguments: argumentText } = toolCall.function;
      const half = Math.ceil(argumentText.length / 2);
      this.chunk({ tool_calls: [{ index, id: toolCall.id, type: 'function', function: { name: toolCall.function.name, arguments: '' } }] });
      this.chunk({ tool_calls: [{ index, function: { arguments: argumentText.slice(0, half) } }] });
      this.chunk({ tool_calls: [{ index, function: { arguments: argumentText.slice(half) } }] });
    });
    this.finish(behaviour.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'), content, behaviour.usage);
  }

  private async streamPieces(behaviour: Extract<Behaviour, { kind: 'stream' }>): Promise<void> {
    this.startEventStream();
    if (behaviour.firstChunkDelayMs !== undefined) await sleep(behaviour.firstChunkDelayMs);
    this.chunk({ role: 'assistant', content: '' });
    for (const [index, piece] of behaviour.pieces.entries()) {
      if (behaviour.errorAfter === index) return this.failMidStream();
      if (behaviour.dropAfter === index) return this.drop();
      if (index > 0 && behaviour.gapMs !== undefined) await sleep(behaviour.gapMs);
      if (this.gone) return;
      this.chunk({ content: piece });
    }
    if (behaviour.errorAfter === behaviour.pieces.length) return this.failMidStream();
    if (behaviour.dropAfter === behaviour.pieces.length) return this.drop();
    this.finish(behaviour.finishReason ?? 'stop', behaviour.pieces.join(''));
  }

  /** What vLLM sends when generation fails mid-stream: an error event, then `[DONE]` as if all were well. */
  private failMidStream(): void {
    this.event({ error: { object: 'error', message: 'scripted engine failure', type: 'BadRequestError', param: null, code: 400 } });
    if (!this.gone) this.response.end('data: [DONE]\n\n');
  }

  private drop(): void {
    this.destroyedByScript = true;
    this.response.socket?.destroy();
  }
}
