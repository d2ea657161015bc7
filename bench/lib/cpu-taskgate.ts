/**
 * The path through taskgate: `dist/cli/main.js serve` in its own process with
 * one `llama-cpp` engine serving the benchmark's models (same file, threads,
 * sequences and context size as the direct path; tracing on, with bodies, as
 * in production), and a streaming client that reads the SSE events as they
 * arrive with as little work as possible: it only looks for content deltas
 * and the usage chunk, and parses JSON for the usage chunk alone.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { chatHeaders } from './chat-request.mjs';
import { stopChild } from './child-processes.mjs';
import { promptMessages, type BenchModel } from './cpu-models.js';
import type { CallTiming, GenerationCall } from './cpu-rounds.js';
import { startTaskgateProcess } from './start-taskgate.mjs';

export interface TaskgateServer {
  pid: number;
  origin: string;
  /** The last lines taskgate wrote to stderr (its log, at warn). */
  log: { text: string };
  call(model: BenchModel, maxTokens: number, deadlineMs: number): GenerationCall;
  stop(): Promise<void>;
}

export interface TaskgateSetup {
  directory: string;
  models: BenchModel[];
  threads: number;
  sequences: number;
  contextSize: number;
  cpuProfileDirectory: string | undefined;
}

export async function startTaskgate(setup: TaskgateSetup): Promise<TaskgateServer> {
  const directory = join(setup.directory, `taskgate-${setup.threads}-threads`);
  mkdirSync(directory, { recursive: true });
  const nodeFlags = setup.cpuProfileDirectory === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', setup.cpuProfileDirectory];
  const { child, pid, origin, adminKey, log } = await startTaskgateProcess({ directory, config: configText(setup), nodeFlags });
  const headers = chatHeaders(adminKey);
  return {
    pid,
    origin,
    log,
    stop: () => stopChild(child, 20_000),
    call: (model, maxTokens, deadlineMs) => (callNumber) => streamCall(origin, headers, model.id, callNumber, maxTokens, deadlineMs),
  };
}

function configText({ models, threads, sequences, contextSize }: TaskgateSetup): string {
  const modelLines = models.map(
    (model) =>
      `  - { id: ${model.id}, served_by: [{ engine: cpu, file: ${JSON.stringify(model.file)}, sequences: ${sequences}, context_size: ${contextSize} }], price: { input: 1, output: 2 }, context_window: 65536 }`,
  );
  // max_queue 0 would refuse what the benchmark never sends: it sends at most `sequences` calls at once.
  return `server:
  host: 127.0.0.1
  shutdown_timeout_ms: 2000
engines:
  - { id: cpu, type: llama-cpp, threads: ${threads}, max_queue: 64 }
models:
${modelLines.join('\n')}
limits:
  requests_per_minute: 100000000
traces:
  bodies: true
logging:
  level: warn
`;
}

interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
}

async function streamCall(
  origin: string,
  headers: Record<string, string>,
  model: string,
  callNumber: number,
  maxTokens: number,
  deadlineMs: number,
): Promise<CallTiming> {
  const body = JSON.stringify({
    model,
    messages: promptMessages(callNumber),
    max_tokens: maxTokens,
    temperature: 0,
    stream: true,
    stream_options: { include_usage: true },
  });
  const started = performance.now();
  const response = await request(`${origin}/v1/chat/completions`, {
    method: 'POST',
    headers,
    body,
    signal: AbortSignal.timeout(deadlineMs),
  });
  if (response.statusCode !== 200)
    throw new Error(`taskgate answered HTTP ${response.statusCode}: ${(await response.body.text()).slice(0, 500)}`);
  response.body.setEncoding('utf8');
  let first = Number.NaN;
  let last = Number.NaN;
  let usage: Usage | null = null;
  let done = false;
  let pending = '';
  for await (const text of response.body as AsyncIterable<string>) {
    const now = performance.now();
    pending += text;
    const events = pending.split('\n\n');
    pending = events.pop() ?? '';
    for (const event of events) {
      if (event.includes('"content":"') && !event.includes('"content":""')) {
        last = now;
        if (Number.isNaN(first)) first = now;
      } else if (event.includes('"usage":{')) {
        usage = (JSON.parse(event.slice('data: '.length)) as { usage: Usage }).usage;
      } else if (event === 'data: [DONE]') {
        done = true;
      } else if (event.startsWith('event: error') || event.includes('"error":{')) {
        throw new Error(`taskgate ended the stream with an error: ${event.slice(0, 500)}`);
      }
    }
  }
  const ended = performance.now();
  if (!done || usage === null) throw new Error(`the stream ended without ${usage === null ? 'a usage chunk' : '[DONE]'}`);
  return {
    firstTokenMs: first - started,
    decodeMs: last - first,
    totalMs: ended - started,
    completionTokens: usage.completion_tokens,
    promptTokens: usage.prompt_tokens,
  };
}
