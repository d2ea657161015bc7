import { Agent, createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { readBody } from './read-body.js';

/** A server answering each request with what readBody read (its length and text), or the error's name. */
async function echoServer(maxBytes = 1_000_000): Promise<{ server: Server; port: number }> {
  const server = createServer((request, response) => {
    // As the chat handler does: the body is read after a few promise jobs, when it has usually arrived whole.
    void Promise.resolve().then(async () => {
      try {
        const text = await readBody(request, { maxBytes, timeoutMs: 2_000 });
        response.end(`${text.length}:${text}`);
      } catch (error) {
        response.statusCode = 400;
        response.end((error as Error).name);
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as { port: number }).port };
}

/** POSTs `pieces` (the first with the head, each later one after a pause) and resolves with the reply's text and whether the connection was reused. */
async function post(port: number, agent: Agent, pieces: string[]): Promise<{ text: string; reused: boolean }> {
  const length = pieces.reduce((sum, piece) => sum + Buffer.byteLength(piece), 0);
  const call = httpRequest({
    port,
    host: '127.0.0.1',
    method: 'POST',
    agent,
    headers: { 'content-type': 'application/json', 'content-length': length },
  });
  const replied = once(call, 'response');
  for (const [index, piece] of pieces.entries()) {
    if (index > 0) await new Promise((resolve) => setTimeout(resolve, 30));
    if (index === pieces.length - 1) call.end(piece);
    else call.write(piece);
  }
  const [response] = (await replied) as [IncomingMessage];
  let text = '';
  for await (const part of response) text += String(part);
  return { text, reused: call.reusedSocket };
}

let running: { server: Server; agent: Agent } | null = null;
afterEach(() => {
  running?.agent.destroy();
  running?.server.close();
  running = null;
});

async function start(maxBytes?: number) {
  const { server, port } = await echoServer(maxBytes);
  running = { server, agent: new Agent({ keepAlive: true, maxSockets: 1 }) };
  return { port, agent: running.agent };
}

describe('readBody', () => {
  it('reads a body that came with its head, and the connection then serves the next request', async () => {
    const { port, agent } = await start();
    const first = `{"a":"${'x'.repeat(1_000)}"}`;
    const second = '{"b":"é"}';
    expect(await post(port, agent, [first])).toEqual({ text: `${first.length}:${first}`, reused: false });
    expect(await post(port, agent, [second])).toEqual({ text: `${second.length}:${second}`, reused: true });
  });

  it('reads a body that arrives after its head, in parts', async () => {
    const { port, agent } = await start();
    const body = `{"c":"${'y'.repeat(500)}"}`;
    expect((await post(port, agent, ['', body.slice(0, 100), body.slice(100)])).text).toBe(`${body.length}:${body}`);
  });

  it('refuses a declared length over the limit', async () => {
    const { port, agent } = await start(10);
    expect((await post(port, agent, ['{"d":"too long"}'])).text).toBe('PayloadTooLargeError');
  });
});
