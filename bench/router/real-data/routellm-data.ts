/**
 * RouteLLM's evaluation data (lm-sys/RouteLLM, `routellm/evals/`, Apache 2.0;
 * see the data folder's README): per prompt, whether Mixtral-8x7B and GPT-4
 * answered right, on 57 MMLU subjects and on GSM8K (with both models' full
 * replies). Read where it lies at run time, never copied into the project.
 *
 * Left out, as the README asks: the prompts the authors found in their
 * training data (`contaminated_prompts.jsonl`), and MMLU high-school
 * mathematics, whose GPT-4 marks are an answer-extraction error in the source.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { csvRecords } from './csv.js';

export interface RecordedModel {
  /** As the data's CSV header names it. */
  name: string;
  /** USD per million tokens, prompt and completion alike (the paper's prices). */
  pricePerMillionTokens: number;
  /** Its family, as the catalog would name it: a judge is picked from another family than the reply it judges (pick-judge-model.ts). */
  family: string;
}

export interface RecordedPrompt {
  text: string;
  cheapCorrect: boolean;
  requestedCorrect: boolean;
  /** The models' full replies when the data has them (GSM8K), else null. */
  responses: { cheap: string; requested: string } | null;
}

export interface RecordedWorkload {
  /** `mmlu/<subject>` or `gsm8k`. */
  name: string;
  suite: 'mmlu' | 'gsm8k';
  /** How a reply's answer reads: one of four letters (MMLU), or a number (GSM8K). */
  answers: 'letter' | 'number';
  prompts: RecordedPrompt[];
}

export interface RecordedData {
  directory: string;
  cheap: RecordedModel;
  requested: RecordedModel;
  workloads: RecordedWorkload[];
  leftOut: { contaminatedPrompts: number; subjects: Array<{ name: string; prompts: number; reason: string }> };
}

export const CHEAP_MODEL: RecordedModel = { name: 'mistralai/Mixtral-8x7B-Instruct-v0.1', pricePerMillionTokens: 0.24, family: 'mixtral' };
export const REQUESTED_MODEL: RecordedModel = { name: 'gpt-4-1106-preview', pricePerMillionTokens: 24.7, family: 'gpt-4' };

const LEFT_OUT_SUBJECTS: Record<string, string> = {
  high_school_mathematics: 'GPT-4 marked right on 8 of 270 prompts: an answer-extraction error in the source (the data README)',
};

const FILES = {
  mmluResponses: join('mmlu', 'responses'),
  mmluContaminated: join('mmlu', 'contaminated_prompts.jsonl'),
  gsm8kResponses: join('gsm8k', 'gsm8k_responses.csv'),
  gsm8kContaminated: join('gsm8k', 'contaminated_prompts.jsonl'),
};

/** The data's files, or what is missing of them (the caller prints it and skips). */
export function findRouteLlmData(directory: string): { found: string } | { missing: string } {
  if (!existsSync(directory)) return { missing: `${directory} does not exist` };
  const absent = Object.values(FILES).filter((file) => !existsSync(join(directory, file)));
  if (absent.length > 0) return { missing: `${directory} lacks ${absent.join(', ')}` };
  return { found: directory };
}

export function loadRouteLlmData(directory: string): RecordedData {
  const contaminated = new Set([
    ...readContaminated(join(directory, FILES.mmluContaminated)),
    ...readContaminated(join(directory, FILES.gsm8kContaminated)),
  ]);
  let contaminatedPrompts = 0;
  const keep = (prompts: RecordedPrompt[]): RecordedPrompt[] => {
    const kept = prompts.filter((prompt) => !contaminated.has(prompt.text));
    contaminatedPrompts += prompts.length - kept.length;
    return kept;
  };
  const workloads: RecordedWorkload[] = [];
  const subjects: RecordedData['leftOut']['subjects'] = [];
  const files = readdirSync(join(directory, FILES.mmluResponses))
    .filter((file) => /^mmlu_.+\.csv$/.test(file))
    .sort();
  for (const file of files) {
    const subject = file.slice('mmlu_'.length, -'.csv'.length);
    const prompts = readPrompts(join(directory, FILES.mmluResponses, file), false);
    const reason = LEFT_OUT_SUBJECTS[subject];
    if (reason !== undefined) subjects.push({ name: `mmlu/${subject}`, prompts: prompts.length, reason });
    else workloads.push({ name: `mmlu/${subject}`, suite: 'mmlu', answers: 'letter', prompts: keep(prompts) });
  }
  workloads.push({
    name: 'gsm8k',
    suite: 'gsm8k',
    answers: 'number',
    prompts: keep(readPrompts(join(directory, FILES.gsm8kResponses), true)),
  });
  return { directory, cheap: CHEAP_MODEL, requested: REQUESTED_MODEL, workloads, leftOut: { contaminatedPrompts, subjects } };
}

function readPrompts(path: string, withResponses: boolean): RecordedPrompt[] {
  return csvRecords(readFileSync(path, 'utf8'), path).map((record, index) => {
    const field = (name: string): string => {
      const value = record[name];
      if (value === undefined) throw new SyntaxError(`${path}: no column "${name}"`);
      return value;
    };
    const correct = (name: string): boolean => {
      const value = field(name);
      if (value !== 'True' && value !== 'False')
        throw new SyntaxError(`${path}: record ${index + 1}: "${name}" is ${JSON.stringify(value)}, not True or False`);
      return value === 'True';
    };
    return {
      text: field('prompt'),
      cheapCorrect: correct(CHEAP_MODEL.name),
      requestedCorrect: correct(REQUESTED_MODEL.name),
      responses: withResponses
        ? { cheap: field(`${CHEAP_MODEL.name}_response`), requested: field(`${REQUESTED_MODEL.name}_response`) }
        : null,
    };
  });
}

/** The evaluation prompts of a `contaminated_prompts.jsonl` (one JSON object a line, `eval_prompt` the prompt as the responses file has it). */
function readContaminated(path: string): string[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, index) => {
      const value: unknown = JSON.parse(line);
      const prompt = typeof value === 'object' && value !== null && 'eval_prompt' in value ? value.eval_prompt : undefined;
      if (typeof prompt !== 'string') throw new SyntaxError(`${path}: line ${index + 1} has no eval_prompt`);
      return prompt;
    });
}
