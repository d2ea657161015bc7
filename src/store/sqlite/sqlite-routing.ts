/** The routing domain (`routing-store.ts`) on SQLite: one table each, JSON columns for contracts and certificates. */
import type { ProjectScope, Scope } from '../../api/scope.js';
import type {
  EvidenceDelta,
  Feedback,
  JudgeCheckCounts,
  ModelUsage,
  RouteChange,
  RouteRecord,
  RoutingStore,
  StoredContract,
} from '../routing-store.js';
import {
  addedCountColumns,
  addedCountValues,
  contractColumns,
  evidenceColumns,
  feedbackColumns,
  fromContractRow,
  fromEvidenceRow,
  fromRevisedRow,
  fromRouteChangeRow,
  fromRouteRow,
  nextContractVersion,
  routeChangeColumns,
  routeColumns,
  sketchWithValue,
  toRouteChangeRow,
  toRouteRow,
  type ContractRow,
  type EvidenceRow,
  type FeedbackRow,
  type RevisedRow,
  type RouteChangeRow,
  type RouteRow,
} from '../sql-routing-records.js';
import { preparedOnFirstUse, type SqliteDatabase } from './sqlite-database.js';
import type { RouterQueue } from './sqlite-router-queue.js';

const scopeWhere = 'account_id = ? AND project = ? AND workload = ?';
const scopeOf = (scope: Scope): [string, string, string] => [scope.accountId, scope.project, scope.workload];
const projectOf = (scope: ProjectScope): [string, string] => [scope.accountId, scope.project];

function prepareRoutingStatements(database: SqliteDatabase) {
  return {
    latestContract: database.prepare<[string, string, string], ContractRow>(
      `SELECT ${contractColumns} FROM eval_contracts WHERE ${scopeWhere} ORDER BY version DESC LIMIT 1`,
    ),
    insertContract: database.prepare<[string, string, string, number, number, string, number]>(
      'INSERT INTO eval_contracts (account_id, project, workload, version, evidence_version, contract, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    sketchesOf: database.prepare<[string, string, string, string, string, number], { latency: Buffer | null; ttft: Buffer | null }>(
      `SELECT latency, ttft FROM route_evidence WHERE ${scopeWhere} AND requested_model = ? AND candidate_model = ? AND contract_version = ?`,
    ),
    addEvidence: database.prepare<unknown[]>(
      `INSERT INTO route_evidence (account_id, project, workload, requested_model, candidate_model, contract_version,
         evaluated, passed, errors, prompt_tokens, completion_tokens, cost_usd, latency_ms_total, updated_at, ${addedCountColumns.join(', ')})
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?${', ?'.repeat(addedCountColumns.length)})
       ON CONFLICT (account_id, project, workload, requested_model, contract_version, candidate_model) DO UPDATE SET
         evaluated = evaluated + excluded.evaluated, passed = passed + excluded.passed, errors = errors + excluded.errors,
         prompt_tokens = prompt_tokens + excluded.prompt_tokens, completion_tokens = completion_tokens + excluded.completion_tokens,
         cost_usd = cost_usd + excluded.cost_usd, latency_ms_total = latency_ms_total + excluded.latency_ms_total,
         ${addedCountColumns.map((column) => `${column} = ${column} + excluded.${column}`).join(', ')},
         updated_at = excluded.updated_at`,
    ),
    resetEvidence: database.prepare<[string, string, string, string, string, number]>(
      `DELETE FROM route_evidence WHERE ${scopeWhere} AND requested_model = ? AND candidate_model = ? AND contract_version = ?`,
    ),
    setSketches: database.prepare<[Buffer | null, Buffer | null, string, string, string, string, string, number]>(
      `UPDATE route_evidence SET latency = ?, ttft = ? WHERE ${scopeWhere} AND requested_model = ? AND candidate_model = ? AND contract_version = ?`,
    ),
    listEvidence: database.prepare<[string, string, string, string, number], EvidenceRow>(
      `SELECT ${evidenceColumns} FROM route_evidence WHERE ${scopeWhere} AND requested_model = ? AND contract_version = ? ORDER BY candidate_model`,
    ),
    // The primary key's (account_id, project) prefix finds the project's rows.
    listProjectEvidence: database.prepare<[string, string, string], EvidenceRow & { workload: string }>(
      `SELECT workload, ${evidenceColumns} FROM route_evidence WHERE account_id = ? AND project = ? AND requested_model = ?
       ORDER BY workload, candidate_model, contract_version`,
    ),
    routesOf: database.prepare<[string, string, string], RouteRow>(
      `SELECT ${routeColumns} FROM routes WHERE ${scopeWhere} ORDER BY requested_model`,
    ),
    // Revisions are given by the triggers of migration 0012, in commit order.
    routesAfter: database.prepare<[number], RevisedRow<RouteRow>>(
      `SELECT ${routeColumns}, revision FROM routes WHERE revision > ? ORDER BY revision`,
    ),
    upsertRoute: database.prepare(
      `INSERT INTO routes (account_id, project, workload, requested_model, served_model, pinned_model, certificate, cooldowns, fallbacks, split, updated_at)
       VALUES (@accountId, @project, @workload, @requestedModel, @servedModel, @pinnedModel, @certificate, @cooldowns, @fallbacks, @split, @updatedAt)
       ON CONFLICT (account_id, project, workload, requested_model) DO UPDATE SET
         served_model = excluded.served_model, pinned_model = excluded.pinned_model, certificate = excluded.certificate,
         cooldowns = excluded.cooldowns, fallbacks = excluded.fallbacks, split = excluded.split, updated_at = excluded.updated_at`,
    ),
    insertRouteIfAbsent: database.prepare(
      `INSERT INTO routes (account_id, project, workload, requested_model, served_model, pinned_model, certificate, cooldowns, fallbacks, split, updated_at)
       VALUES (@accountId, @project, @workload, @requestedModel, @servedModel, @pinnedModel, @certificate, @cooldowns, @fallbacks, @split, @updatedAt)
       ON CONFLICT (account_id, project, workload, requested_model) DO NOTHING`,
    ),
    insertChange: database.prepare(
      `INSERT INTO route_changes (account_id, project, workload, requested_model, from_model, to_model, reason, certificate, detail, at)
       VALUES (@accountId, @project, @workload, @requestedModel, @fromModel, @toModel, @reason, @certificate, @detail, @at)`,
    ),
    changesOf: database.prepare<[string, string, string, number], RouteChangeRow>(
      `SELECT ${routeChangeColumns} FROM route_changes WHERE ${scopeWhere} ORDER BY id DESC LIMIT ?`,
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
    spendOf: database
      .prepare<[string, string, string, string], number>(`SELECT cost_usd FROM eval_spend WHERE ${scopeWhere} AND day = ?`)
      .pluck(),
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
    feedbackOf: database.prepare<[string, string], FeedbackRow<number>>(
      `SELECT ${feedbackColumns} FROM feedback WHERE account_id = ? AND request_id = ?`,
    ),
    feedbackSummary: database.prepare<
      [string, string, string],
      { model: string; count: number; passed: number; failed: number; meanScore: number | null }
    >(
      `SELECT coalesce(model, '') AS model, count(*) AS count, sum(pass = 1) AS passed, sum(pass = 0) AS failed, avg(score) AS meanScore
       FROM feedback WHERE ${scopeWhere} GROUP BY coalesce(model, '') ORDER BY count DESC`,
    ),
  };
}

/** All of the routing store but the router's queue and state (`sqlite-router-queue.ts`). */
export function createSqliteRouting(database: SqliteDatabase): Omit<RoutingStore, keyof RouterQueue> {
  const prepared = preparedOnFirstUse(() => prepareRoutingStatements(database));

  const nextContract = (scope: Scope, contract: unknown, at: number, keepEvidence: boolean): StoredContract => {
    const { version, evidenceVersion } = nextContractVersion(prepared().latestContract.get(...scopeOf(scope)), keepEvidence);
    prepared().insertContract.run(...scopeOf(scope), version, evidenceVersion, JSON.stringify(contract), at);
    return { version, evidenceVersion, contract, createdAt: at };
  };
  const putContract = database.transaction(nextContract);
  /** Counts add up in SQL; a latency joins the row's sketch, read, merged and written back in the same transaction. */
  const addEvidence = database.transaction(
    (scope: Scope, requestedModel: string, candidateModel: string, contractVersion: number, delta: EvidenceDelta, at: number) => {
      const key = [...scopeOf(scope), requestedModel, candidateModel, contractVersion] as const;
      prepared().addEvidence.run(
        ...scopeOf(scope),
        requestedModel,
        candidateModel,
        contractVersion,
        delta.evaluated,
        delta.passed,
        delta.errors,
        delta.promptTokens,
        delta.completionTokens,
        delta.costUsd,
        delta.latencyMsTotal,
        at,
        ...addedCountValues(delta),
      );
      const latency = delta.latencyMs ?? null;
      const ttft = delta.ttftMs ?? null;
      if (latency === null && ttft === null) return;
      const row = prepared().sketchesOf.get(...key);
      prepared().setSketches.run(sketchWithValue(row?.latency ?? null, latency), sketchWithValue(row?.ttft ?? null, ttft), ...key);
    },
  );
  const saveRoute = database.transaction((route: RouteRecord, change: RouteChange | null) => {
    prepared().upsertRoute.run(toRouteRow(route));
    if (change !== null) prepared().insertChange.run({ ...route.scope, ...toRouteChangeRow(change) });
  });

  return {
    async getContract(scope) {
      const row = prepared().latestContract.get(...scopeOf(scope));
      return row === undefined ? null : fromContractRow(row);
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
        .map(fromEvidenceRow);
    },
    async listProjectEvidence(scope, requestedModel) {
      return prepared()
        .listProjectEvidence.all(...projectOf(scope), requestedModel)
        .map((row) => ({ ...fromEvidenceRow(row), workload: row.workload }));
    },
    async listRoutes(scope) {
      return prepared()
        .routesOf.all(...scopeOf(scope))
        .map(fromRouteRow);
    },
    async listRoutesChangedAfter(revision) {
      return prepared()
        .routesAfter.all(revision)
        .map((row) => fromRevisedRow(row, fromRouteRow));
    },
    async saveRoute(route, change) {
      saveRoute.immediate(route, change);
    },
    async createRoute(route) {
      prepared().insertRouteIfAbsent.run(toRouteRow(route));
      const held = prepared()
        .routesOf.all(...scopeOf(route.scope))
        .find((row) => row.requestedModel === route.requestedModel);
      return held === undefined ? route : fromRouteRow(held);
    },
    async listRouteChanges(scope, limit) {
      return prepared()
        .changesOf.all(...scopeOf(scope), limit)
        .map(fromRouteChangeRow);
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
      return Object.fromEntries(
        prepared()
          .routeSpendOf.all(...scopeOf(scope))
          .map((row) => [row.requested_model, row.cost_usd]),
      );
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
      // SQLite keeps booleans as 0/1.
      return row === undefined ? null : ({ ...row, pass: row.pass === null ? null : row.pass === 1 } satisfies Feedback);
    },
  };
}
