/**
 * What one generation call and one round of calls measure, the same way on
 * both paths (node-llama-cpp in this process, or taskgate over HTTP).
 *
 * A round is `calls` calls sent at once (1 for the single-call figures). It
 * records each call's time to first token and its decode rate, the round's
 * aggregate rate (all tokens over the round's wall time), and how disturbed
 * the machine was meanwhile: llama.cpp's threads busy-wait for each other, so
 * a process that takes a core for a moment slows a whole token down, and a
 * disturbed round is measured again.
 */
import { readFileSync } from 'node:fs';
import { cpuMicroseconds, describeNoise, noiseBetween } from './process-statistics.mjs';
import { log } from './log.mjs';

export interface CallTiming {
  /** From sending the call to its first non-empty piece of text. */
  firstTokenMs: number;
  /** From the first piece of text to the last. */
  decodeMs: number;
  /** From sending the call to its end. */
  totalMs: number;
  /** Generated tokens, as the engine counted them. */
  completionTokens: number;
  /** Prompt tokens, when the path reports them. */
  promptTokens: number | null;
}

export interface Round {
  calls: CallTiming[];
  wallMs: number;
  /** Tokens of all the calls over the round's wall time. */
  aggregateTokensPerSecond: number;
  /** CPU time of the benchmark's process (the direct path's llama.cpp threads, the HTTP client) and of taskgate, in % of one core over the round. */
  cpuPercent: Record<string, number>;
  stealPercent: number;
  otherProcessesPercent: number;
  noisePercent: number;
  attempts: number;
}

export interface RoundSettings {
  expectedTokens: number;
  maxNoisePercent: number;
  retries: number;
  /** Processes the benchmark started (taskgate): their CPU is the benchmark's own, not noise. */
  processes: Array<{ name: string; pid: number }>;
}

/** One call: `callNumber` is unique over the run, so no two prompts in a row are the same. */
export type GenerationCall = (callNumber: number) => Promise<CallTiming>;

let nextCallNumber = 0;

async function runRoundOnce(calls: number, call: GenerationCall, settings: RoundSettings): Promise<Omit<Round, 'attempts'>> {
  const before = snapshot(settings.processes);
  const started = performance.now();
  const timings = await Promise.all(Array.from({ length: calls }, () => call(nextCallNumber++)));
  const wallMs = performance.now() - started;
  const after = snapshot(settings.processes);
  for (const timing of timings) {
    // The looping models never stop by themselves: anything else means the call was cut short.
    if (timing.completionTokens !== settings.expectedTokens)
      throw new Error(`a call generated ${timing.completionTokens} tokens instead of ${settings.expectedTokens}`);
  }
  const tokens = timings.reduce((sum, timing) => sum + timing.completionTokens, 0);
  const cpuPercent = Object.fromEntries(
    Object.keys(after.processes).map((name) => [name, ((after.processes[name]! - before.processes[name]!) / 1000 / wallMs) * 100]),
  );
  return { calls: timings, wallMs, aggregateTokensPerSecond: (tokens * 1000) / wallMs, cpuPercent, ...noiseBetween(before, after) };
}

/** /proc/stat counts in USER_HZ, which the kernel keeps at 100 for user space whatever its own tick rate. */
const clockTicksPerSecond = 100;

/**
 * The machine's CPU time so far (all cores, from /proc/stat) and that of each
 * of the benchmark's processes (microseconds), in the shape `noiseBetween` takes.
 */
function snapshot(processes: RoundSettings['processes']) {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/);
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields.map(
    (field) => (Number(field) * 1_000_000) / clockTicksPerSecond,
  );
  const usage = process.cpuUsage();
  const times: Record<string, number> = { bench: usage.user + usage.system };
  for (const { name, pid } of processes) times[name] = cpuMicroseconds(pid);
  const own = Object.values(times).reduce((sum, value) => sum + value, 0);
  return {
    total: user + nice + system + idle + iowait + irq + softirq + steal,
    busy: user + nice + system + irq + softirq,
    steal,
    own,
    processes: times,
  };
}

/** A round disturbed by more than `maxNoisePercent` is run again, up to `retries` times; the least disturbed is kept. */
export async function runRound(calls: number, call: GenerationCall, settings: RoundSettings): Promise<Round> {
  let best = await runRoundOnce(calls, call, settings);
  let attempts = 1;
  while (best.noisePercent > settings.maxNoisePercent && attempts <= settings.retries) {
    log(`  ${describeNoise(best)} (over ${settings.maxNoisePercent}%): measuring again`);
    const next = await runRoundOnce(calls, call, settings);
    attempts++;
    if (next.noisePercent < best.noisePercent) best = next;
  }
  return { ...best, attempts };
}

/** Tokens per second while decoding: the tokens after the first over the time between the first and the last. */
export function decodeRate(timing: CallTiming): number {
  return timing.decodeMs > 0 ? ((timing.completionTokens - 1) * 1000) / timing.decodeMs : Number.NaN;
}
