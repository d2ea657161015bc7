/**
 * The router simulator's real-data mode (bench/router/real-data/): its CSV
 * reader, its loader and oracles on a tiny data set this file writes, the
 * router under both semantics on it, and, when RouteLLM's data lies beside
 * the repository (../shared/data/routellm), the oracle figures its README
 * gives and what a user of the relative default would notice on a slice.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { csvRecords, parseCsv } from '../bench/router/real-data/csv.js';
import { computeOracles, largestShare, oracleSavings, type OracleItem } from '../bench/router/real-data/oracles.js';
import { ROUTER_DEFAULT } from '../bench/router/real-data/relative-variants.js';
import { runRelativeRouter } from '../bench/router/real-data/paired-shares-run.js';
import { dataOracles, runRealData, type RealRunPlan } from '../bench/router/real-data/real-data-run.js';
import { finalNumber } from '../bench/router/real-data/real-workloads.js';
import {
  CHEAP_MODEL,
  REQUESTED_MODEL,
  findRouteLlmData,
  loadRouteLlmData,
  type RecordedData,
} from '../bench/router/real-data/routellm-data.js';
import { DEFAULT_ROUTER_SETTINGS } from '../src/routing/router-context.js';
import { requireOrSkip } from './helpers/machine-requirements.js';
import { temporaryDirectory } from './helpers/temporary-directory.js';

describe('parseCsv', () => {
  it('reads quoted fields with commas, line breaks and doubled quotes, LF or CRLF', () => {
    expect(parseCsv('a,b\n1,"x, y"\n')).toEqual([
      ['a', 'b'],
      ['1', 'x, y'],
    ]);
    expect(parseCsv('prompt,ok\r\n"A ""dished"" face\r\nA. one, two\nAnswer:",True\r\nplain,False')).toEqual([
      ['prompt', 'ok'],
      ['A "dished" face\r\nA. one, two\nAnswer:', 'True'],
      ['plain', 'False'],
    ]);
  });

  it('keeps empty fields, drops a byte-order mark, and adds no record for a final line break', () => {
    expect(parseCsv('\ufeffa,,c\n"",x,\n')).toEqual([
      ['a', '', 'c'],
      ['', 'x', ''],
    ]);
    expect(parseCsv('')).toEqual([]);
  });

  it('refuses malformed quoting, naming the line', () => {
    expect(() => parseCsv('a,b\n"open,c\n')).toThrow(/line 2: a quoted field is never closed/);
    expect(() => parseCsv('"a"b,c')).toThrow(/line 1: text after a closing quote/);
    expect(() => parseCsv('a\nx"y,c')).toThrow(/line 2: a quote inside an unquoted field/);
  });

  it('csvRecords keys fields by the header and refuses a record of another width', () => {
    expect(csvRecords('prompt,ok\nq,True\n', 'f.csv')).toEqual([{ prompt: 'q', ok: 'True' }]);
    expect(() => csvRecords('prompt,ok\nq\n', 'f.csv')).toThrow(/f.csv: record 1 has 1 fields, the header 2/);
  });
});

describe('oracles', () => {
  const item = (cheapCorrect: boolean, requestedCorrect: boolean, count: number): OracleItem => ({
    cheapCorrect,
    requestedCorrect,
    cheapCost: 1,
    requestedCost: 10,
    count,
  });
  // a: GPT-4 right on all 10 calls, the cheap model on 9 (below 95%); b: both right on 8 of 10, not the same 8 (the cheap model passes).
  const a = { name: 'a', items: [item(true, true, 9), item(false, true, 1)] };
  const b = { name: 'b', items: [item(true, true, 6), item(true, false, 2), item(false, true, 2)] };

  it('the largest random share keeps accuracy at the bar', () => {
    expect(largestShare(9, 10, 0.95)).toBeCloseTo(0.5, 12);
    expect(largestShare(8, 8, 0.95)).toBe(1);
    expect(largestShare(7.6, 8, 0.95)).toBe(1);
    expect(largestShare(0, 0, 0.95)).toBe(1);
  });

  it('computes whole workloads, shares per workload, a random share and per query against the requested model alone', () => {
    const result = computeOracles([a, b], 0.95);
    expect(result.perWorkload.map((workload) => [workload.wholeToCheap, workload.share])).toEqual([
      [false, expect.closeTo(0.5, 12)],
      [true, 1],
    ]);
    // Random share: 17 right of the cheap model against 18 of GPT-4 over all calls: 0.05 × 18 / 1 = 0.9.
    expect(result.randomShare).toBeCloseTo(0.9, 12);
    expect(result.total.requested).toBe(200);
    const savings = oracleSavings(result.total);
    expect(savings.whole).toBeCloseTo(1 - (100 + 10) / 200, 12);
    expect(savings.shares).toBeCloseTo(1 - (55 + 10) / 200, 12);
    expect(savings.randomShare).toBeCloseTo(1 - (19 + 19) / 200, 12);
    // Per query: a sends its 9 right calls to the cheap model, b its 8 right and none else (GPT-4 is right on the other 2).
    expect(savings.perQuery).toBeCloseTo(1 - (9 + 10 + 8 + 20) / 200, 12);
  });
});

describe('finalNumber', () => {
  it('reads the last number of a reply, without thousands separators', () => {
    expect(finalNumber('so 9 * $2 = $<<9*2=18>>18.\n#### 18')).toBe('18');
    expect(finalNumber('The profit is $155,000 - $130,000 = $25,000.')).toBe('25000');
    expect(finalNumber('It is -2.5 degrees')).toBe('-2.5');
    expect(finalNumber('no number')).toBeNull();
  });
});

/** A data folder laid out as RouteLLM's, with `alpha` (both models always right), `beta` (the cheap model always wrong), the left-out subject and GSM8K. */
function writeFixture(): string {
  const directory = temporaryDirectory('routellm-fixture-');
  mkdirSync(join(directory, 'mmlu', 'responses'), { recursive: true });
  mkdirSync(join(directory, 'gsm8k'));
  const quote = (text: string): string => `"${text.replace(/"/g, '""')}"`;
  const mmlu = (rows: Array<[string, boolean, boolean]>): string =>
    [
      `prompt,${CHEAP_MODEL.name},${REQUESTED_MODEL.name}`,
      ...rows.map(([prompt, cheap, requested]) => `${quote(prompt)},${cheap ? 'True' : 'False'},${requested ? 'True' : 'False'}`),
    ].join('\n');
  const question = (subject: string, index: number): string => `${subject} question ${index}, with "quotes"\nA. one\nB. two\nAnswer:`;
  const alpha = Array.from({ length: 20 }, (_, index): [string, boolean, boolean] => [question('alpha', index), true, true]);
  const beta = Array.from({ length: 20 }, (_, index): [string, boolean, boolean] => [question('beta', index), false, true]);
  writeFileSync(join(directory, 'mmlu', 'responses', 'mmlu_alpha.csv'), mmlu(alpha));
  writeFileSync(join(directory, 'mmlu', 'responses', 'mmlu_beta.csv'), `${mmlu(beta)}\r\n`);
  writeFileSync(join(directory, 'mmlu', 'responses', 'mmlu_high_school_mathematics.csv'), mmlu([['2 + 2?', true, false]]));
  writeFileSync(
    join(directory, 'mmlu', 'contaminated_prompts.jsonl'),
    `${JSON.stringify({ train_prompt: 'x', eval_prompt: question('alpha', 0), train_idx: 1, eval_idx: 0 })}\n`,
  );
  const gsm8k = [
    `prompt,${CHEAP_MODEL.name},${REQUESTED_MODEL.name},${CHEAP_MODEL.name}_response,${REQUESTED_MODEL.name}_response`,
    `Two plus two?,True,True," 2 + 2 = 4\n#### 4","It is 4."`,
    `Ten times ten?,False,True," 10 * 10 = 1,000\n#### 1000","10 × 10 = 100."`,
    `"Half of 9, rounded?",False,False," #### 4","About 5."`,
  ].join('\n');
  writeFileSync(join(directory, 'gsm8k', 'gsm8k_responses.csv'), gsm8k);
  writeFileSync(
    join(directory, 'gsm8k', 'contaminated_prompts.jsonl'),
    `${JSON.stringify({ train_prompt: 'y', eval_prompt: 'Two plus two?', train_idx: 2, eval_idx: 0 })}\n`,
  );
  return directory;
}

describe('the real-data mode on a data set this test writes', () => {
  const directory = writeFixture();

  it('reads the subjects and GSM8K, leaving out contaminated prompts and high-school mathematics', () => {
    const data = loadRouteLlmData(directory);
    expect(data.workloads.map((workload) => [workload.name, workload.prompts.length])).toEqual([
      ['mmlu/alpha', 19],
      ['mmlu/beta', 20],
      ['gsm8k', 2],
    ]);
    expect(data.leftOut.contaminatedPrompts).toBe(2);
    expect(data.leftOut.subjects.map((subject) => [subject.name, subject.prompts])).toEqual([['mmlu/high_school_mathematics', 1]]);
    expect(data.workloads[0]?.prompts[0]?.text).toContain('with "quotes"\nA. one');
    expect(data.workloads[2]?.prompts[0]).toMatchObject({
      text: 'Ten times ten?',
      cheapCorrect: false,
      requestedCorrect: true,
      responses: { requested: '10 × 10 = 100.' },
    });
  });

  it('says what is missing when the data is not there', () => {
    expect(findRouteLlmData(join(directory, 'nowhere'))).toEqual({ missing: `${join(directory, 'nowhere')} does not exist` });
    expect(findRouteLlmData(join(directory, 'mmlu'))).toMatchObject({ missing: expect.stringContaining('lacks') });
  });

  it('computes the oracles from the data', () => {
    const [mmlu, gsm8k, all] = dataOracles(loadRouteLlmData(directory), 'calls');
    const ratio = 1 - CHEAP_MODEL.pricePerMillionTokens / REQUESTED_MODEL.pricePerMillionTokens;
    // alpha passes whole (19 of 39 MMLU prompts); beta can take 5% of its calls; per query only alpha's prompts go cheap.
    expect(mmlu).toMatchObject({ name: 'MMLU (2 subjects)', prompts: 39 });
    expect(mmlu?.savings.whole).toBeCloseTo((19 / 39) * ratio, 12);
    expect(mmlu?.savings.shares).toBeCloseTo(((19 + 0.05 * 20) / 39) * ratio, 12);
    expect(mmlu?.randomShare).toBeCloseTo((0.05 * 39) / (39 - 19), 12);
    expect(mmlu?.savings.perQuery).toBeCloseTo((19 / 39) * ratio, 12);
    // GSM8K: GPT-4 right on 1 of 2, the cheap model on none; per query the prompt both get wrong goes cheap.
    expect(gsm8k?.savings.perQuery).toBeCloseTo(0.5 * ratio, 12);
    expect(all?.prompts).toBe(41);
  });

  it('the absolute router (pass_rate 0.95): a candidate always right switches, one always wrong never does', () => {
    const data = loadRouteLlmData(directory);
    const run = runRealData(data, { label: 'fixture', callsPerWorkload: 4_000, callsPerDay: 2_000, sampleRate: 'auto' }, 1);
    const [alpha, beta, gsm8k] = run.workloads;
    expect(alpha?.firstSavingCall).not.toBeNull();
    expect(alpha?.firstSavingCall).toBeLessThan(500);
    expect(alpha?.qualityRatio).toBe(1);
    expect(alpha?.savings).toBeGreaterThan(0.8);
    expect(alpha?.evaluation).toBeGreaterThan(0);
    expect(beta).toMatchObject({ firstSavingCall: null, savings: 0, qualityRatio: 1, cheapAccuracy: 0, agreement: 0 });
    expect(beta?.netSavings).toBeLessThan(0);
    expect(gsm8k?.firstSavingCall).toBeNull();
    expect(run.groups.map((group) => group.switched)).toEqual([1, 0, 1]);
  });

  it('the relative default: a candidate that always agrees takes the whole workload; one always wrong gets no more than the bar allows', () => {
    const data = loadRouteLlmData(directory);
    const plan: RealRunPlan = { label: 'fixture', callsPerWorkload: 6_000, callsPerDay: 2_000, sampleRate: 'auto' };
    const run = runRelativeRouter(data, plan, ROUTER_DEFAULT, 1);
    const [alpha, beta] = run.workloads;
    // alpha: every reply agrees, so no verdict is paid, and the share grows to the whole workload once the grades of the agreements
    // (every one until 100 are graded, then a fifth) bound GPT-4's quality; none before min_samples (50 samples, every call sampled while GPT-4 serves).
    expect(alpha?.share).toBe(1);
    expect(alpha?.qualityRatio).toBe(1);
    expect(alpha?.firstSavingCall).toBeGreaterThanOrEqual(50);
    expect(alpha?.savings).toBeGreaterThan(0.8);
    expect(alpha?.spend.verdicts).toBe(0);
    expect(alpha?.spend.grades).toBeGreaterThan(0);
    // Served outright, it is monitored: GPT-4 replays as references.
    expect(alpha?.spend.referenceReplays).toBeGreaterThan(0);
    // Only its shadow checks pay them: a sample that remakes a stale plan (one every planTtlMs, 14 calls apart here) finds nothing
    // left to test and pays no reference (286 checks with seed 1; paying one on each such sample made 544).
    expect(alpha?.wholeFromCall).not.toBeNull();
    expect(alpha?.samples.monitoring).toBeLessThan(DEFAULT_ROUTER_SETTINGS.shadowRate * plan.callsPerWorkload * 1.25);
    // beta: Mixtral always wrong, GPT-4 always right. The bar lets s·(−1) + 0.05·1 ≥ 0, so a certified share stays below
    // 0.05 / (1 + 2ε) of the calls, and the served quality at 95% of GPT-4's or above; every sample pays a verdict.
    expect(beta?.cheapAccuracy).toBe(0);
    expect(beta?.share).toBeLessThan(0.05 / (1 + 2 * ROUTER_DEFAULT.judgeError));
    expect(beta?.qualityRatio).toBeGreaterThanOrEqual(0.95);
    expect(beta?.savings).toBeLessThan(0.05);
    expect(beta?.spend.verdicts).toBeGreaterThan(0);
    expect(beta?.netSavings).toBeLessThan(beta?.savings ?? 0);
  });
});

/** Beside the repository, as the bench reads it; `TASKGATE_TEST_ROUTELLM_DATA` points elsewhere. */
const DATA_DIRECTORY =
  process.env.TASKGATE_TEST_ROUTELLM_DATA ?? resolve(fileURLToPath(new URL('..', import.meta.url)), '../shared/data/routellm');
const data = requireOrSkip(
  {
    what: `RouteLLM's evaluation data (${DATA_DIRECTORY})`,
    howToGet: "Put lm-sys/RouteLLM's routellm/evals data files there (see the bench's docs in docs/routing.md).",
    name: 'ROUTELLM_DATA',
    find: () => findRouteLlmData(DATA_DIRECTORY),
  },
  'test/router-real-data.test.ts',
  'Its real-data test is skipped.',
);

let loaded: RecordedData | null = null;
const recorded = (): RecordedData => (loaded ??= loadRouteLlmData(data ?? ''));

describe.skipIf(data === null)("the oracles on RouteLLM's data", () => {
  it('match its README: whole subjects 6.5%, shares per subject 41.5%, a random share 30.5% (within 0.5 points)', () => {
    const [mmlu] = dataOracles(recorded(), 'calls');
    expect(mmlu?.name).toBe('MMLU (56 subjects)');
    expect(mmlu?.prompts).toBe(13_767);
    expect(Math.abs((mmlu?.cheapAccuracy ?? 0) - 0.688)).toBeLessThan(0.0005);
    expect(Math.abs((mmlu?.requestedAccuracy ?? 0) - 0.821)).toBeLessThan(0.0005);
    expect(Math.abs((mmlu?.savings.whole ?? 0) - 0.065)).toBeLessThan(0.005);
    expect(Math.abs((mmlu?.savings.shares ?? 0) - 0.415)).toBeLessThan(0.005);
    expect(Math.abs((mmlu?.savings.randomShare ?? 0) - 0.305)).toBeLessThan(0.005);
  });
});

describe.skipIf(data === null)("the relative default on a slice of RouteLLM's data (every 8th workload: 7 MMLU subjects and GSM8K)", () => {
  it("keeps quality at 95% of GPT-4's and saves net of its eval spend over 30 days at 2,000 calls a workload a day", () => {
    const all = recorded();
    const slice: RecordedData = { ...all, workloads: all.workloads.filter((_, index) => index % 8 === 0) };
    expect(slice.workloads.map((workload) => workload.name)).toContain('gsm8k');
    const run = runRelativeRouter(
      slice,
      { label: 'slice', callsPerWorkload: 60_000, callsPerDay: 2_000, sampleRate: 'auto' },
      ROUTER_DEFAULT,
      1,
    );
    const total = run.groups.find((group) => group.name.startsWith('all '));
    // What a user would notice: served accuracy at ≥ 95% of GPT-4's, no workload below 90% of its own after its first fifth,
    // every workload served by Mixtral in part, and a saving net of the replays and judges (6.9% to 8.4% with seeds 1 to 4, 7.4% with
    // seed 1; 0.8% when every grader with 50 checks was charged ε plus its Wilson upper bound, which dropped most subjects' grades).
    expect(total?.qualityRatio).toBeGreaterThanOrEqual(0.95);
    expect(total?.minQualityRatioAfterFirstFifth).toBeGreaterThanOrEqual(0.9);
    expect(total?.switched).toBe(slice.workloads.length);
    expect(total?.netSavings).toBeGreaterThan(0.05);
    expect(total?.evaluation).toBeLessThan((total?.requestedCost ?? 0) - (total?.production ?? 0));
  });
});

describe.skipIf(data === null)("the relative default's rollback detector on RouteLLM's data", () => {
  it('starts again when a share is demoted: the subjects a kept alarm demoted again and again are demoted once or twice in 30 days', () => {
    // The data does not drift, so every demotion here is a false alarm. When the detector was reset only on a change of the serving
    // model (a split's serving model stays GPT-4), these four were demoted 7 to 9 times each (seed 1): every share certified again
    // after its cooldown fell at its next check.
    const all = recorded();
    const names = [
      'mmlu/high_school_computer_science',
      'mmlu/high_school_european_history',
      'mmlu/high_school_psychology',
      'mmlu/sociology',
    ];
    const subset: RecordedData = { ...all, workloads: all.workloads.filter((workload) => names.includes(workload.name)) };
    const run = runRelativeRouter(
      subset,
      { label: 'demoted', callsPerWorkload: 60_000, callsPerDay: 2_000, sampleRate: 'auto' },
      ROUTER_DEFAULT,
      1,
    );
    expect(run.workloads.map((workload) => workload.name)).toEqual(names);
    for (const workload of run.workloads) expect(workload.demotions, workload.name).toBeLessThanOrEqual(2);
    expect(run.workloads.some((workload) => workload.demotions > 0)).toBe(true);
  });
});
