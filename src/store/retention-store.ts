/**
 * Retention of a project's traces: whether call bodies are kept (all, a
 * sample, none), and after how many days bodies and then whole traces are
 * pruned. Rollups are never pruned, so stats over old windows stay.
 */

export type BodyRetention = 'all' | 'sample' | 'none';

export interface RetentionPolicy {
  bodies: BodyRetention;
  /** With `sample`: the share of calls that keep their bodies. */
  sampleRate: number;
  /** Bodies of calls older than this are removed; null keeps them. */
  bodiesTtlDays: number | null;
  /** Calls older than this are removed (their rollups stay); null keeps them. */
  tracesTtlDays: number | null;
}

export interface ProjectRetention extends RetentionPolicy {
  accountId: string;
  project: string;
  updatedAt: number;
}

export interface RetentionStore {
  get(accountId: string, project: string): Promise<ProjectRetention | null>;
  put(retention: ProjectRetention): Promise<void>;
  /** Every project with its own policy (the pruner walks them). */
  list(): Promise<ProjectRetention[]>;
  /**
   * Removes the bodies of at most `batchSize` calls started before `before`,
   * in one project, or (`project` null) in every project without a policy of
   * its own. Returns how many calls it changed: the caller loops in small
   * batches, so no write holds the database for long.
   */
  pruneBodies(project: { accountId: string; project: string } | null, before: number, batchSize: number): Promise<number>;
  /**
   * Deletes at most `batchSize` calls started before `before`, chosen as for
   * `pruneBodies`; returns how many. A back end that keeps calls in time
   * partitions (PostgreSQL: a table a day) may also drop whole days that
   * ended before `before` and hold only calls this prunes, in one short
   * statement: those count too, so the result may exceed `batchSize`.
   */
  pruneTraces(project: { accountId: string; project: string } | null, before: number, batchSize: number): Promise<number>;
}
