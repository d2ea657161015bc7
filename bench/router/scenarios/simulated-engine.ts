/**
 * An in-process engine (the `Engine` contract) whose models answer "What is
 * A + B?" right with a known, changeable pass rate, take a known time on a
 * simulated clock, and can fail (an outage) or lack their file. A model in
 * free-text style words its answers in several ways, so two right answers
 * rarely match as text; a judge model answers the MT-Bench pairwise prompt,
 * deciding by the sums in the two answers, and grades one reply against a
 * rubric (PASS when its sum is right), right with a set accuracy.
 *
 * The engine advances the clock by a call's latency as it answers, so the
 * pool measures that latency on the same clock: run the router with one
 * worker, so calls do not overlap.
 */
import type { ChatMessage } from '../../../src/api/chat-types.js';
import { EngineError } from '../../../src/api/errors.js';
import type { Engine, EngineChunk, EngineCompletion, EngineRequest } from '../../../src/engines/engine.js';
import type { Random } from '../random.js';

export interface SimulatedClock {
  now(): number;
  advance(milliseconds: number): void;
  set(time: number): void;
}

export function createClock(start: number): SimulatedClock {
  let time = start;
  return { now: () => time, advance: (milliseconds) => void (time += milliseconds), set: (to) => void (time = to) };
}

export interface SimulatedModelSpec {
  id: string;
  family: string;
  /** USD per million tokens, prompt and completion alike. */
  price: number;
  /** True pass rate at a time. */
  quality: (at: number) => number;
  latencyMs: number;
  style?: 'number' | 'free_text';
  /** Every call in these time ranges fails (an outage). */
  outages?: Array<[from: number, to: number]>;
  /** The model's file is not on disk: it cannot serve, and must never be replayed. */
  missing?: boolean;
  /** As a judge: share of verdicts that are right. */
  judgeAccuracy?: number;
}

export const USAGE = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 };

const WORDINGS = [
  (sum: number) => `The sum is ${sum}.`,
  (sum: number) => `${sum} is the answer`,
  (sum: number) => `It comes to ${sum}`,
  (sum: number) => `Adding them gives ${sum}.`,
];

export interface SimulatedEngine extends Engine {
  /** Calls per model, replays and judges included. */
  readonly calls: Map<string, number>;
}

export function createSimulatedEngine(
  id: string,
  models: readonly SimulatedModelSpec[],
  clock: SimulatedClock,
  random: Random,
): SimulatedEngine {
  const byId = new Map(models.map((model) => [model.id, model]));
  const calls = new Map<string, number>();

  function answer(request: EngineRequest): EngineCompletion {
    const model = byId.get(request.model);
    if (model === undefined) throw new EngineError(`no model ${request.model}`);
    calls.set(model.id, (calls.get(model.id) ?? 0) + 1);
    const at = clock.now();
    clock.advance(model.latencyMs);
    if (model.outages?.some(([from, to]) => at >= from && at < to))
      throw new EngineError(`simulated outage of ${model.id}`, undefined, 'engine_error');
    const prompt = lastUserText(request.messages);
    const content = prompt.includes("[The Start of Assistant A's Answer]")
      ? judge(model, prompt)
      : prompt.includes('<rubric>')
        ? grade(model, prompt)
        : solve(model, prompt, at);
    return { choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage: USAGE };
  }

  function solve(model: SimulatedModelSpec, prompt: string, at: number): string {
    const sum = sumOf(prompt);
    const right = random() < model.quality(at);
    const value = right ? sum : sum + 1 + Math.floor(random() * 9);
    if (model.style !== 'free_text') return String(value);
    return (WORDINGS[Math.floor(random() * WORDINGS.length)] as (sum: number) => string)(value);
  }

  /** The pairwise verdict: the answer with the right sum is better; both right or both wrong tie. */
  function judge(model: SimulatedModelSpec, prompt: string): string {
    const sum = sumOf(prompt.slice(0, prompt.indexOf("[The Start of Assistant A's Answer]")));
    const a = numberIn(between(prompt, "[The Start of Assistant A's Answer]", "[The End of Assistant A's Answer]")) === sum;
    const b = numberIn(between(prompt, "[The Start of Assistant B's Answer]", "[The End of Assistant B's Answer]")) === sum;
    const truth = a === b ? 'C' : a ? 'A' : 'B';
    const verdicts = ['A', 'B', 'C'];
    const verdict =
      random() < (model.judgeAccuracy ?? 1) ? truth : (verdicts.filter((other) => other !== truth)[Math.floor(random() * 2)] as string);
    return `Both answers address the sum. Final verdict: [[${verdict}]]`;
  }

  /** The rubric verdict on one reply: PASS when its sum is right. */
  function grade(model: SimulatedModelSpec, prompt: string): string {
    const right = numberIn(between(prompt, '<reply>', '</reply>')) === sumOf(between(prompt, '<conversation>', '</conversation>'));
    const verdict = random() < (model.judgeAccuracy ?? 1) ? right : !right;
    return verdict ? 'PASS: the sum is right.' : 'FAIL: the sum is wrong.';
  }

  return {
    id,
    calls,
    async complete(request) {
      return answer(request);
    },
    async *stream(request): AsyncGenerator<EngineChunk[]> {
      const completion = answer(request);
      const message = completion.choices[0]?.message;
      // One batch, as an engine hands over the events of one read (engine.ts).
      yield [
        { choices: [{ index: 0, delta: { role: 'assistant', content: message?.content ?? '' }, finish_reason: 'stop' }] },
        { choices: [], usage: completion.usage },
      ];
    },
    async checkReady() {},
    unavailableReason: (model) => (byId.get(model)?.missing === true ? 'not downloaded' : null),
    async close() {},
  };
}

function lastUserText(messages: readonly ChatMessage[]): string {
  const last = [...messages].reverse().find((message) => message.role === 'user');
  return typeof last?.content === 'string' ? last.content : '';
}

function sumOf(text: string): number {
  const match = /(\d+)\s*\+\s*(\d+)/.exec(text);
  return match === null ? 0 : Number(match[1]) + Number(match[2]);
}

function numberIn(text: string): number | null {
  const match = /-?\d+/.exec(text);
  return match === null ? null : Number(match[0]);
}

function between(text: string, start: string, end: string): string {
  const from = text.indexOf(start);
  const to = text.indexOf(end, from);
  return from === -1 || to === -1 ? '' : text.slice(from + start.length, to);
}
