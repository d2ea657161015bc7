/**
 * A recorded workload as the worker simulation runs it: a workload whose
 * requested model is the data's expensive one and whose one candidate is the
 * cheap one, and a call source that answers each call as the data says.
 *
 * - Calls: call n asks prompt `order[n mod prompts]`, a seeded random order of
 *   the workload's prompts, so with more calls than prompts every prompt is
 *   asked equally often (±1).
 * - Replies: a model's reply is an answer, the right one when the data says
 *   it answered right. A wrong MMLU answer is one of the three wrong letters,
 *   picked by a seeded hash of (prompt, model), so two wrong models agree a
 *   third of the time, as real ones sometimes do; a wrong GSM8K answer is the
 *   last number of the model's own recorded reply, so two wrong models agree
 *   when they reached the same wrong number (23 of the 92 problems both get
 *   wrong). The default contract's agreement check compares the answers by
 *   rule; its `auto` method would hand differing ones to the pairwise judge,
 *   which is not modelled (neither its verdicts nor its spend).
 * - Tokens: the prompt's characters / 4; the completion 5 tokens for an MMLU
 *   letter, the recorded reply's characters / 4 for GSM8K. A call costs its
 *   tokens at the model's price.
 */
import { DEFAULT_CONTRACT } from '../../../src/evals/eval-contract.js';
import type { CallSource } from '../call-source.js';
import { createRandom, seedFor } from '../random.js';
import type { SimulatedModel, Workload } from '../workloads.js';
import type { OracleItem } from './oracles.js';
import type { RecordedData, RecordedModel, RecordedPrompt, RecordedWorkload } from './routellm-data.js';

export const LETTER_COMPLETION_TOKENS = 5;
const CHARACTERS_PER_TOKEN = 4;

export interface RealPrompt {
  cheapCorrect: boolean;
  requestedCorrect: boolean;
  cheapCost: number;
  requestedCost: number;
  agrees: boolean;
  tokens: { prompt: number; cheapCompletion: number; requestedCompletion: number };
}

export interface RealWorkload {
  recorded: RecordedWorkload;
  workload: Workload;
  source: CallSource;
  /** The prompt (index into `recorded.prompts`) that call n asks. */
  promptOf(call: number): number;
  /** Whether each model's reply to each prompt is right, what each call of it costs, and its tokens (for judges pricing a prompt with its replies). */
  prompts: RealPrompt[];
}

export function realWorkload(data: RecordedData, recorded: RecordedWorkload, id: number, calls: number, seed: number): RealWorkload {
  if (recorded.prompts.length === 0) throw new Error(`${recorded.name} has no prompts`);
  const random = createRandom(seedFor(seed, 'real-data order', recorded.name));
  const order = recorded.prompts.map((_, index) => index);
  for (let index = order.length - 1; index > 0; index -= 1) {
    const other = Math.floor(random() * (index + 1));
    [order[index], order[other]] = [order[other] as number, order[index] as number];
  }
  const promptOf = (call: number): number => order[call % order.length] as number;

  const prompts = recorded.prompts.map((prompt): RealPrompt => {
    const cheapAnswer = answer(recorded, prompt, data.cheap, 'cheap', seed);
    return {
      cheapCorrect: prompt.cheapCorrect,
      requestedCorrect: prompt.requestedCorrect,
      cheapCost: callCost(recorded, prompt, data.cheap, 'cheap'),
      requestedCost: callCost(recorded, prompt, data.requested, 'requested'),
      agrees: cheapAnswer === answer(recorded, prompt, data.requested, 'requested', seed),
      tokens: {
        prompt: estimateTokens(prompt.text),
        cheapCompletion: completionTokens(recorded, prompt, 'cheap'),
        requestedCompletion: completionTokens(recorded, prompt, 'requested'),
      },
    };
  });
  const mean = (values: number[]): number => values.reduce((sum, value) => sum + value, 0) / values.length;
  // The router orders and weighs candidates by their expected cost per call on the workload, as the worker measures it from tokens.
  const reference: SimulatedModel = {
    name: data.requested.name,
    costPerCall: mean(prompts.map((prompt) => prompt.requestedCost)),
    trueRate: 1,
  };
  // A candidate's "true rate" under the default contract is how often it agrees with the requested model.
  const candidate: SimulatedModel = {
    name: data.cheap.name,
    costPerCall: mean(prompts.map((prompt) => prompt.cheapCost)),
    trueRate: mean(prompts.map((prompt) => (prompt.agrees ? 1 : 0))),
  };
  const workload: Workload = { id, passRate: DEFAULT_CONTRACT.pass_rate, reference, candidates: [candidate], drift: null, calls };
  const source: CallSource = {
    cost(call, model) {
      const prompt = prompts[promptOf(call)];
      if (prompt === undefined) throw new Error(`no prompt for call ${call}`);
      return model.name === candidate.name ? prompt.cheapCost : prompt.requestedCost;
    },
    score(call) {
      const agrees = prompts[promptOf(call)]?.agrees === true;
      return (model) => (model.name === candidate.name ? agrees : true);
    },
  };
  return { recorded, workload, source, promptOf, prompts };
}

/** The workload's calls as the oracles count them: each prompt with how many of the `calls` asked it. */
export function oracleItems(real: RealWorkload, calls: number): OracleItem[] {
  const full = Math.floor(calls / real.prompts.length);
  const counts = new Array<number>(real.prompts.length).fill(full);
  for (let call = full * real.prompts.length; call < calls; call += 1) counts[real.promptOf(call)] = (counts[real.promptOf(call)] ?? 0) + 1;
  return real.prompts.map((prompt, index) => ({
    cheapCorrect: prompt.cheapCorrect,
    requestedCorrect: prompt.requestedCorrect,
    cheapCost: prompt.cheapCost,
    requestedCost: prompt.requestedCost,
    count: counts[index] ?? 0,
  }));
}

/** Tokens of a text, estimated as its characters / 4. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARACTERS_PER_TOKEN);
}

type Role = 'cheap' | 'requested';

function completionTokens(recorded: RecordedWorkload, prompt: RecordedPrompt, role: Role): number {
  return recorded.answers === 'letter' ? LETTER_COMPLETION_TOKENS : estimateTokens(prompt.responses?.[role] ?? '');
}

function callCost(recorded: RecordedWorkload, prompt: RecordedPrompt, model: RecordedModel, role: Role): number {
  return ((estimateTokens(prompt.text) + completionTokens(recorded, prompt, role)) * model.pricePerMillionTokens) / 1e6;
}

/** The answer a reply gives, as the agreement check compares it (see the file comment). */
function answer(recorded: RecordedWorkload, prompt: RecordedPrompt, model: RecordedModel, role: Role, seed: number): string {
  const correct = role === 'cheap' ? prompt.cheapCorrect : prompt.requestedCorrect;
  if (correct) return 'right';
  if (recorded.answers === 'letter') return `wrong letter ${seedFor(seed, 'wrong letter', prompt.text, model.name) % 3}`;
  return `wrong number ${finalNumber(prompt.responses?.[role] ?? '') ?? `none from ${model.name}`}`;
}

/** The last number of a reply (GSM8K replies end with their result: "#### 18", "… = $18."), without thousands separators. */
export function finalNumber(reply: string): string | null {
  const numbers = reply.match(/-?\d[\d,]*(?:\.\d+)?/g);
  const last = numbers?.[numbers.length - 1];
  return last === undefined ? null : String(Number(last.replace(/,/g, '')));
}
