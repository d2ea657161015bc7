/** The routing domain (`routing-store.ts`) on PostgreSQL: the same tables as SQLite, JSON in TEXT columns. */
import type { Scope } from '../../api/scope.js';
import type { JudgeCheckCounts, ModelUsage, RoutingStore, StoredContract } from '../routing-store.js';
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
import { advisoryLockKey, type PostgresDatabase } from './postgres-database.js';
import type { RouterQueue } from './postgres-router-queue.js';

/** The scope as $1..$3; a query's own parameters follow from $4. */
const scopeWhere = 'account_id = $1 AND project = $2 AND workload = $3';
const scopeOf = (scope: Scope): [string, string, string] => [scope.accountId, scope.project, scope.workload];
const evidenceKey = `${scopeWhere} AND requested_model = $4 AND candidate_model = $5 AND contract_version = $6`;

/** All of the routing store but the router's queue and state (`postgres-router-queue.ts`). */
export function createPostgresRouting(database: PostgresDatabase): Omit<RoutingStore, keyof RouterQueue> {
  return {
    async getContract(scope) {
      const [row] = await database.query<ContractRow>(
        `SELECT ${contractColumns} FROM eval_contracts WHERE ${scopeWhere} ORDER BY version DESC LIMIT 1`,
        scopeOf(scope),
      );
      return row === undefined ? null : fromContractRow(row);
    },
    async putContract(scope, contract, at, keepEvidence = false) {
      return database.transaction(async (transaction): Promise<StoredContract> => {
        // One writer per workload at a time, so concurrent versions number 1, 2, 3… without gaps or clashes.
        await transaction.query('SELECT pg_advisory_xact_lock($1::bigint)', [
          advisoryLockKey(database.schema, `contract\u0000${scopeOf(scope).join('\u0000')}`),
        ]);
        const [latest] = await transaction.query<Pick<ContractRow, 'version' | 'evidenceVersion'>>(
          `SELECT version, evidence_version AS "evidenceVersion" FROM eval_contracts WHERE ${scopeWhere} ORDER BY version DESC LIMIT 1`,
          scopeOf(scope),
        );
        const { version, evidenceVersion } = nextContractVersion(latest, keepEvidence);
        await transaction.execute(
          'INSERT INTO eval_contracts (account_id, project, workload, version, evidence_version, contract, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
          [...scopeOf(scope), version, evidenceVersion, JSON.stringify(contract), at],
        );
        return { version, evidenceVersion, contract, createdAt: at };
      });
    },
    async addEvidence(scope, requestedModel, candidateModel, contractVersion, delta, at) {
      const key = [...scopeOf(scope), requestedModel, candidateModel, contractVersion];
      await database.transaction(async (transaction) => {
        // Counts add up in SQL; the upsert also locks the row, so the sketches read back can be merged and written safely.
        const [stored] = await transaction.query<{ latency: Buffer | null; ttft: Buffer | null }>(
          `INSERT INTO route_evidence (account_id, project, workload, requested_model, candidate_model, contract_version,
             evaluated, passed, errors, prompt_tokens, completion_tokens, cost_usd, latency_ms_total, updated_at, ${addedCountColumns.join(', ')})
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, ${addedCountColumns.map((_column, index) => `$${15 + index}`).join(', ')})
           ON CONFLICT (account_id, project, workload, requested_model, contract_version, candidate_model) DO UPDATE SET
             evaluated = route_evidence.evaluated + excluded.evaluated, passed = route_evidence.passed + excluded.passed,
             errors = route_evidence.errors + excluded.errors, prompt_tokens = route_evidence.prompt_tokens + excluded.prompt_tokens,
             completion_tokens = route_evidence.completion_tokens + excluded.completion_tokens, cost_usd = route_evidence.cost_usd + excluded.cost_usd,
             latency_ms_total = route_evidence.latency_ms_total + excluded.latency_ms_total,
             ${addedCountColumns.map((column) => `${column} = route_evidence.${column} + excluded.${column}`).join(', ')},
             updated_at = excluded.updated_at
           RETURNING latency, ttft`,
          [
            ...key,
            delta.evaluated,
            delta.passed,
            delta.errors,
            delta.promptTokens,
            delta.completionTokens,
            delta.costUsd,
            delta.latencyMsTotal,
            at,
            ...addedCountValues(delta),
          ],
        );
        const latency = delta.latencyMs ?? null;
        const ttft = delta.ttftMs ?? null;
        if (latency === null && ttft === null) return;
        await transaction.execute(`UPDATE route_evidence SET latency = $7, ttft = $8 WHERE ${evidenceKey}`, [
          ...key,
          sketchWithValue(stored?.latency ?? null, latency),
          sketchWithValue(stored?.ttft ?? null, ttft),
        ]);
      });
    },
    async resetEvidence(scope, requestedModel, candidateModel, contractVersion) {
      await database.execute(`DELETE FROM route_evidence WHERE ${evidenceKey}`, [
        ...scopeOf(scope),
        requestedModel,
        candidateModel,
        contractVersion,
      ]);
    },
    async listEvidence(scope, requestedModel, contractVersion) {
      const rows = await database.query<EvidenceRow>(
        `SELECT ${evidenceColumns} FROM route_evidence WHERE ${scopeWhere} AND requested_model = $4 AND contract_version = $5 ORDER BY candidate_model`,
        [...scopeOf(scope), requestedModel, contractVersion],
      );
      return rows.map(fromEvidenceRow);
    },
    async listProjectEvidence(scope, requestedModel) {
      // The primary key's (account_id, project) prefix finds the project's rows.
      const rows = await database.query<EvidenceRow & { workload: string }>(
        `SELECT workload, ${evidenceColumns} FROM route_evidence WHERE account_id = $1 AND project = $2 AND requested_model = $3
         ORDER BY workload, candidate_model, contract_version`,
        [scope.accountId, scope.project, requestedModel],
      );
      return rows.map((row) => ({ ...fromEvidenceRow(row), workload: row.workload }));
    },
    async listRoutes(scope) {
      return (
        await database.query<RouteRow>(`SELECT ${routeColumns} FROM routes WHERE ${scopeWhere} ORDER BY requested_model`, scopeOf(scope))
      ).map(fromRouteRow);
    },
    async listRoutesChangedAfter(revision) {
      // The trigger of migration 0007 numbers writes in commit order, so nothing can commit below a revision read here.
      const rows = await database.query<RevisedRow<RouteRow>>(
        `SELECT ${routeColumns}, revision FROM routes WHERE revision > $1 ORDER BY revision`,
        [revision],
      );
      return rows.map((row) => fromRevisedRow(row, fromRouteRow));
    },
    async createRoute(route) {
      const row = toRouteRow(route);
      await database.execute(
        `INSERT INTO routes (account_id, project, workload, requested_model, served_model, pinned_model, certificate, cooldowns, fallbacks, split, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         ON CONFLICT (account_id, project, workload, requested_model) DO NOTHING`,
        [
          row.accountId,
          row.project,
          row.workload,
          row.requestedModel,
          row.servedModel,
          row.pinnedModel,
          row.certificate,
          row.cooldowns,
          row.fallbacks,
          row.split,
          row.updatedAt,
        ],
      );
      const [held] = await database.query<RouteRow>(`SELECT ${routeColumns} FROM routes WHERE ${scopeWhere} AND requested_model = $4`, [
        ...scopeOf(route.scope),
        route.requestedModel,
      ]);
      return held === undefined ? route : fromRouteRow(held);
    },
    async saveRoute(route, change) {
      const row = toRouteRow(route);
      await database.transaction(async (transaction) => {
        await transaction.execute(
          `INSERT INTO routes (account_id, project, workload, requested_model, served_model, pinned_model, certificate, cooldowns, fallbacks, split, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
           ON CONFLICT (account_id, project, workload, requested_model) DO UPDATE SET
             served_model = excluded.served_model, pinned_model = excluded.pinned_model, certificate = excluded.certificate,
             cooldowns = excluded.cooldowns, fallbacks = excluded.fallbacks, split = excluded.split, updated_at = excluded.updated_at`,
          [
            row.accountId,
            row.project,
            row.workload,
            row.requestedModel,
            row.servedModel,
            row.pinnedModel,
            row.certificate,
            row.cooldowns,
            row.fallbacks,
            row.split,
            row.updatedAt,
          ],
        );
        if (change === null) return;
        const changeRow = toRouteChangeRow(change);
        await transaction.execute(
          `INSERT INTO route_changes (account_id, project, workload, requested_model, from_model, to_model, reason, certificate, detail, at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
          [
            ...scopeOf(route.scope),
            changeRow.requestedModel,
            changeRow.fromModel,
            changeRow.toModel,
            changeRow.reason,
            changeRow.certificate,
            changeRow.detail,
            changeRow.at,
          ],
        );
      });
    },
    async listRouteChanges(scope, limit) {
      const rows = await database.query<RouteChangeRow>(
        // Ids are taken after the route's write, under its revision lock (migration 0007): they follow commit order.
        `SELECT ${routeChangeColumns} FROM route_changes WHERE ${scopeWhere} ORDER BY id DESC LIMIT $4`,
        [...scopeOf(scope), limit],
      );
      return rows.map(fromRouteChangeRow);
    },
    async usageByModel(scope) {
      return database.query<ModelUsage>(
        `SELECT requested_model AS "requestedModel", served_model AS "servedModel", count(*) AS calls,
           sum(prompt_tokens) AS "promptTokens", sum(completion_tokens) AS "completionTokens", sum(cost_usd) AS "costUsd"
         FROM traces WHERE ${scopeWhere} AND environment = 'production' AND status = 'ok' AND requested_model IS NOT NULL AND served_model IS NOT NULL
         GROUP BY requested_model, served_model ORDER BY requested_model, served_model`,
        scopeOf(scope),
      );
    },
    async addEvalSpend(scope, day, costUsd, requestedModel) {
      await database.transaction(async (transaction) => {
        await transaction.execute(
          `INSERT INTO eval_spend (account_id, project, workload, day, cost_usd) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (account_id, project, workload, day) DO UPDATE SET cost_usd = eval_spend.cost_usd + excluded.cost_usd`,
          [...scopeOf(scope), day, costUsd],
        );
        await transaction.execute(
          `INSERT INTO route_eval_spend (account_id, project, workload, requested_model, cost_usd) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (account_id, project, workload, requested_model) DO UPDATE SET cost_usd = route_eval_spend.cost_usd + excluded.cost_usd`,
          [...scopeOf(scope), requestedModel, costUsd],
        );
      });
    },
    async getEvalSpend(scope, day) {
      const [row] = await database.query<{ cost_usd: number }>(`SELECT cost_usd FROM eval_spend WHERE ${scopeWhere} AND day = $4`, [
        ...scopeOf(scope),
        day,
      ]);
      return row?.cost_usd ?? 0;
    },
    async evalSpendByRoute(scope) {
      const rows = await database.query<{ requested_model: string; cost_usd: number }>(
        `SELECT requested_model, cost_usd FROM route_eval_spend WHERE ${scopeWhere}`,
        scopeOf(scope),
      );
      return Object.fromEntries(rows.map((row) => [row.requested_model, row.cost_usd]));
    },
    async addJudgeCheck(scope, judgeModel, falseLoss) {
      await database.execute(
        `INSERT INTO judge_checks (account_id, project, workload, judge_model, checks, false_losses) VALUES ($1, $2, $3, $4, 1, $5)
         ON CONFLICT (account_id, project, workload, judge_model) DO UPDATE SET checks = judge_checks.checks + 1, false_losses = judge_checks.false_losses + excluded.false_losses`,
        [...scopeOf(scope), judgeModel, falseLoss ? 1 : 0],
      );
    },
    async listJudgeChecks(scope) {
      return database.query<JudgeCheckCounts>(
        `SELECT judge_model AS "judgeModel", checks, false_losses AS "falseLosses" FROM judge_checks WHERE ${scopeWhere} ORDER BY judge_model`,
        scopeOf(scope),
      );
    },
    async recordFeedback(feedback) {
      await database.execute(
        `INSERT INTO feedback (account_id, request_id, model, project, workload, pass, score, comment, evidence_version, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
         ON CONFLICT (account_id, request_id) DO UPDATE SET model = excluded.model, project = excluded.project, workload = excluded.workload,
           pass = excluded.pass, score = excluded.score, comment = excluded.comment, evidence_version = excluded.evidence_version, created_at = excluded.created_at`,
        [
          feedback.accountId,
          feedback.requestId,
          feedback.model,
          feedback.project,
          feedback.workload,
          feedback.pass,
          feedback.score,
          feedback.comment,
          feedback.evidenceVersion,
          feedback.createdAt,
        ],
      );
    },
    async getFeedback(accountId, requestId) {
      // `pass` is a BOOLEAN: the row is the record as it is.
      const [row] = await database.query<FeedbackRow<boolean>>(
        `SELECT ${feedbackColumns} FROM feedback WHERE account_id = $1 AND request_id = $2`,
        [accountId, requestId],
      );
      return row ?? null;
    },
    async feedbackSummary(scope) {
      return database.query<{ model: string; count: number; passed: number; failed: number; meanScore: number | null }>(
        `SELECT coalesce(model, '') AS model, count(*) AS count, count(*) FILTER (WHERE pass) AS passed, count(*) FILTER (WHERE NOT pass) AS failed,
           avg(score) AS "meanScore"
         FROM feedback WHERE ${scopeWhere} GROUP BY coalesce(model, '') ORDER BY count DESC, model`,
        scopeOf(scope),
      );
    },
  };
}
