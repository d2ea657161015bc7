/**
 * The routing tables' rows (`routing-store.ts`) as both SQL back ends read
 * and write them (`sql-records.ts` says how rows map to records): contracts,
 * evidence with its sketches, routes and their changes, feedback, router
 * state.
 */
import { decodeSketch, encodeSketch, newSketch } from './latency-sketch.js';
import type { Scope } from '../api/scope.js';
import type {
  CandidateCounts,
  EvidenceDelta,
  Feedback,
  PairedCounts,
  PairedOutcomeName,
  RequestedGrade,
  Revised,
  RouteChange,
  RouteRecord,
  RouterStateRecord,
  StoredContract,
} from './routing-store.js';
import { bytesOf, jsonOrNull, selectList } from './sql-records.js';

/** A row of `eval_contracts`: the contract as JSON; rows written before evidence versions have none. */
export type ContractRow = Omit<StoredContract, 'evidenceVersion' | 'contract'> & { evidenceVersion: number | null; contract: string };

export const contractColumns = selectList<ContractRow>({
  version: 'version',
  evidenceVersion: 'evidence_version',
  contract: 'contract',
  createdAt: 'created_at',
});

export function fromContractRow(row: ContractRow): StoredContract {
  return {
    version: row.version,
    evidenceVersion: row.evidenceVersion ?? row.version,
    contract: JSON.parse(row.contract) as unknown,
    createdAt: row.createdAt,
  };
}

/** The version `putContract` stores after `latest` (none: the workload had the default), and the evidence version it uses. */
export function nextContractVersion(
  latest: Pick<ContractRow, 'version' | 'evidenceVersion'> | undefined,
  keepEvidence: boolean,
): Pick<StoredContract, 'version' | 'evidenceVersion'> {
  const version = (latest?.version ?? 0) + 1;
  const evidenceVersion = keepEvidence ? (latest === undefined ? 0 : (latest.evidenceVersion ?? latest.version)) : version;
  return { version, evidenceVersion };
}

/** The column of one cell of `CandidateCounts.paired`. */
export type PairedColumn = `paired_${PairedOutcomeName}_${RequestedGrade}`;

/**
 * The cells of `CandidateCounts.paired`, each with its column. Released
 * migrations add these columns from this list (SQLite 0014, PostgreSQL 0009),
 * so it only ever grows, and a cell added to it needs a migration of its own.
 */
export const pairedCells: ReadonlyArray<{ outcome: PairedOutcomeName; grade: RequestedGrade; column: PairedColumn }> = (
  ['same', 'win', 'loss', 'tie'] as const
).flatMap((outcome) =>
  (['right', 'wrong', 'ungraded'] as const).map((grade) => ({ outcome, grade, column: `paired_${outcome}_${grade}` as const })),
);

/**
 * The counts an evidence upsert adds besides the first ones (evaluated …
 * latency_ms_total): the paired cells, then the constraint counts. Each back
 * end adds them up with `column = column + excluded.column`.
 */
export const addedCountColumns: readonly string[] = [
  ...pairedCells.map((cell) => cell.column),
  'constraints_evaluated',
  'constraints_passed',
];

/** A delta's values for `addedCountColumns`, in that order: 1 in the cell of its paired sample (if any), 0 in the others, then its constraint counts. */
export function addedCountValues(delta: EvidenceDelta): number[] {
  const { paired } = delta;
  return [
    ...pairedCells.map((cell) => (paired !== undefined && paired.outcome === cell.outcome && paired.grade === cell.grade ? 1 : 0)),
    delta.constraintsEvaluated ?? 0,
    delta.constraintsPassed ?? 0,
  ];
}

/** A row of `route_evidence` (scope and key columns aside): the sketches as bytes, the paired counts in a column per cell. */
export type EvidenceRow = Omit<CandidateCounts, 'latency' | 'ttft' | 'paired'> & { latency: Buffer | null; ttft: Buffer | null } & Record<
    PairedColumn,
    number
  >;

export const evidenceColumns = selectList<EvidenceRow>({
  requestedModel: 'requested_model',
  candidateModel: 'candidate_model',
  contractVersion: 'contract_version',
  evaluated: 'evaluated',
  passed: 'passed',
  errors: 'errors',
  promptTokens: 'prompt_tokens',
  completionTokens: 'completion_tokens',
  costUsd: 'cost_usd',
  latencyMsTotal: 'latency_ms_total',
  latency: 'latency',
  ttft: 'ttft',
  constraintsEvaluated: 'constraints_evaluated',
  constraintsPassed: 'constraints_passed',
  updatedAt: 'updated_at',
  ...(Object.fromEntries(pairedCells.map((cell) => [cell.column, cell.column])) as Record<PairedColumn, string>),
});

export function fromEvidenceRow(row: EvidenceRow): CandidateCounts {
  const paired: PairedCounts = {
    same: { right: 0, wrong: 0, ungraded: 0 },
    win: { right: 0, wrong: 0, ungraded: 0 },
    loss: { right: 0, wrong: 0, ungraded: 0 },
    tie: { right: 0, wrong: 0, ungraded: 0 },
  };
  for (const cell of pairedCells) paired[cell.outcome][cell.grade] = row[cell.column];
  return {
    requestedModel: row.requestedModel,
    candidateModel: row.candidateModel,
    contractVersion: row.contractVersion,
    evaluated: row.evaluated,
    passed: row.passed,
    errors: row.errors,
    promptTokens: row.promptTokens,
    completionTokens: row.completionTokens,
    costUsd: row.costUsd,
    latencyMsTotal: row.latencyMsTotal,
    latency: bytesOf(row.latency),
    ttft: bytesOf(row.ttft),
    paired,
    constraintsEvaluated: row.constraintsEvaluated,
    constraintsPassed: row.constraintsPassed,
    updatedAt: row.updatedAt,
  };
}

/** A stored sketch with one more value (a new sketch when there was none); unchanged when the value is null. */
export function sketchWithValue(encoded: Buffer | null, value: number | null): Buffer | null {
  if (value === null) return encoded;
  const sketch = encoded === null ? newSketch() : decodeSketch(encoded);
  sketch.accept(Math.max(value, 0.001));
  return Buffer.from(encodeSketch(sketch));
}

/** A row of `routes`: the scope in three columns, certificate, cooldowns, fallbacks and split as JSON. */
export type RouteRow = Scope &
  Omit<RouteRecord, 'scope' | 'certificate' | 'cooldowns' | 'fallbacks' | 'split'> & {
    certificate: string | null;
    cooldowns: string;
    fallbacks: string;
    split: string | null;
  };

export const routeColumns = selectList<RouteRow>({
  accountId: 'account_id',
  project: 'project',
  workload: 'workload',
  requestedModel: 'requested_model',
  servedModel: 'served_model',
  pinnedModel: 'pinned_model',
  certificate: 'certificate',
  cooldowns: 'cooldowns',
  fallbacks: 'fallbacks',
  split: 'split',
  updatedAt: 'updated_at',
});

export function fromRouteRow(row: RouteRow): RouteRecord {
  return {
    scope: { accountId: row.accountId, project: row.project, workload: row.workload },
    requestedModel: row.requestedModel,
    servedModel: row.servedModel,
    pinnedModel: row.pinnedModel,
    certificate: row.certificate === null ? null : (JSON.parse(row.certificate) as RouteRecord['certificate']),
    cooldowns: JSON.parse(row.cooldowns) as Record<string, number>,
    fallbacks: JSON.parse(row.fallbacks) as string[],
    split: row.split === null ? null : (JSON.parse(row.split) as RouteRecord['split']),
    updatedAt: row.updatedAt,
  };
}

export function toRouteRow(route: RouteRecord): RouteRow {
  return {
    ...route.scope,
    requestedModel: route.requestedModel,
    servedModel: route.servedModel,
    pinnedModel: route.pinnedModel,
    certificate: jsonOrNull(route.certificate),
    cooldowns: JSON.stringify(route.cooldowns),
    fallbacks: JSON.stringify(route.fallbacks),
    split: jsonOrNull(route.split),
    updatedAt: route.updatedAt,
  };
}

/** A row of `route_changes` (scope aside): the certificate as JSON. */
export type RouteChangeRow = Omit<RouteChange, 'certificate'> & { certificate: string | null };

export const routeChangeColumns = selectList<RouteChangeRow>({
  requestedModel: 'requested_model',
  fromModel: 'from_model',
  toModel: 'to_model',
  reason: 'reason',
  certificate: 'certificate',
  detail: 'detail',
  at: 'at',
});

export function fromRouteChangeRow(row: RouteChangeRow): RouteChange {
  return { ...row, certificate: row.certificate === null ? null : (JSON.parse(row.certificate) as RouteChange['certificate']) };
}

export function toRouteChangeRow(change: RouteChange): RouteChangeRow {
  return { ...change, certificate: jsonOrNull(change.certificate) };
}

/** A row of `feedback`: `pass` as the dialect keeps a boolean (SQLite 0/1, PostgreSQL BOOLEAN), which the back end converts. */
export type FeedbackRow<Pass> = Omit<Feedback, 'pass'> & { pass: Pass | null };

export const feedbackColumns = selectList<FeedbackRow<unknown>>({
  requestId: 'request_id',
  accountId: 'account_id',
  model: 'model',
  project: 'project',
  workload: 'workload',
  pass: 'pass',
  score: 'score',
  comment: 'comment',
  evidenceVersion: 'evidence_version',
  createdAt: 'created_at',
});

/** A row of `router_states`: the scope in three columns. */
export type RouterStateRow = Scope & Omit<RouterStateRecord, 'scope'>;

export const routerStateColumns = selectList<RouterStateRow>({
  accountId: 'account_id',
  project: 'project',
  workload: 'workload',
  requestedModel: 'requested_model',
  state: 'state',
  updatedAt: 'updated_at',
});

export function fromRouterStateRow(row: RouterStateRow): RouterStateRecord {
  return {
    scope: { accountId: row.accountId, project: row.project, workload: row.workload },
    requestedModel: row.requestedModel,
    state: row.state,
    updatedAt: row.updatedAt,
  };
}

/** A row read with its `revision` column, as polls read routes and router states. */
export type RevisedRow<Row> = Row & { revision: number };

export function fromRevisedRow<Row, Value>(row: RevisedRow<Row>, from: (row: Row) => Value): Revised<Value> {
  return { record: from(row), revision: row.revision };
}
