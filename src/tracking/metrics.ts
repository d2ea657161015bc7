/**
 * The `GET /metrics` content: per-call counters and histograms fed from every
 * trace, plus gauges and counters read from the engines, the trace writer and
 * the router at scrape time. Each `createMetrics` owns its own prom-client
 * Registry (no global state), with Node's process metrics (CPU, memory, event
 * loop lag, GC) collected into that same registry.
 *
 * Cardinality is bounded: labels carry no account, request, user or key; the
 * served model comes from the catalog, engines from the config, attempt
 * outcomes from the stable error codes; and each account gets its own labels
 * for at most `maxWorkloadsPerAccount` (project, workload) pairs. Later pairs
 * are folded into project="other", workload="other" (both, because projects
 * are created by their first call too, so folding only the workload would
 * still let a caller mint unbounded project labels); a warning is logged once
 * per account when folding starts. A real project or workload named `other`
 * or `none` shares its labels with these buckets.
 *
 * Under `serve --workers N` each worker keeps its own registry; `snapshot`
 * hands it over as JSON and `metrics-aggregate.ts` sums the workers'. Each
 * gauge declares here how it adds up (`aggregator`): gauges of amounts (calls
 * in flight, queue lengths) are summed, while the 0/1 gauges of a state report
 * 1 when any worker is in it (`'max'`).
 */
import { AggregatorRegistry, Counter, Gauge, Registry, collectDefaultMetrics, type Aggregator } from 'prom-client';
import { CounterFamily, HistogramFamily, observe, type CounterCell, type HistogramCell } from './metric-families.js';
import { errorFields, type Logger } from '../log/logger.js';
import type { Trace, TraceStatus } from '../store/store.js';
import { singleAttemptOutcome } from './engine-attempts.js';

export interface MetricSources {
  /** Per model replica: calls in flight and calls queued (waiting for a slot), read at scrape time. */
  engines(): Array<{ engine: string; model: string; inFlight: number; queued: number }>;
  /** The trace writer's counters (`TraceWriterStats`), read at scrape time. */
  traceWriter(): { enqueued: number; written: number; dropped: number; failedWrites: number; queued: number };
  /** Whether the store refuses writes now (traces or new workloads), and how many new workloads are served from memory meanwhile. */
  storeWrites(): { failing: boolean; unwrittenScopes: number };
  /** Whether the rate limits are per process now though configured as shared (Redis does not answer). */
  limits(): { degraded: boolean };
  /** The router worker's counters: samples queued, dropped, processed; and per workload, in this process, what it dropped, spent and saved. */
  router(): { leader: boolean; queued: number; dropped: number; processed: number; workloads: RouterWorkloadCounters[] };
  /** The OpenTelemetry export's counters (`TelemetryStats`; all 0 when export is off), read at scrape time. */
  telemetry(): { exported: number; dropped: number; queued: number };
  /** Per engine, as this process's calls kept it busy (`EngineMeter.load` gives it). */
  engineUse(): EngineUse[];
  /** Slow connections the guard closed since start, by the cap that closed them (`server/slow-connections.ts`). */
  shedConnections(): { address: number; total: number };
}

/** One engine's busy time, as this process's calls kept it busy. */
export interface EngineUse {
  engineId: string;
  /** Seconds with at least one call in flight since start. */
  busySeconds: number;
  /** Busy fraction over about the last five minutes, 0..1. */
  utilisation: number;
  /** The engine's `cost_per_hour`, USD; null when not configured. */
  costPerHour: number | null;
}

export interface RouterWorkloadCounters {
  accountId: string;
  project: string;
  workload: string;
  droppedSamples: number;
  evalSpendUsd: number;
  /** What routed calls cost less than on the requested model. */
  savedUsd: number;
}

export interface Metrics {
  /** Called once per finished inference call (every trace), on the hot path: synchronous, cheap, never throws. */
  observeCall(trace: Trace): void;
  /**
   * taskgate's own time before a chat reply's head (the `gateway` of its
   * `Server-Timing`: parse, key, limits, routing, … without the wait on
   * engines), once per reply whose head was sent, 401s and 429s included. Hot
   * path: synchronous, cheap, never throws.
   */
  observeGatewayOverhead(seconds: number, stream: boolean): void;
  /** The Prometheus text exposition, sources read now. */
  render(): Promise<{ contentType: string; body: string }>;
  /** The same, sources read now, as prom-client's JSON: what a worker of `serve --workers` hands over for `renderAggregate`. */
  snapshot(): Promise<MetricsSnapshot>;
}

/** prom-client's JSON form of a registry's metrics (`getMetricsAsJSON`), read only by `AggregatorRegistry` (`metrics-aggregate.ts`). */
export type MetricsSnapshot = object[];

export interface MetricsOptions {
  sources: MetricSources;
  logger: Logger;
  /** Distinct (project, workload) pairs an account gets its own labels for. Default 100. */
  maxWorkloadsPerAccount?: number;
}

/** The label for overflow pairs past the per-account cap. */
const otherLabel = 'other';
/** The label for a scope or model the call never reached (e.g. a 401, or a 400 before routing). */
const noneLabel = 'none';

/** Whole-call latency, 50 ms to 2 minutes (long generations and slow local models). */
const latencyBuckets = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120];
/** Time to first token starts lower: a warm local model answers in tens of milliseconds. */
const ttftBuckets = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** The gateway's own time is sub-millisecond when all is well: 50 µs up to 1 s (a store that is slow to create a workload). */
const overheadBuckets = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

type ScopeLabels = { project: string; workload: string; model: string };
type EnvironmentLabels = ScopeLabels & { environment: string };

/** The cells of one (project, workload, model, environment), bound once and added to on every call. */
interface CallSeries {
  scope: ScopeLabels;
  /** Cells are made on first use, here and below: a series reports only what happened. */
  byStatus: Partial<Record<TraceStatus, CounterCell>>;
  byErrorClass: Map<string, CounterCell>;
  promptTokens: CounterCell;
  completionTokens: CounterCell;
  cost: CounterCell;
  measuredCost: CounterCell | undefined;
  withEnvironment: EnvironmentLabels;
  latency: HistogramCell | undefined;
  ttft: HistogramCell | undefined;
}

interface AccountScopes {
  /** `project\u0000workload` pairs that have their own labels. */
  pairs: Set<string>;
  folding: boolean;
}

export function createMetrics(options: MetricsOptions): Metrics {
  const { sources, logger } = options;
  const maxPairs = Math.max(0, options.maxWorkloadsPerAccount ?? 100);
  const register = new Registry();
  collectDefaultMetrics({ register });

  // Label sets stay small: no account, user, key or request id; histograms also leave out the environment.
  const counter = <Label extends string>(name: string, help: string, labelNames: readonly Label[] = []) =>
    new Counter({ name, help, labelNames, registers: [register] });
  const gauge = <Label extends string>(name: string, help: string, labelNames: readonly Label[] = [], aggregator: Aggregator = 'sum') =>
    new Gauge({ name, help, labelNames, aggregator, registers: [register] });

  // Observed on every call: plain cells, labels bound once per series (metric-families.ts says why not prom-client's).
  const requests = new CounterFamily('taskgate_requests_total', 'Inference calls finished, by outcome.');
  const errors = new CounterFamily('taskgate_errors_total', 'Failed or aborted inference calls, by stable error code.');
  const promptTokens = new CounterFamily('taskgate_prompt_tokens_total', 'Prompt tokens billed.');
  const completionTokens = new CounterFamily('taskgate_completion_tokens_total', 'Completion tokens billed.');
  const cost = new CounterFamily('taskgate_cost_usd_total', 'Cost of inference calls in US dollars, at catalog prices.');
  const measuredCost = new CounterFamily(
    'taskgate_measured_cost_usd_total',
    "Cost of inference calls in US dollars, measured: their share of engine time at the engine's cost_per_hour (only calls on engines that have one).",
  );
  const latency = new HistogramFamily(
    'taskgate_request_duration_seconds',
    'Whole-call latency of successful calls (status ok).',
    latencyBuckets,
  );
  const ttft = new HistogramFamily(
    'taskgate_time_to_first_token_seconds',
    'Time to first token of streamed calls that produced one.',
    ttftBuckets,
  );
  const overhead = new HistogramFamily(
    'taskgate_gateway_overhead_seconds',
    "taskgate's own time per chat reply before its head, the wait on engines excluded (the gateway part of Server-Timing).",
    overheadBuckets,
  );
  let overheadOfJson: HistogramCell | undefined;
  let overheadOfStream: HistogramCell | undefined;
  const attempts = new CounterFamily(
    'taskgate_engine_attempts_total',
    "Upstream attempts of inference calls, by engine and outcome (ok, or the attempt's error code): a call tried on a second replica counts twice.",
  );
  /** engine -> outcome -> cell: a call's attempt is counted with two map lookups, nothing made. */
  const attemptCells = new Map<string, Map<string, CounterCell>>();
  const families = [requests, errors, promptTokens, completionTokens, cost, measuredCost, latency, ttft, overhead, attempts];
  const familySnapshots = () => families.map((family) => family.snapshot());

  const engineInFlight = gauge('taskgate_engine_in_flight_requests', 'Calls running on a model replica.', ['engine', 'model']);
  const engineQueued = gauge('taskgate_engine_queued_requests', 'Calls waiting for a slot on a model replica.', ['engine', 'model']);
  const engineBusy = counter(
    'taskgate_engine_busy_seconds_total',
    "Seconds an engine had at least one of this process's calls (or replays) in flight.",
    ['engine'],
  );
  const engineUtilisation = gauge(
    'taskgate_engine_utilisation',
    "An engine's busy fraction over about the last five minutes, 0 to 1, as this process's calls kept it busy.",
    ['engine'],
    'max',
  );
  const engineCostPerHour = gauge(
    'taskgate_engine_cost_per_hour_usd',
    "What an engine's machine costs per hour (engines[].cost_per_hour), for engines that have one.",
    ['engine'],
    'max',
  );
  const traceQueue = gauge('taskgate_trace_writer_queue_length', 'Traces waiting to be stored, the batch being written included.');
  const traceEnqueued = counter('taskgate_trace_writer_enqueued_total', 'Traces accepted by the trace writer.');
  const traceWritten = counter('taskgate_trace_writer_written_total', 'Traces stored.');
  const traceDropped = counter(
    'taskgate_trace_writer_dropped_total',
    'Traces lost: queue full, writer closed, or a write that kept failing.',
  );
  const traceFailedWrites = counter('taskgate_trace_writer_failed_writes_total', 'Trace batch writes that failed (each retried).');
  const storeWritesFailing = gauge(
    'taskgate_store_writes_failing',
    '1 while the store refuses writes (traces and new workloads wait in memory), else 0.',
    [],
    'max',
  );
  const unwrittenScopes = gauge(
    'taskgate_store_unwritten_workloads',
    'New workloads served from memory, waiting for the store to accept their write.',
  );
  const limitsDegraded = gauge(
    'taskgate_rate_limits_degraded',
    '1 while the rate limits are per process because their shared back end (Redis, or the primary of serve --workers) does not answer, else 0.',
    [],
    'max',
  );
  const routerLeader = gauge(
    'taskgate_router_leader',
    "1 when this process leads the fleet's router, 0 when it hands its samples to the leader.",
    [],
    'max',
  );
  const routerQueue = gauge('taskgate_router_queue_length', 'Router samples waiting to be processed.');
  const routerDropped = counter('taskgate_router_dropped_total', 'Router samples dropped because its queue was full.');
  const routerProcessed = counter('taskgate_router_processed_total', 'Router samples processed.');
  const workloadNames = ['project', 'workload'] as const;
  const routerWorkloadDropped = counter(
    'taskgate_router_samples_dropped_total',
    'Router samples of a workload dropped because the queue was full.',
    workloadNames,
  );
  const routerEvalSpend = counter(
    'taskgate_router_eval_spend_usd_total',
    "What evaluating a workload's routes cost (replays and judges), USD.",
    workloadNames,
  );
  const routerSavings = counter(
    'taskgate_router_savings_usd_total',
    "What a workload's routed calls cost less than on the requested models, USD (net saving: this minus the eval spend).",
    workloadNames,
  );
  const connectionsShed = counter(
    'taskgate_slow_connections_shed_total',
    'Connections closed by the slow-connection guard (over a second without a whole request, past a cap), by the cap: address or total.',
    ['cap'],
  );
  const spansExported = counter('taskgate_telemetry_spans_exported_total', 'OpenTelemetry spans the collector accepted.');
  const spansDropped = counter(
    'taskgate_telemetry_spans_dropped_total',
    "OpenTelemetry spans lost: the export queue was full, or their export failed (after the exporter's retries).",
  );
  const spansQueued = gauge('taskgate_telemetry_spans_queued', 'OpenTelemetry spans waiting to be exported or being exported.');

  const accounts = new Map<string, AccountScopes>();
  const series = new Map<string, CallSeries>();

  /** The (project, workload) labels of a call, folded past the account's cap. */
  function scopeOf(trace: Trace): [string, string] {
    if (trace.project === null && trace.workload === null) return [noneLabel, noneLabel];
    return workloadLabels(trace.accountId, trace.project ?? noneLabel, trace.workload ?? noneLabel);
  }

  function workloadLabels(accountId: string, project: string, workload: string): [string, string] {
    let account = accounts.get(accountId);
    if (account === undefined) {
      account = { pairs: new Set(), folding: false };
      accounts.set(accountId, account);
    }
    const pair = `${project}\u0000${workload}`;
    if (account.pairs.has(pair)) return [project, workload];
    if (account.pairs.size < maxPairs) {
      account.pairs.add(pair);
      return [project, workload];
    }
    if (!account.folding) {
      account.folding = true;
      logger.warn('metrics: too many workloads for their own labels; further ones are reported as project and workload "other"', {
        account_id: accountId,
        max_workloads_per_account: maxPairs,
      });
    }
    return [otherLabel, otherLabel];
  }

  function seriesOf(trace: Trace): CallSeries {
    const [project, workload] = scopeOf(trace);
    const model = trace.servedModel ?? noneLabel;
    const key = `${project}\u0000${workload}\u0000${model}\u0000${trace.environment}`;
    let found = series.get(key);
    if (found === undefined) {
      const scope = { project, workload, model };
      const withEnvironment = { ...scope, environment: trace.environment };
      found = {
        scope,
        byStatus: {},
        byErrorClass: new Map(),
        promptTokens: promptTokens.cell(withEnvironment),
        completionTokens: completionTokens.cell(withEnvironment),
        cost: cost.cell(withEnvironment),
        measuredCost: undefined,
        withEnvironment,
        latency: undefined,
        ttft: undefined,
      };
      series.set(key, found);
    }
    return found;
  }

  function countAttempt(engine: string, outcome: string): void {
    let byOutcome = attemptCells.get(engine);
    if (byOutcome === undefined) attemptCells.set(engine, (byOutcome = new Map()));
    let cell = byOutcome.get(outcome);
    if (cell === undefined) byOutcome.set(outcome, (cell = attempts.cell({ engine, outcome })));
    cell.value += 1;
  }

  function observeCall(trace: Trace): void {
    const call = seriesOf(trace);
    (call.byStatus[trace.status] ??= requests.cell({ ...call.withEnvironment, status: trace.status })).value += 1;
    if (trace.status !== 'ok' || trace.errorClass !== null) {
      const errorClass = trace.errorClass ?? 'unknown';
      let cell = call.byErrorClass.get(errorClass);
      if (cell === undefined) {
        cell = errors.cell({ ...call.scope, error_class: errorClass });
        call.byErrorClass.set(errorClass, cell);
      }
      cell.value += 1;
    }
    // Counted whatever the outcome: an aborted stream still used (and cost) its tokens.
    call.promptTokens.value += amount(trace.promptTokens);
    call.completionTokens.value += amount(trace.completionTokens);
    call.cost.value += amount(trace.costUsd);
    if (trace.measuredCostUsd !== null)
      (call.measuredCost ??= measuredCost.cell(call.withEnvironment)).value += amount(trace.measuredCostUsd);
    // A failure's latency says how fast it failed (a 400 in a millisecond, a 504 at the timeout), not how fast calls are served.
    if (trace.status === 'ok') observe((call.latency ??= latency.cell(call.scope)), amount(trace.latencyMs) / 1000);
    if (trace.stream && trace.ttftMs !== null) observe((call.ttft ??= ttft.cell(call.scope)), amount(trace.ttftMs) / 1000);
    // A call that reached no engine made no attempt; one that made one has no list (engine-attempts.ts).
    if (trace.attempts !== null) for (const attempt of trace.attempts) countAttempt(attempt.replica, attempt.outcome);
    else if (trace.replica !== null) countAttempt(trace.replica, singleAttemptOutcome(trace));
  }

  /**
   * Reads one source and applies what it said. A source that throws keeps its
   * last values: dropping a counter to 0 for one scrape would read as a reset
   * followed by a jump of its whole total.
   */
  function readSource<T>(name: string, read: () => T, apply: (value: T) => void): void {
    let value: T;
    try {
      value = read();
    } catch (error) {
      logger.error('metrics: a source failed at scrape time', { source: name, ...errorFields(error) });
      return;
    }
    apply(value);
  }

  /** Reads every source into the registry. */
  function readSources(): void {
    readSource(
      'engines',
      () => sources.engines(),
      (engines) => {
        // Reset first so a replica that went away stops being reported.
        engineInFlight.reset();
        engineQueued.reset();
        for (const { engine, model, inFlight, queued } of engines) {
          engineInFlight.set({ engine, model }, inFlight);
          engineQueued.set({ engine, model }, queued);
        }
      },
    );
    readSource(
      'traceWriter',
      () => sources.traceWriter(),
      (stats) => {
        traceQueue.set(stats.queued);
        setCounter(traceEnqueued, stats.enqueued);
        setCounter(traceWritten, stats.written);
        setCounter(traceDropped, stats.dropped);
        setCounter(traceFailedWrites, stats.failedWrites);
      },
    );
    readSource(
      'storeWrites',
      () => sources.storeWrites(),
      (writes) => {
        storeWritesFailing.set(writes.failing ? 1 : 0);
        unwrittenScopes.set(writes.unwrittenScopes);
      },
    );
    readSource(
      'limits',
      () => sources.limits(),
      (limits) => limitsDegraded.set(limits.degraded ? 1 : 0),
    );
    readSource(
      'router',
      () => sources.router(),
      (stats) => {
        routerLeader.set(stats.leader ? 1 : 0);
        routerQueue.set(stats.queued);
        setCounter(routerDropped, stats.dropped);
        setCounter(routerProcessed, stats.processed);
        for (const metric of [routerWorkloadDropped, routerEvalSpend, routerSavings]) metric.reset();
        for (const entry of stats.workloads) {
          const [project, workload] = workloadLabels(entry.accountId, entry.project, entry.workload);
          routerWorkloadDropped.inc({ project, workload }, amount(entry.droppedSamples));
          routerEvalSpend.inc({ project, workload }, amount(entry.evalSpendUsd));
          routerSavings.inc({ project, workload }, amount(entry.savedUsd));
        }
      },
    );
    readSource(
      'shedConnections',
      () => sources.shedConnections(),
      (shed) => {
        connectionsShed.reset();
        connectionsShed.inc({ cap: 'address' }, shed.address);
        connectionsShed.inc({ cap: 'total' }, shed.total);
      },
    );
    readSource(
      'engineUse',
      () => sources.engineUse(),
      (engines) => {
        for (const metric of [engineBusy, engineUtilisation, engineCostPerHour]) metric.reset();
        for (const { engineId: engine, busySeconds, utilisation, costPerHour } of engines) {
          engineBusy.inc({ engine }, amount(busySeconds));
          engineUtilisation.set({ engine }, utilisation);
          if (costPerHour !== null) engineCostPerHour.set({ engine }, costPerHour);
        }
      },
    );
    readSource(
      'telemetry',
      () => sources.telemetry(),
      (stats) => {
        setCounter(spansExported, stats.exported);
        setCounter(spansDropped, stats.dropped);
        spansQueued.set(stats.queued);
      },
    );
  }

  return {
    observeCall,
    observeGatewayOverhead(seconds, stream) {
      const cell = stream
        ? (overheadOfStream ??= overhead.cell({ stream: 'true' }))
        : (overheadOfJson ??= overhead.cell({ stream: 'false' }));
      observe(cell, amount(seconds));
    },
    async render() {
      readSources();
      // Both end in one line feed; prom-client separates families with an empty line.
      const calls = await AggregatorRegistry.aggregate([familySnapshots()]).metrics();
      return { contentType: register.contentType, body: `${await register.metrics()}\n${calls}` };
    },
    async snapshot() {
      readSources();
      return [...(await register.getMetricsAsJSON()), ...familySnapshots()];
    },
  };
}

/** A counter kept by its source: prom-client only adds, so the scrape resets it and adds the source's total. */
function setCounter(counter: Counter, total: number): void {
  counter.reset();
  counter.inc(amount(total));
}

/** Bad numbers (negative, NaN) count as 0 rather than throwing on the hot path. */
function amount(value: number): number {
  return Number.isFinite(value) && value > 0 ? value : 0;
}
