import { describe, expect, it } from 'vitest';
import { traceFixture } from '../../test/contracts/store/trace-fixture.js';
import { silentLogger } from '../log/logger.js';
import type { Trace } from '../store/store.js';
import { createMetrics, type MetricSources, type Metrics } from './metrics.js';
import { renderAggregate } from './metrics-aggregate.js';
import { capturingLogger } from '../../test/helpers/capturing-logger.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

interface Exposition {
  help: Map<string, string>;
  types: Map<string, string>;
  samples: Sample[];
}

const metricName = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const helpLine = new RegExp(`^# HELP (${metricName}) (.*)$`);
const typeLine = new RegExp(`^# TYPE (${metricName}) (counter|gauge|histogram|summary|untyped)$`);
const sampleLine = new RegExp(`^(${metricName})(?:\\{(.*)\\})? (\\S+)$`);
const labelPair = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)/y;
// NaN and Inf in any case, as Prometheus reads them (Go's ParseFloat): prom-client writes NaN as `Nan`
// (an event-loop gauge has one before its first sample).
const numberText = /^(?:[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?inf|nan)$/i;

/**
 * A strict reader of the Prometheus text format (0.0.4): every line is HELP,
 * TYPE, a sample `name{labels} value`, or empty (prom-client separates
 * families with one); every sample belongs to a family whose HELP and TYPE
 * came before it. Throws naming the first bad line.
 */
function parseExposition(body: string): Exposition {
  expect(body.endsWith('\n')).toBe(true);
  const exposition: Exposition = { help: new Map(), types: new Map(), samples: [] };
  for (const line of body.slice(0, -1).split('\n')) {
    const help = helpLine.exec(line);
    const type = typeLine.exec(line);
    const sample = sampleLine.exec(line);
    if (line === '') continue;
    if (help !== null) exposition.help.set(help[1]!, help[2]!);
    else if (type !== null) exposition.types.set(type[1]!, type[2]!);
    else if (sample !== null) {
      const [, name, labelText, valueText] = sample as unknown as [string, string, string | undefined, string];
      if (!numberText.test(valueText)) throw new Error(`bad sample value: ${line}`);
      const labels: Record<string, string> = {};
      if (labelText !== undefined && labelText !== '') {
        labelPair.lastIndex = 0;
        while (labelPair.lastIndex < labelText.length) {
          const pair = labelPair.exec(labelText);
          if (pair === null) throw new Error(`bad labels: ${line}`);
          labels[pair[1]!] = pair[2]!;
        }
      }
      const family = familyOf(exposition, name);
      if (family === null) throw new Error(`sample without TYPE and HELP before it: ${line}`);
      exposition.samples.push({ name, labels, value: Number(valueText) });
    } else throw new Error(`not a Prometheus text line: ${JSON.stringify(line)}`);
  }
  return exposition;
}

function familyOf(exposition: Exposition, sampleName: string): string | null {
  const candidates = [sampleName, sampleName.replace(/_(bucket|sum|count)$/, '')];
  for (const candidate of candidates) {
    if (exposition.types.has(candidate) && exposition.help.has(candidate)) return candidate;
  }
  return null;
}

/** The samples of `name` whose labels include `labels`. */
function samples(exposition: Exposition, name: string, labels: Record<string, string> = {}): Sample[] {
  return exposition.samples.filter(
    (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
}

/** The one sample of `name` with exactly `labels`; undefined when there is none. */
function valueOf(exposition: Exposition, name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples(exposition, name, labels).filter((sample) => Object.keys(sample.labels).length === Object.keys(labels).length);
  expect(found.length).toBeLessThanOrEqual(1);
  return found[0]?.value;
}

async function scrape(metrics: Metrics): Promise<Exposition> {
  const { contentType, body } = await metrics.render();
  expect(contentType).toMatch(/^text\/plain; version=0\.0\.4; charset=utf-8$/);
  return parseExposition(body);
}

let requestCounter = 0;
function trace(overrides: Partial<Trace> = {}): Trace {
  requestCounter += 1;
  return traceFixture({
    requestId: `req-${requestCounter}`,
    accountId: 'acct-a',
    workload: 'summarise',
    servedModel: 'qwen-small',
    replica: 'llama-1',
    promptTokens: 100,
    completionTokens: 20,
    costUsd: 0.001,
    latencyMs: 300,
    startedAt: 1_700_000_000_000,
    requestBody: null,
    replyBody: null,
    ...overrides,
  });
}

/** Sources whose answers a test changes between scrapes. */
function mutableSources(): MetricSources & {
  engineList: ReturnType<MetricSources['engines']>;
  writer: ReturnType<MetricSources['traceWriter']>;
  routerStats: ReturnType<MetricSources['router']>;
  routerFails: boolean;
  engineUseList: ReturnType<MetricSources['engineUse']>;
} {
  return {
    engineList: [],
    writer: { enqueued: 0, written: 0, dropped: 0, failedWrites: 0, queued: 0 },
    routerStats: { leader: true, queued: 0, dropped: 0, processed: 0, workloads: [] },
    routerFails: false,
    engineUseList: [],
    engineUse() {
      return this.engineUseList;
    },
    engines() {
      return this.engineList;
    },
    traceWriter() {
      return this.writer;
    },
    storeWrites: () => ({ failing: false, unwrittenScopes: 0 }),
    limits: () => ({ degraded: false }),
    telemetry: () => ({ exported: 0, dropped: 0, queued: 0 }),
    shedConnections: () => ({ address: 3, total: 1 }),
    router() {
      if (this.routerFails) throw new Error('router stats unavailable');
      return this.routerStats;
    },
  };
}

const shop = { project: 'shop', workload: 'summarise', model: 'qwen-small' };

describe('createMetrics', () => {
  it('counts calls, errors, tokens and cost per scope, model, environment and outcome', async () => {
    const metrics = createMetrics({ sources: mutableSources(), logger: silentLogger });
    metrics.observeCall(trace({ latencyMs: 300, promptTokens: 100, completionTokens: 20, costUsd: 0.001 }));
    metrics.observeCall(trace({ stream: true, ttftMs: 80, latencyMs: 1_500, promptTokens: 50, completionTokens: 10, costUsd: 0.0005 }));
    metrics.observeCall(trace({ environment: 'staging', latencyMs: 700, promptTokens: 7, completionTokens: 3, costUsd: 0.0001 }));
    metrics.observeCall(
      trace({
        status: 'error',
        errorClass: 'engine_timeout',
        httpStatus: 504,
        latencyMs: 30_000,
        promptTokens: 0,
        completionTokens: 0,
        costUsd: 0,
      }),
    );
    metrics.observeCall(
      trace({
        status: 'aborted',
        errorClass: 'client_closed',
        stream: true,
        ttftMs: 200,
        latencyMs: 5_000,
        promptTokens: 40,
        completionTokens: 7,
        costUsd: 0.0002,
      }),
    );
    metrics.observeCall(
      trace({
        project: null,
        workload: null,
        servedModel: null,
        requestedModel: null,
        status: 'error',
        errorClass: 'invalid_api_key',
        httpStatus: 401,
        latencyMs: 1,
        promptTokens: 0,
        completionTokens: 0,
        costUsd: 0,
      }),
    );
    metrics.observeCall(
      trace({
        environment: 'staging',
        latencyMs: 100,
        promptTokens: 1,
        completionTokens: 1,
        costUsd: 0,
        engineSeconds: 0.5,
        measuredCostUsd: 0.002,
      }),
    );
    const exposition = await scrape(metrics);

    const production = { ...shop, environment: 'production' };
    expect(valueOf(exposition, 'taskgate_requests_total', { ...production, status: 'ok' })).toBe(2);
    expect(valueOf(exposition, 'taskgate_requests_total', { ...shop, environment: 'staging', status: 'ok' })).toBe(2);
    expect(valueOf(exposition, 'taskgate_requests_total', { ...production, status: 'error' })).toBe(1);
    expect(valueOf(exposition, 'taskgate_requests_total', { ...production, status: 'aborted' })).toBe(1);
    const none = { project: 'none', workload: 'none', model: 'none' };
    expect(valueOf(exposition, 'taskgate_requests_total', { ...none, environment: 'production', status: 'error' })).toBe(1);
    expect(samples(exposition, 'taskgate_requests_total').reduce((sum, sample) => sum + sample.value, 0)).toBe(7);

    expect(valueOf(exposition, 'taskgate_errors_total', { ...shop, error_class: 'engine_timeout' })).toBe(1);
    expect(valueOf(exposition, 'taskgate_errors_total', { ...shop, error_class: 'client_closed' })).toBe(1);
    expect(valueOf(exposition, 'taskgate_errors_total', { ...none, error_class: 'invalid_api_key' })).toBe(1);
    expect(samples(exposition, 'taskgate_errors_total')).toHaveLength(3);

    expect(valueOf(exposition, 'taskgate_prompt_tokens_total', production)).toBe(190);
    expect(valueOf(exposition, 'taskgate_completion_tokens_total', production)).toBe(37);
    expect(valueOf(exposition, 'taskgate_prompt_tokens_total', { ...shop, environment: 'staging' })).toBe(8);
    expect(valueOf(exposition, 'taskgate_cost_usd_total', production)).toBeCloseTo(0.0017, 12);
    expect(valueOf(exposition, 'taskgate_cost_usd_total', { ...shop, environment: 'staging' })).toBeCloseTo(0.0001, 12);
    // Measured cost: only calls on engines with a cost_per_hour have one.
    expect(valueOf(exposition, 'taskgate_measured_cost_usd_total', { ...shop, environment: 'staging' })).toBeCloseTo(0.002, 12);
    expect(samples(exposition, 'taskgate_measured_cost_usd_total', production)).toEqual([]);

    // Latency: the four successful calls only (both environments), in seconds, cumulative buckets.
    expect(valueOf(exposition, 'taskgate_request_duration_seconds_count', shop)).toBe(4);
    expect(valueOf(exposition, 'taskgate_request_duration_seconds_sum', shop)).toBeCloseTo(2.6, 9);
    const bucket = (le: string) => valueOf(exposition, 'taskgate_request_duration_seconds_bucket', { ...shop, le });
    expect([bucket('0.05'), bucket('0.25'), bucket('0.5'), bucket('1'), bucket('2.5'), bucket('120'), bucket('+Inf')]).toEqual([
      0, 1, 2, 3, 4, 4, 4,
    ]);
    expect(samples(exposition, 'taskgate_request_duration_seconds_count', { project: 'none' })).toEqual([]);

    // TTFT: streams that produced a first token, whatever their outcome.
    expect(valueOf(exposition, 'taskgate_time_to_first_token_seconds_count', shop)).toBe(2);
    expect(valueOf(exposition, 'taskgate_time_to_first_token_seconds_sum', shop)).toBeCloseTo(0.28, 9);
    expect(valueOf(exposition, 'taskgate_time_to_first_token_seconds_bucket', { ...shop, le: '0.1' })).toBe(1);
  });

  it('counts every upstream attempt by engine and outcome: the list when a call made several, else its one replica', async () => {
    const metrics = createMetrics({ sources: mutableSources(), logger: silentLogger });
    metrics.observeCall(trace({ replica: 'gpu-a' }));
    metrics.observeCall(trace({ replica: 'gpu-a' }));
    metrics.observeCall(trace({ replica: 'gpu-b', status: 'error', errorClass: 'engine_timeout', httpStatus: 504 }));
    metrics.observeCall(trace({ replica: 'gpu-b', status: 'aborted', errorClass: 'client_closed', httpStatus: 499 }));
    // Refused on gpu-a before it started, served by gpu-b.
    metrics.observeCall(
      trace({
        replica: 'gpu-b',
        attempts: [
          { replica: 'gpu-a', outcome: 'engine_unavailable' },
          { replica: 'gpu-b', outcome: 'ok' },
        ],
      }),
    );
    // Both replicas refused it: two attempts, one failed call.
    metrics.observeCall(
      trace({
        replica: 'gpu-b',
        status: 'error',
        errorClass: 'engine_unavailable',
        httpStatus: 503,
        attempts: [
          { replica: 'gpu-a', outcome: 'engine_connection_closed' },
          { replica: 'gpu-b', outcome: 'engine_unavailable' },
        ],
      }),
    );
    // Never reached an engine (a 401, a 429): no attempt.
    metrics.observeCall(trace({ replica: null, servedModel: null, status: 'error', errorClass: 'rate_limit_exceeded', httpStatus: 429 }));
    const exposition = await scrape(metrics);

    const attempts = (engine: string, outcome: string) => valueOf(exposition, 'taskgate_engine_attempts_total', { engine, outcome });
    expect(attempts('gpu-a', 'ok')).toBe(2);
    expect(attempts('gpu-a', 'engine_unavailable')).toBe(1);
    expect(attempts('gpu-a', 'engine_connection_closed')).toBe(1);
    expect(attempts('gpu-b', 'ok')).toBe(1);
    expect(attempts('gpu-b', 'engine_timeout')).toBe(1);
    expect(attempts('gpu-b', 'client_closed')).toBe(1);
    expect(attempts('gpu-b', 'engine_unavailable')).toBe(1);
    expect(samples(exposition, 'taskgate_engine_attempts_total').reduce((sum, sample) => sum + sample.value, 0)).toBe(8);
    expect(exposition.types.get('taskgate_engine_attempts_total')).toBe('counter');
    // The calls are counted once each, whatever their attempts.
    expect(samples(exposition, 'taskgate_requests_total').reduce((sum, sample) => sum + sample.value, 0)).toBe(7);
  });

  it('folds (project, workload) pairs past the per-account cap into other/other and warns once per account', async () => {
    const { logger, lines } = capturingLogger();
    const metrics = createMetrics({ sources: mutableSources(), logger, maxWorkloadsPerAccount: 2 });
    const call = (accountId: string, project: string | null, workload: string | null) =>
      metrics.observeCall(trace({ accountId, project, workload }));
    call('acct-a', 'p1', 'w1');
    call('acct-a', 'p1', 'w2');
    call('acct-a', 'p1', 'w3'); // third pair: folded
    call('acct-a', 'p2', 'w1'); // a new project is folded too
    call('acct-a', 'p1', 'w1'); // a pair that already has labels keeps them
    call('acct-a', null, null); // an unknown scope is not a pair and never folded
    call('acct-b', 'p1', 'w3'); // another account has its own cap
    call('acct-b', 'p9', 'w9');
    call('acct-b', 'p9', 'w8');
    const exposition = await scrape(metrics);

    const requests = (project: string, workload: string) =>
      samples(exposition, 'taskgate_requests_total', { project, workload }).reduce((sum, sample) => sum + sample.value, 0);
    expect(requests('p1', 'w1')).toBe(2);
    expect(requests('p1', 'w2')).toBe(1);
    expect(requests('p1', 'w3')).toBe(1); // acct-b's own
    expect(requests('p9', 'w9')).toBe(1);
    expect(requests('other', 'other')).toBe(3); // acct-a's p1/w3 and p2/w1, acct-b's p9/w8
    expect(requests('none', 'none')).toBe(1);
    expect(samples(exposition, 'taskgate_requests_total', { project: 'p2' })).toEqual([]);
    expect(samples(exposition, 'taskgate_requests_total', { workload: 'w8' })).toEqual([]);
    expect(
      valueOf(exposition, 'taskgate_request_duration_seconds_count', { project: 'other', workload: 'other', model: 'qwen-small' }),
    ).toBe(3);

    const warnings = lines.filter((line) => line.level === 'warn');
    expect(warnings.map((line) => line.account_id)).toEqual(['acct-a', 'acct-b']);
    expect(warnings[0]).toMatchObject({ max_workloads_per_account: 2 });
  });

  it('reads engines, the trace writer and the router at scrape time', async () => {
    const sources = mutableSources();
    const metrics = createMetrics({ sources, logger: silentLogger });
    sources.engineList = [
      { engine: 'llama-1', model: 'qwen-small', inFlight: 2, queued: 5 },
      { engine: 'vllm-1', model: 'qwen-large', inFlight: 7, queued: 0 },
    ];
    sources.writer = { enqueued: 100, written: 90, dropped: 3, failedWrites: 1, queued: 7 };
    sources.routerStats = {
      leader: true,
      queued: 4,
      dropped: 2,
      processed: 50,
      workloads: [{ accountId: 'acct-1', project: 'shop', workload: 'summarise', droppedSamples: 2, evalSpendUsd: 0.25, savedUsd: 1.5 }],
    };
    sources.engineUseList = [
      { engineId: 'gpu-a', busySeconds: 120.5, utilisation: 0.4, costPerHour: 2.5 },
      { engineId: 'cpu', busySeconds: 3, utilisation: 0.01, costPerHour: null },
    ];
    let exposition = await scrape(metrics);
    expect(valueOf(exposition, 'taskgate_engine_busy_seconds_total', { engine: 'gpu-a' })).toBe(120.5);
    expect(valueOf(exposition, 'taskgate_engine_utilisation', { engine: 'gpu-a' })).toBe(0.4);
    expect(valueOf(exposition, 'taskgate_engine_cost_per_hour_usd', { engine: 'gpu-a' })).toBe(2.5);
    expect(valueOf(exposition, 'taskgate_engine_busy_seconds_total', { engine: 'cpu' })).toBe(3);
    expect(samples(exposition, 'taskgate_engine_cost_per_hour_usd', { engine: 'cpu' })).toEqual([]);
    expect(valueOf(exposition, 'taskgate_engine_in_flight_requests', { engine: 'llama-1', model: 'qwen-small' })).toBe(2);
    expect(valueOf(exposition, 'taskgate_engine_queued_requests', { engine: 'llama-1', model: 'qwen-small' })).toBe(5);
    expect(valueOf(exposition, 'taskgate_engine_in_flight_requests', { engine: 'vllm-1', model: 'qwen-large' })).toBe(7);
    expect(valueOf(exposition, 'taskgate_trace_writer_queue_length')).toBe(7);
    expect(valueOf(exposition, 'taskgate_slow_connections_shed_total', { cap: 'address' })).toBe(3);
    expect(valueOf(exposition, 'taskgate_slow_connections_shed_total', { cap: 'total' })).toBe(1);
    expect(valueOf(exposition, 'taskgate_trace_writer_enqueued_total')).toBe(100);
    expect(valueOf(exposition, 'taskgate_trace_writer_written_total')).toBe(90);
    expect(valueOf(exposition, 'taskgate_trace_writer_dropped_total')).toBe(3);
    expect(valueOf(exposition, 'taskgate_trace_writer_failed_writes_total')).toBe(1);
    expect(valueOf(exposition, 'taskgate_router_queue_length')).toBe(4);
    expect(valueOf(exposition, 'taskgate_router_leader')).toBe(1);
    expect(valueOf(exposition, 'taskgate_router_dropped_total')).toBe(2);
    expect(valueOf(exposition, 'taskgate_router_processed_total')).toBe(50);
    const summarise = { project: 'shop', workload: 'summarise' };
    expect(valueOf(exposition, 'taskgate_router_samples_dropped_total', summarise)).toBe(2);
    expect(valueOf(exposition, 'taskgate_router_eval_spend_usd_total', summarise)).toBe(0.25);
    expect(valueOf(exposition, 'taskgate_router_savings_usd_total', summarise)).toBe(1.5);

    // The next scrape sees the sources as they are then; a replica that went away is gone.
    sources.engineList = [{ engine: 'vllm-1', model: 'qwen-large', inFlight: 1, queued: 3 }];
    sources.writer = { enqueued: 180, written: 175, dropped: 3, failedWrites: 1, queued: 2 };
    sources.routerStats = { leader: false, queued: 0, dropped: 2, processed: 61, workloads: [] };
    exposition = await scrape(metrics);
    expect(samples(exposition, 'taskgate_engine_in_flight_requests', { engine: 'llama-1' })).toEqual([]);
    expect(samples(exposition, 'taskgate_engine_queued_requests', { engine: 'llama-1' })).toEqual([]);
    expect(valueOf(exposition, 'taskgate_engine_in_flight_requests', { engine: 'vllm-1', model: 'qwen-large' })).toBe(1);
    expect(valueOf(exposition, 'taskgate_engine_queued_requests', { engine: 'vllm-1', model: 'qwen-large' })).toBe(3);
    expect(valueOf(exposition, 'taskgate_trace_writer_written_total')).toBe(175);
    expect(valueOf(exposition, 'taskgate_trace_writer_queue_length')).toBe(2);
    expect(valueOf(exposition, 'taskgate_router_processed_total')).toBe(61);
    expect(valueOf(exposition, 'taskgate_router_queue_length')).toBe(0);
    expect(valueOf(exposition, 'taskgate_router_leader')).toBe(0);
  });

  it('keeps a failing source at its last values, logs it, and still answers the scrape', async () => {
    const sources = mutableSources();
    const { logger, lines } = capturingLogger();
    const metrics = createMetrics({ sources, logger });
    sources.routerStats = {
      leader: true,
      queued: 4,
      dropped: 2,
      processed: 50,
      workloads: [{ accountId: 'acct-1', project: 'shop', workload: 'summarise', droppedSamples: 2, evalSpendUsd: 0.25, savedUsd: 1.5 }],
    };
    await scrape(metrics);
    sources.routerFails = true;
    sources.writer = { enqueued: 9, written: 9, dropped: 0, failedWrites: 0, queued: 0 };
    const exposition = await scrape(metrics);
    // A counter that fell to 0 for one scrape would read as a reset and then a jump of its whole total.
    expect(valueOf(exposition, 'taskgate_router_processed_total')).toBe(50);
    expect(valueOf(exposition, 'taskgate_trace_writer_written_total')).toBe(9);
    expect(lines.filter((line) => line.level === 'error')).toMatchObject([{ source: 'router', error_message: 'router stats unavailable' }]);
  });

  it('writes valid Prometheus text with HELP and TYPE for every family, process metrics included', async () => {
    const metrics = createMetrics({ sources: mutableSources(), logger: silentLogger });
    metrics.observeCall(trace({ stream: true, ttftMs: 40 }));
    metrics.observeCall(trace({ status: 'error', errorClass: 'engine_error' }));
    const { body } = await metrics.render();
    const exposition = parseExposition(body); // throws on any line that is not HELP, TYPE or `name{labels} value`
    const expectedTypes: Record<string, string> = {
      taskgate_requests_total: 'counter',
      taskgate_errors_total: 'counter',
      taskgate_prompt_tokens_total: 'counter',
      taskgate_completion_tokens_total: 'counter',
      taskgate_cost_usd_total: 'counter',
      taskgate_request_duration_seconds: 'histogram',
      taskgate_time_to_first_token_seconds: 'histogram',
      taskgate_engine_in_flight_requests: 'gauge',
      taskgate_engine_queued_requests: 'gauge',
      taskgate_trace_writer_queue_length: 'gauge',
      taskgate_trace_writer_enqueued_total: 'counter',
      taskgate_trace_writer_written_total: 'counter',
      taskgate_trace_writer_dropped_total: 'counter',
      taskgate_trace_writer_failed_writes_total: 'counter',
      taskgate_router_queue_length: 'gauge',
      taskgate_router_dropped_total: 'counter',
      taskgate_router_processed_total: 'counter',
      taskgate_engine_attempts_total: 'counter',
    };
    for (const [name, type] of Object.entries(expectedTypes)) {
      expect(exposition.types.get(name), name).toBe(type);
      expect(exposition.help.get(name), name).toMatch(/\S/);
    }
    expect(exposition.types.get('process_cpu_user_seconds_total')).toBe('counter');
    expect(samples(exposition, 'nodejs_eventloop_lag_seconds')).toHaveLength(1);
  });

  it('keeps each instance to its own registry', async () => {
    const first = createMetrics({ sources: mutableSources(), logger: silentLogger });
    const second = createMetrics({ sources: mutableSources(), logger: silentLogger });
    first.observeCall(trace());
    expect(samples(await scrape(first), 'taskgate_requests_total')).toHaveLength(1);
    expect(samples(await scrape(second), 'taskgate_requests_total')).toEqual([]);
  });

  it('takes 100k calls over many workloads and stays within the label cap', async () => {
    const { logger, lines } = capturingLogger();
    const metrics = createMetrics({ sources: mutableSources(), logger });
    const statuses = ['ok', 'ok', 'ok', 'error', 'aborted'] as const;
    for (let index = 0; index < 100_000; index++) {
      const status = statuses[index % statuses.length]!;
      metrics.observeCall(
        trace({
          project: `p${index % 7}`,
          workload: `w${index % 1_000}`,
          servedModel: index % 3 === 0 ? 'qwen-large' : 'qwen-small',
          environment: index % 11 === 0 ? 'staging' : 'production',
          status,
          errorClass: status === 'ok' ? null : status === 'aborted' ? 'client_closed' : 'engine_error',
          stream: index % 2 === 0,
          ttftMs: index % 2 === 0 ? index % 500 : null,
          latencyMs: index % 120_000,
        }),
      );
    }
    const exposition = await scrape(metrics);
    const requests = samples(exposition, 'taskgate_requests_total');
    expect(requests.reduce((sum, sample) => sum + sample.value, 0)).toBe(100_000);
    const pairs = new Set(requests.map((sample) => `${sample.labels.project}/${sample.labels.workload}`));
    expect(pairs.size).toBe(101); // 100 with their own labels, plus other/other
    expect(pairs.has('other/other')).toBe(true);
    expect(lines.filter((line) => line.level === 'warn')).toHaveLength(1);
  });
});

describe('renderAggregate (serve --workers)', () => {
  it("adds up the workers' calls, histograms and amounts, and reports a 0/1 state when any worker is in it", async () => {
    const [first, second] = [mutableSources(), mutableSources()];
    first.engineList = [{ engine: 'gpu', model: 'm', inFlight: 2, queued: 1 }];
    second.engineList = [{ engine: 'gpu', model: 'm', inFlight: 3, queued: 0 }];
    first.routerStats = { ...first.routerStats, leader: false };
    second.routerStats = { ...second.routerStats, leader: true };
    const workers = [
      createMetrics({ sources: first, logger: silentLogger }),
      createMetrics({ sources: second, logger: silentLogger }),
    ] as const;
    workers[0].observeCall(trace({ latencyMs: 300 }));
    workers[1].observeCall(trace({ latencyMs: 300 }));
    workers[1].observeCall(trace({ status: 'error', errorClass: 'engine_error' }));
    workers[1].observeCall(
      trace({
        project: 'blog',
        replica: 'llama-2',
        attempts: [
          { replica: 'llama-1', outcome: 'engine_unavailable' },
          { replica: 'llama-2', outcome: 'ok' },
        ],
      }),
    );

    const { contentType, body } = await renderAggregate(await Promise.all(workers.map((worker) => worker.snapshot())));
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    const exposition = parseExposition(body);
    expect(valueOf(exposition, 'taskgate_requests_total', { ...shop, environment: 'production', status: 'ok' })).toBe(2);
    expect(valueOf(exposition, 'taskgate_requests_total', { ...shop, environment: 'production', status: 'error' })).toBe(1);
    expect(valueOf(exposition, 'taskgate_request_duration_seconds_count', shop)).toBe(2);
    expect(valueOf(exposition, 'taskgate_request_duration_seconds_bucket', { ...shop, le: '0.5' })).toBe(2);
    expect(valueOf(exposition, 'taskgate_engine_in_flight_requests', { engine: 'gpu', model: 'm' })).toBe(5);
    expect(valueOf(exposition, 'taskgate_router_leader')).toBe(1);
    expect(valueOf(exposition, 'taskgate_rate_limits_degraded')).toBe(0);
    // Every worker's attempts, added up per engine and outcome.
    expect(valueOf(exposition, 'taskgate_engine_attempts_total', { engine: 'llama-1', outcome: 'ok' })).toBe(2);
    expect(valueOf(exposition, 'taskgate_engine_attempts_total', { engine: 'llama-1', outcome: 'engine_error' })).toBe(1);
    expect(valueOf(exposition, 'taskgate_engine_attempts_total', { engine: 'llama-1', outcome: 'engine_unavailable' })).toBe(1);
    expect(valueOf(exposition, 'taskgate_engine_attempts_total', { engine: 'llama-2', outcome: 'ok' })).toBe(1);
    // Process metrics are summed too, but a start time is not: it has no meaning for the sum.
    expect(samples(exposition, 'process_start_time_seconds')).toEqual([]);
  });
});
