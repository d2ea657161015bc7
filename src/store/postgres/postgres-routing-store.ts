/** The routing domain (`routing-store.ts`) on PostgreSQL: the same tables as SQLite, JSON in TEXT columns. */
import { decodeSketch, encodeSketch, newSketch } from '../../tracking/latency-sketch.js';
import type { CandidateCounts, Feedback, JudgeCheckCounts, ModelUsage, RouteChange, RouteRecord, RoutingStore, Scope, StoredContract } from '../routing-store.js';
import { advisoryLockKey, type PostgresDatabase } from './postgres-database.js';

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
  pass: boolean | null;
  score: number | null;
  comment: string | null;
  evidence_version: number | null;
  created_at: number;
}

type EvidenceRow = Omit<CandidateCounts, 'latency' | 'ttft'> & { latency: Buffer | null; ttft: Buffer | null };

/** The scope as $1..$3; a query's own parameters follow from $4. */
const scopeWhere = 'account_id = $1 AND project = $2 AND workload = $3';
const scopeOf = (scope: Scope): [string, string, string] => [scope.accountId, scope.project, scope.workload];
const evidenceKey = `${scopeWhere} AND requested_model = $4 AND candidate_model = $5 AND contract_version = $6`;

export type PostgresRoutingStore = Omit<RoutingStore, 'pushSamples' | 'takeSamples' | 'trimSamples' | 'saveRouterStates' | 'listRouterStates'>;

/** All of the routing store but the router's queue and state (`postgres-router-queue.ts`). */
export function createPostgresRoutingStore(database: PostgresDatabase): PostgresRoutingStore {
  return {
    async getContract(scope) {
      const [row] = await database.query<{ version: number; evidence_version: number | null; contract: string; created_at: number }>(
        `SELECT version, evidence_version, contract, created_at FROM eval_contracts WHERE ${scopeWhere} ORDER BY version DESC LIMIT 1`,
        scopeOf(scope),
      );
      return row === undefined ? null : { version: row.version, evidenceVersion: row.evidence_version ?? row.version, contract: JSON.parse(row.contract) as unknown, createdAt: row.created_at };
    },
    async putContract(scope, contract, at, keepEvidence = false) {
      return database.transaction(async (transaction): Promise<StoredContract> => {
        // One writer per workload at a time, so concurrent versions number 1, 2, 3… without gaps or clashes.
        await transaction.query('SELECT pg_advisory_xact_lock($1::bigint)', [advisoryLockKey(database.schema, `contract\u0000${scopeOf(scope).join('\u0000')}`)]);
        const [latest] = await transaction.query<{ version: number; evidence_version: number | null }>(
          `SELECT version, evidence_version FROM eval_contracts WHERE ${scopeWhere} ORDER BY version DESC LIMIT 1`,
          scopeOf(scope),
        );
        const version = (latest?.version ?? 0) + 1;
        const evidenceVersion = keepEvidence ? (latest === undefined ? 0 : (latest.evidence_version ?? latest.version)) : version;
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
             evaluated, passed, errors, prompt_tokens, completion_tokens, cost_usd, latency_ms_total, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
           ON CONFLICT (account_id, project, workload, requested_model, contract_version, candidate_model) DO UPDATE SET
             evaluated = route_evidence.evaluated + excluded.evaluated, passed = route_evidence.passed + excluded.passed,
             errors = route_evidence.errors + excluded.errors, prompt_tokens = route_evidence.prompt_tokens + excluded.prompt_tokens,
             completion_tokens = route_evidence.completion_tokens + excluded.completion_tokens, cost_usd = route_evidence.cost_usd + excluded.cost_usd,
             latency_ms_total = route_evidence.latency_ms_total + excluded.latency_ms_total, updated_at = excluded.updated_at
           RETURNING latency, ttft`,
          [...key, delta.evaluated, delta.passed, delta.errors, delta.promptTokens, delta.completionTokens, delta.costUsd, delta.latencyMsTotal, at],
        );
        const latency = delta.latencyMs ?? null;
        const ttft = delta.ttftMs ?? null;
        if (latency === null && ttft === null) return;
        await transaction.execute(`UPDATE route_evidence SET latency = $7, ttft = $8 WHERE ${evidenceKey}`, [
          ...key,
          withValue(stored?.latency ?? null, latency),
          withValue(stored?.ttft ?? null, ttft),
        ]);
      });
    },
    async resetEvidence(scope, requestedModel, candidateModel, contractVersion) {
      await database.execute(`DELETE FROM route_evidence WHERE ${evidenceKey}`, [...scopeOf(scope), requestedModel, candidateModel, contractVersion]);
    },
    async listEvidence(scope, requestedModel, contractVersion) {
      const rows = await database.query<EvidenceRow>(
        `SELECT requested_model AS "requestedModel", candidate_model AS "candidateModel", contract_version AS "contractVersion",
           evaluated, passed, errors, prompt_tokens AS "promptTokens", completion_tokens AS "completionTokens",
           cost_usd AS "costUsd", latency_ms_total AS "latencyMsTotal", latency, ttft, updated_at AS "updatedAt"
         FROM route_evidence WHERE ${scopeWhere} AND requested_model = $4 AND contract_version = $5 ORDER BY candidate_model`,
        [...scopeOf(scope), requestedModel, contractVersion],
      );
      return rows.map((row) => ({ ...row, latency: asBytes(row.latency), ttft: asBytes(row.ttft) }));
    },
    async listRoutes(scope) {
      return (await database.query<RouteRow>(`SELECT * FROM routes WHERE ${scopeWhere} ORDER BY requested_model`, scopeOf(scope))).map(routeOf);
    },
    async listRoutesChangedSince(since) {
      const rows = await database.query<RouteRow>('SELECT * FROM routes WHERE updated_at >= $1 ORDER BY updated_at, account_id, project, workload, requested_model', [since]);
      return rows.map(routeOf);
    },
    async saveRoute(route, change) {
      await database.transaction(async (transaction) => {
        await transaction.execute(
          `INSERT INTO routes (account_id, project, workload, requested_model, served_model, pinned_model, certificate, cooldowns, fallbacks, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
           ON CONFLICT (account_id, project, workload, requested_model) DO UPDATE SET
             served_model = excluded.served_model, pinned_model = excluded.pinned_model, certificate = excluded.certificate,
             cooldowns = excluded.cooldowns, fallbacks = excluded.fallbacks, updated_at = excluded.updated_at`,
          [
            ...scopeOf(route.scope), route.requestedModel, route.servedModel, route.pinnedModel, jsonOrNull(route.certificate),
            JSON.stringify(route.cooldowns), JSON.stringify(route.fallbacks), route.updatedAt,
          ],
        );
        if (change === null) return;
        await transaction.execute(
          `INSERT INTO route_changes (account_id, project, workload, requested_model, from_model, to_model, reason, certificate, detail, at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
          [...scopeOf(route.scope), change.requestedModel, change.fromModel, change.toModel, change.reason, jsonOrNull(change.certificate), change.detail, change.at],
        );
      });
    },
    async listRouteChanges(scope, limit) {
      const rows = await database.query<ChangeRow>(
        `SELECT requested_model, from_model, to_model, reason, certificate, detail, at FROM route_changes WHERE ${scopeWhere} ORDER BY at DESC, id DESC LIMIT $4`,
        [...scopeOf(scope), limit],
      );
      return rows.map((row) => ({
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
      const [row] = await database.query<{ cost_usd: number }>(`SELECT cost_usd FROM eval_spend WHERE ${scopeWhere} AND day = $4`, [...scopeOf(scope), day]);
      return row?.cost_usd ?? 0;
    },
    async evalSpendByRoute(scope) {
      const rows = await database.query<{ requested_model: string; cost_usd: number }>(`SELECT requested_model, cost_usd FROM route_eval_spend WHERE ${scopeWhere}`, scopeOf(scope));
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
          feedback.accountId, feedback.requestId, feedback.model, feedback.project, feedback.workload, feedback.pass, feedback.score,
          feedback.comment, feedback.evidenceVersion, feedback.createdAt,
        ],
      );
    },
    async getFeedback(accountId, requestId) {
      const [row] = await database.query<FeedbackRow>('SELECT * FROM feedback WHERE account_id = $1 AND request_id = $2', [accountId, requestId]);
      if (row === undefined) return null;
      return {
        requestId: row.request_id,
        accountId: row.account_id,
        model: row.model,
        project: row.project,
        workload: row.workload,
        pass: row.pass,
        score: row.score,
        comment: row.comment,
        evidenceVersion: row.evidence_version,
        createdAt: row.created_at,
      } satisfies Feedback;
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

function jsonOrNull(value: unknown): string | null {
  return value === null ? null : JSON.stringify(value);
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
