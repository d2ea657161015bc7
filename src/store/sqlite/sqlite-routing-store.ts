/** The routing domain (`routing-store.ts`) on SQLite: one table each, JSON columns for contracts and certificates. */
import type Database from 'better-sqlite3';
import { decodeSketch, encodeSketch, newSketch } from '../../tracking/latency-sketch.js';
import type { CandidateCounts, EvidenceDelta, Feedback, JudgeCheckCounts, ModelUsage, RouteChange, RouteRecord, RoutingStore, Scope, StoredContract } from '../routing-store.js';

interface RouteRow {
  account_id: string;
  project: string;
  workload: string;
  requested_model: string;
  served_model: string;
  pinned_model: string | null;
  certificate: string | null;
  cooldowns: string;
  fallbacks: string;
  updated_at: number;
}

interface ChangeRow {
  requested_model: string;
  from_model: string;
  to_model: string;
  reason: RouteChange['reason'];
  certificate: string | null;
  detail: string | null;
  at: number;
}

interface FeedbackRow {
  account_id: string;
  request_id: string;
  model: string | null;
  project: string | null;
  workload: string | null;
  pass: number | null;
  score: number | null;
  comment: string | null;
  evidence_version: number | null;
  created_at: number;
}

const scopeWhere = 'account_id = ? AND project = ? AND workload = ?';
const scopeOf = (scope: Scope): [string, string, string] => [scope.accountId, scope.project, scope.workload];

function prepareRoutingStatements(database: Database.Database) {
  return {
    latestContract: database.prepare<[string, string, string], { version: number; evidence_version: number | null; contract: string; created_at: number }>(
      `SELECT version, evidence_version, contract, created_at FROM eval_contracts WHERE ${scopeWhere} ORDER BY version DESC LIMIT 1`,
    ),
    insertContract: database.prepare<[string, string, string, number, number, string, number]>(
      'INSERT INTO eval_contracts (account_id, project, workload, version, evidence_version, contract, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    sketchesOf: database.prepare<[string, string, string, string, string, number], { latency: Buffer | null; ttft: Buffer | null }>(
      `SELECT latency, ttft FROM route_evidence WHERE ${scopeWhere} AND requested_model = ? AND candidate_model = ? AND contract_version = ?`,
    ),
    addEvidence: database.prepare(
      `INSERT INTO route_evidence (account_id, project, workload, requested_model, candidate_model, contract_version,
         evaluated, passed, errors, prompt_tokens, completion_tokens, cost_usd, latency_ms_total, updated_at)
       VALUES (@accountId, @project, @workload, @requestedModel, @candidateModel, @contractVersion,
         @evaluated, @passed, @errors, @promptTokens, @completionTokens, @costUsd, @latencyMsTotal, @at)
       ON CONFLICT (account_id, project, workload, requested_model, contract_version, candidate_model) DO UPDATE SET
         evaluated = evaluated + excluded.evaluated, passed = passed + excluded.passed, errors = errors + excluded.errors,
         prompt_tokens = prompt_tokens + excluded.prompt_tokens, completion_tokens = completion_tokens + excluded.completion_tokens,
         cost_usd = cost_usd + excluded.cost_usd, latency_ms_total = latency_ms_total + excluded.latency_ms_total,
         updated_at = excluded.updated_at`,
    ),
    resetEvidence: database.prepare<[string, string, string, string, string, number]>(
      `DELETE FROM route_evidence WHERE ${scopeWhere} AND requested_model = ? AND candidate_model = ? AND contract_version = ?`,
    ),
    setSketches: database.prepare<[Buffer | null, Buffer | null, string, string, string, string, string, number]>(
      `UPDATE route_evidence SET latency = ?, ttft = ? WHERE ${scopeWhere} AND requested_model = ? AND candidate_model = ? AND contract_version = ?`,
    ),
    listEvidence: database.prepare<[string, string, string, string, number], Omit<CandidateCounts, 'latency' | 'ttft'> & { latency: Buffer | null; ttft: Buffer | null }>(
      `SELECT requested_model AS requestedModel, candidate_model AS candidateModel, contract_version AS contractVersion,
         evaluated, passed, errors, prompt_tokens AS promptTokens, completion_tokens AS completionTokens,
         cost_usd AS costUsd, latency_ms_total AS latencyMsTotal, latency, ttft, updated_at AS updatedAt
       FROM route_evidence WHERE ${scopeWhere} AND requested_model = ? AND contract_version = ? ORDER BY candidate_model`,
    ),
    routesOf: database.prepare<[string, string, string], RouteRow>(`SELECT * FROM routes WHERE ${scopeWhere} ORDER BY requested_model`),
    routesSince: database.prepare<[number], RouteRow>('SELECT * FROM routes WHERE updated_at >= ? ORDER BY updated_at'),
    upsertRoute: database.prepare(
      `INSERT INTO routes (account_id, project, workload, requested_model, served_model, pinned_model, certificate, cooldowns, fallbacks, updated_at)
       VALUES (@accountId, @project, @workload, @requestedModel, @servedModel, @pinnedModel, @certificate, @cooldowns, @fallbacks, @updatedAt)
       ON CONFLICT (account_id, project, workload, requested_model) DO UPDATE SET
         served_model = excluded.served_model, pinned_model = excluded.pinned_model, certificate = excluded.certificate,
         cooldowns = excluded.cooldowns, fallbacks = excluded.fallbacks, updated_at = excluded.updated_at`,
    ),
    insertChange: database.prepare(
      `INSERT INTO route_changes (account_id, project, workload, requested_model, from_model, to_model, reason, certificate, detail, at)
       VALUES (@accountId, @project, @workload, @requestedModel, @fromModel, @toModel, @reason, @certificate, @detail, @at)`,
    ),
    changesOf: database.prepare<[string, string, string, number], ChangeRow>(
      `SELECT requested_model, from_model, to_model, reason, certificate, detail, at FROM route_changes WHERE ${scopeWhere} ORDER BY at DESC, id DESC LIMIT ?`,
    ),
    usageByModel: database.prepare<[string, string, string], ModelUsage>(
      `SELECT requested_model AS requestedModel, served_model AS servedModel, count(*) AS calls,
         sum(prompt_tokens) AS promptTokens, sum(completion_tokens) AS completionTokens, sum(cost_usd) AS costUsd
       FROM traces WHERE ${scopeWhere} AND environment = 'production' AND status = 'ok' AND requested_model IS NOT NULL AND served_model IS NOT NULL
       GROUP BY requested_model, served_model ORDER BY requested_model, served_model`,
    ),
    addSpend: database.prepare<[string, string, string, string, number]>(
      `INSERT INTO eval_spend (account_id, project, workload, day, cost_usd) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (account_id, project, workload, day) DO UPDATE SET cost_usd = cost_usd + excluded.cost_usd`,
    ),
    spendOf: database.prepare<[string, string, string, string], number>(`SELECT cost_usd FROM eval_spend WHERE ${scopeWhere} AND day = ?`).pluck(),
    addRouteSpend: database.prepare<[string, string, string, string, number]>(
      `INSERT INTO route_eval_spend (account_id, project, workload, requested_model, cost_usd) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (account_id, project, workload, requested_model) DO UPDATE SET cost_usd = cost_usd + excluded.cost_usd`,
    ),
    routeSpendOf: database.prepare<[string, string, string], { requested_model: string; cost_usd: number }>(
      `SELECT requested_model, cost_usd FROM route_eval_spend WHERE ${scopeWhere}`,
    ),
    addJudgeCheck: database.prepare<[string, string, string, string, number]>(
      `INSERT INTO judge_checks (account_id, project, workload, judge_model, checks, false_losses) VALUES (?, ?, ?, ?, 1, ?)
       ON CONFLICT (account_id, project, workload, judge_model) DO UPDATE SET checks = checks + 1, false_losses = false_losses + excluded.false_losses`,
    ),
    judgeChecksOf: database.prepare<[string, string, string], JudgeCheckCounts>(
      `SELECT judge_model AS judgeModel, checks, false_losses AS falseLosses FROM judge_checks WHERE ${scopeWhere} ORDER BY judge_model`,
    ),
    upsertFeedback: database.prepare(
      `INSERT INTO feedback (account_id, request_id, model, project, workload, pass, score, comment, evidence_version, created_at)
       VALUES (@accountId, @requestId, @model, @project, @workload, @pass, @score, @comment, @evidenceVersion, @createdAt)
       ON CONFLICT (account_id, request_id) DO UPDATE SET model = excluded.model, project = excluded.project, workload = excluded.workload,
         pass = excluded.pass, score = excluded.score, comment = excluded.comment, evidence_version = excluded.evidence_version, created_at = excluded.created_at`,
    ),
    feedbackOf: database.prepare<[string, string], FeedbackRow>('SELECT * FROM feedback WHERE account_id = ? AND request_id = ?'),
    feedbackSummary: database.prepare<[string, string, string], { model: string; count: number; passed: number; failed: number; meanScore: number | null }>(
      `SELECT coalesce(model, '') AS model, count(*) AS count, sum(pass = 1) AS passed, sum(pass = 0) AS failed, avg(score) AS meanScore
       FROM feedback WHERE ${scopeWhere} GROUP BY coalesce(model, '') ORDER BY count DESC`,
    ),
  };
}

/** All of the routing store but the router's queue and state (`sqlite-fleet.ts`). */
export function createSqliteRoutingStore(database: Database.Database): Omit<RoutingStore, 'pushSamples' | 'takeSamples' | 'trimSamples' | 'saveRouterStates' | 'listRouterStates'> {
  // Prepared on first use: the tables exist only after migrate().
  let statements: ReturnType<typeof prepareRoutingStatements> | null = null;
  const prepared = () => (statements ??= prepareRoutingStatements(database));

  const nextContract = (scope: Scope, contract: unknown, at: number, keepEvidence: boolean): StoredContract => {
    const latest = prepared().latestContract.get(...scopeOf(scope));
    const version = (latest?.version ?? 0) + 1;
    const evidenceVersion = keepEvidence ? (latest === undefined ? 0 : (latest.evidence_version ?? latest.version)) : version;
    prepared().insertContract.run(...scopeOf(scope), version, evidenceVersion, JSON.stringify(contract), at);
    return { version, evidenceVersion, contract, createdAt: at };
  };
  const putContract = database.transaction(nextContract);
  /** Counts add up in SQL; a latency joins the row's sketch, read, merged and written back in the same transaction. */
  const addEvidence = database.transaction((scope: Scope, requestedModel: string, candidateModel: string, contractVersion: number, delta: EvidenceDelta, at: number) => {
    const key = [...scopeOf(scope), requestedModel, candidateModel, contractVersion] as const;
    prepared().addEvidence.run({ ...scope, requestedModel, candidateModel, contractVersion, ...delta, at });
    const latency = delta.latencyMs ?? null;
    const ttft = delta.ttftMs ?? null;
    if (latency === null && ttft === null) return;
    const row = prepared().sketchesOf.get(...key);
    prepared().setSketches.run(withValue(row?.latency ?? null, latency), withValue(row?.ttft ?? null, ttft), ...key);
  });
  const saveRoute = database.transaction((route: RouteRecord, change: RouteChange | null) => {
    prepared().upsertRoute.run({
      ...route.scope,
      requestedModel: route.requestedModel,
      servedModel: route.servedModel,
      pinnedModel: route.pinnedModel,
      certificate: route.certificate === null ? null : JSON.stringify(route.certificate),
      cooldowns: JSON.stringify(route.cooldowns),
      fallbacks: JSON.stringify(route.fallbacks),
      updatedAt: route.updatedAt,
    });
    if (change !== null) {
      prepared().insertChange.run({ ...route.scope, ...change, certificate: change.certificate === null ? null : JSON.stringify(change.certificate) });
    }
  });

  return {
    async getContract(scope) {
      const row = prepared().latestContract.get(...scopeOf(scope));
      return row === undefined ? null : { version: row.version, evidenceVersion: row.evidence_version ?? row.version, contract: JSON.parse(row.contract) as unknown, createdAt: row.created_at };
    },
    async putContract(scope, contract, at, keepEvidence = false) {
      return putContract.immediate(scope, contract, at, keepEvidence);
    },
    async addEvidence(scope, requestedModel, candidateModel, contractVersion, delta, at) {
      addEvidence.immediate(scope, requestedModel, candidateModel, contractVersion, delta, at);
    },
    async resetEvidence(scope, requestedModel, candidateModel, contractVersion) {
      prepared().resetEvidence.run(...scopeOf(scope), requestedModel, candidateModel, contractVersion);
    },
    async listEvidence(scope, requestedModel, contractVersion) {
      return prepared()
        .listEvidence.all(...scopeOf(scope), requestedModel, contractVersion)
        .map((row) => ({ ...row, latency: asBytes(row.latency), ttft: asBytes(row.ttft) }));
    },
    async listRoutes(scope) {
      return prepared().routesOf.all(...scopeOf(scope)).map(routeOf);
    },
    async listRoutesChangedSince(since) {
      return prepared().routesSince.all(since).map(routeOf);
    },
    async saveRoute(route, change) {
      saveRoute.immediate(route, change);
    },
    async listRouteChanges(scope, limit) {
      return prepared()
        .changesOf.all(...scopeOf(scope), limit)
        .map((row) => ({
          requestedModel: row.requested_model,
          fromModel: row.from_model,
          toModel: row.to_model,
          reason: row.reason,
          certificate: row.certificate === null ? null : (JSON.parse(row.certificate) as RouteChange['certificate']),
          detail: row.detail,
          at: row.at,
        }));
    },
    async usageByModel(scope) {
      return prepared().usageByModel.all(...scopeOf(scope));
    },
    async addEvalSpend(scope, day, costUsd, requestedModel) {
      prepared().addSpend.run(...scopeOf(scope), day, costUsd);
      prepared().addRouteSpend.run(...scopeOf(scope), requestedModel, costUsd);
    },
    async getEvalSpend(scope, day) {
      return prepared().spendOf.get(...scopeOf(scope), day) ?? 0;
    },
    async evalSpendByRoute(scope) {
      return Object.fromEntries(prepared().routeSpendOf.all(...scopeOf(scope)).map((row) => [row.requested_model, row.cost_usd]));
    },
    async addJudgeCheck(scope, judgeModel, falseLoss) {
      prepared().addJudgeCheck.run(...scopeOf(scope), judgeModel, falseLoss ? 1 : 0);
    },
    async listJudgeChecks(scope) {
      return prepared().judgeChecksOf.all(...scopeOf(scope));
    },
    async recordFeedback(feedback) {
      prepared().upsertFeedback.run({ ...feedback, pass: feedback.pass === null ? null : feedback.pass ? 1 : 0 });
    },
    async feedbackSummary(scope) {
      return prepared().feedbackSummary.all(...scopeOf(scope));
    },
    async getFeedback(accountId, requestId) {
      const row = prepared().feedbackOf.get(accountId, requestId);
      if (row === undefined) return null;
      return {
        requestId: row.request_id,
        accountId: row.account_id,
        model: row.model,
        project: row.project,
        workload: row.workload,
        pass: row.pass === null ? null : row.pass === 1,
        score: row.score,
        comment: row.comment,
        evidenceVersion: row.evidence_version,
        createdAt: row.created_at,
      } satisfies Feedback;
    },
  };
}

/** The sketch with one more value (a new one when there was none); unchanged when the value is null. */
function withValue(encoded: Buffer | null, value: number | null): Buffer | null {
  if (value === null) return encoded;
  const sketch = encoded === null ? newSketch() : decodeSketch(encoded);
  sketch.accept(Math.max(value, 0.001));
  return Buffer.from(encodeSketch(sketch));
}

function asBytes(blob: Buffer | null): Uint8Array | null {
  return blob === null ? null : new Uint8Array(blob.buffer, blob.byteOffset, blob.byteLength);
}

function routeOf(row: RouteRow): RouteRecord {
  return {
    scope: { accountId: row.account_id, project: row.project, workload: row.workload },
    requestedModel: row.requested_model,
    servedModel: row.served_model,
    pinnedModel: row.pinned_model,
    certificate: row.certificate === null ? null : (JSON.parse(row.certificate) as RouteRecord['certificate']),
    cooldowns: JSON.parse(row.cooldowns) as Record<string, number>,
    fallbacks: JSON.parse(row.fallbacks) as string[],
    updatedAt: row.updated_at,
  };
}
