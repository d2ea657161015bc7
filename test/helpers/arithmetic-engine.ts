/**
 * An OpenAI-compatible engine whose models answer sums with a known accuracy:
 * asked "What is 17 + 25?", model `m` answers "42" with probability
 * `accuracy[m]`, otherwise a wrong number. Draws come from a seeded PRNG, so a
 * test run is reproducible; accuracies can change while it runs (a model that
 * gets worse).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { seededRandom } from './seeded-random.js';

export interface ArithmeticEngine {
  baseUrl: string;
  accuracy: Map<string, number>;
  /** Calls per model name. */
  calls: Map<string, number>;
  close(): Promise<void>;
}

export async function startArithmeticEngine(accuracy: Record<string, number>, seed = 1): Promise<ArithmeticEngine> {
  const random = seededRandom(seed);
  const accuracies = new Map(Object.entries(accuracy));
  const calls = new Map<string, number>();
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const parsed = JSON.parse(body) as { model: string; messages: Array<{ role: string; content: string }> };
      calls.set(parsed.model, (calls.get(parsed.model) ?? 0) + 1);
      const question = [...parsed.messages].reverse().find((message) => message.role === 'user')?.content ?? '';
      const match = /(\d+)\s*\+\s*(\d+)/.exec(question);
      const right = match === null ? 0 : Number(match[1]) + Number(match[2]);
      const correct = random() < (accuracies.get(parsed.model) ?? 0);
      const answer = String(correct ? right : right + 1 + Math.floor(random() * 9));
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          id: 'cmpl-arithmetic',
          object: 'chat.completion',
          created: 0,
          model: parsed.model,
          choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 20, completion_tokens: 2, total_tokens: 22 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    accuracy: accuracies,
    calls,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
