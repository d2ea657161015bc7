/**
 * An OpenAI-compatible engine whose models answer sums with a known accuracy:
 * asked "What is 17 + 25?", model `m` answers "42" with probability
 * `accuracy[m]`, otherwise a wrong number. Draws come from a seeded PRNG, so a
 * test run is reproducible; accuracies can change while it runs (a model that
 * gets worse).
 *
 * What production throws at a router can be switched on per model while it
 * runs: a delay before each reply (a slow model), HTTP 500 on every call (an
 * outage), replies in varied prose instead of the bare number ("The sum is
 * 42.", "42 is the answer"), and judge models that answer the pairwise judge
 * prompt (MT-Bench layout) by checking both answers' sums, right with their
 * own accuracy. Every model grades one reply against a rubric (PASS when its
 * sum is right), as any instruction-following model answers that prompt:
 * a judge model with its accuracy, another with its accuracy at sums.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { seededRandom } from './seeded-random.js';

export interface ArithmeticEngine {
  baseUrl: string;
  accuracy: Map<string, number>;
  /** Calls per model name, failed ones included. */
  calls: Map<string, number>;
  /** Milliseconds each model waits before replying (or failing); absent: at once. */
  delayMs: Map<string, number>;
  /** Models whose calls fail with HTTP 500 until removed. */
  failing: Set<string>;
  /** HTTP 500s sent per model. */
  failures: Map<string, number>;
  /** Judge models and how often each gives the right pairwise verdict. */
  judgeAccuracy: Map<string, number>;
  close(): Promise<void>;
}

export interface ArithmeticEngineOptions {
  /** Answer in varied prose around the number instead of the bare number, so two right replies rarely read alike. */
  prose?: boolean;
  delayMs?: Record<string, number>;
  judges?: Record<string, number>;
  /** Per model, questions it always gets wrong (whatever its accuracy): a model good at some calls of a workload only. */
  wrongOn?: Record<string, RegExp>;
}

const PROSE = [
  (sum: number) => `The sum is ${sum}.`,
  (sum: number) => `${sum} is the answer.`,
  (sum: number) => `Adding them gives ${sum}`,
  (sum: number) => `It comes to ${sum}!`,
  (sum: number) => `Answer: ${sum}`,
];

type Verdict = 'A' | 'B' | 'C';

interface ChatBody {
  model: string;
  messages: Array<{ role: string; content: string }>;
}

export async function startArithmeticEngine(
  accuracy: Record<string, number>,
  seed = 1,
  options: ArithmeticEngineOptions = {},
): Promise<ArithmeticEngine> {
  const random = seededRandom(seed);
  const accuracies = new Map(Object.entries(accuracy));
  const calls = new Map<string, number>();
  const delayMs = new Map(Object.entries(options.delayMs ?? {}));
  const failing = new Set<string>();
  const failures = new Map<string, number>();
  const judgeAccuracy = new Map(Object.entries(options.judges ?? {}));

  function sumAnswer(model: string, question: string): string {
    const match = /(\d+)\s*\+\s*(\d+)/.exec(question);
    const right = match === null ? 0 : Number(match[1]) + Number(match[2]);
    const correct = random() < (accuracies.get(model) ?? 0) && options.wrongOn?.[model]?.test(question) !== true;
    const answer = correct ? right : right + 1 + Math.floor(random() * 9);
    return options.prose === true ? (PROSE[Math.floor(random() * PROSE.length)] as (sum: number) => string)(answer) : String(answer);
  }

  /** The pairwise verdict: the answer with the right sum is better; both right or both wrong is a tie. */
  function judgeAnswer(model: string, prompt: string): string {
    const between = (start: string, end: string) => prompt.slice(prompt.indexOf(start) + start.length, prompt.indexOf(end));
    const question = /(\d+)\s*\+\s*(\d+)/.exec(between('[User Question]', "[The Start of Assistant A's Answer]"));
    const right = question === null ? NaN : Number(question[1]) + Number(question[2]);
    const said = (label: 'A' | 'B') =>
      Number(/-?\d+/.exec(between(`[The Start of Assistant ${label}'s Answer]`, `[The End of Assistant ${label}'s Answer]`))?.[0]);
    const aRight = said('A') === right;
    const bRight = said('B') === right;
    const truth: Verdict = aRight === bRight ? 'C' : aRight ? 'A' : 'B';
    const others = (['A', 'B', 'C'] as const).filter((verdict) => verdict !== truth);
    const verdict = random() < (judgeAccuracy.get(model) ?? 1) ? truth : (others[Math.floor(random() * others.length)] as Verdict);
    const reading = (label: 'A' | 'B', ok: boolean) => `Assistant ${label} answers ${said(label)}, which is ${ok ? 'right' : 'wrong'}.`;
    return `The question asks for ${right}. ${reading('A', aRight)} ${reading('B', bRight)} [[${verdict}]]`;
  }

  /** A rubric verdict on one reply: PASS when the sum it gives is right. */
  function gradeAnswer(model: string, prompt: string): string {
    const section = (tag: string) => prompt.slice(prompt.indexOf(`<${tag}>`) + tag.length + 2, prompt.indexOf(`</${tag}>`));
    const question = /(\d+)\s*\+\s*(\d+)/.exec(section('conversation'));
    const right = question !== null && Number(/-?\d+/.exec(section('reply'))?.[0]) === Number(question[1]) + Number(question[2]);
    const truthful = random() < (judgeAccuracy.get(model) ?? accuracies.get(model) ?? 0);
    return right === truthful ? 'PASS: the sum is right.' : 'FAIL: the sum is wrong.';
  }

  const server: Server = createServer((request, response) => {
    if (request.method === 'GET' && request.url?.endsWith('/models') === true) {
      // What a gateway's readiness check asks for.
      const data = [...accuracies.keys()].map((id) => ({ id, object: 'model', created: 0, owned_by: 'arithmetic' }));
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data }));
      return;
    }
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const parsed = JSON.parse(body) as ChatBody;
      calls.set(parsed.model, (calls.get(parsed.model) ?? 0) + 1);
      const reply = () => {
        if (failing.has(parsed.model)) {
          failures.set(parsed.model, (failures.get(parsed.model) ?? 0) + 1);
          response.writeHead(500, { 'content-type': 'application/json' });
          response.end(JSON.stringify({ error: { message: `${parsed.model} is down`, type: 'server_error', code: null } }));
          return;
        }
        const question = [...parsed.messages].reverse().find((message) => message.role === 'user')?.content ?? '';
        const judging = judgeAccuracy.has(parsed.model) && question.includes('[User Question]');
        const answer = judging
          ? judgeAnswer(parsed.model, question)
          : question.includes('<rubric>')
            ? gradeAnswer(parsed.model, question)
            : sumAnswer(parsed.model, question);
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
      };
      const delay = delayMs.get(parsed.model) ?? 0;
      if (delay > 0) setTimeout(reply, delay);
      else reply();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    accuracy: accuracies,
    calls,
    delayMs,
    failing,
    failures,
    judgeAccuracy,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
