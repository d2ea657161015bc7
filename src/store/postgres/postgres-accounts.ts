/** Accounts, keys, projects and workloads (`store.ts`) on PostgreSQL. */
import { accountColumns, keyColumns, newId, projectColumns, workloadColumns } from '../sql-records.js';
import type { Account, AccountStore, ApiKey, Project, ProjectStore, Workload } from '../store.js';
import type { PostgresDatabase } from './postgres-database.js';
import { paginate } from './postgres-pagination.js';

export function createPostgresAccountStore(database: PostgresDatabase): AccountStore {
  const one = async <Row extends object>(sql: string, values: unknown[]) => (await database.query<Row>(sql, values))[0] ?? null;
  return {
    async ensureAccount(name) {
      // Two statements, not one: a row another process inserted after this statement's snapshot is
      // invisible to it, but visible to the next statement once the conflict has waited for its commit.
      await database.execute('INSERT INTO accounts (id, name, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING', [newId('acct'), name, Date.now()]);
      return found(await one<Account>(`SELECT ${accountColumns} FROM accounts WHERE name = $1`, [name]));
    },
    async getAccount(id) {
      return one<Account>(`SELECT ${accountColumns} FROM accounts WHERE id = $1`, [id]);
    },
    async createKey(key) {
      const rows = await database.query<ApiKey>(
        `INSERT INTO api_keys (id, account_id, name, display_prefix, hash, environment, role, requests_per_minute, tokens_per_minute, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${keyColumns}`,
        [newId('key'), key.accountId, key.name, key.displayPrefix, key.hash, key.environment, key.role, key.requestsPerMinute, key.tokensPerMinute ?? null, key.createdAt ?? Date.now()],
      );
      return found(rows[0] ?? null);
    },
    async findKeyByHash(hash) {
      return one<ApiKey>(`SELECT ${keyColumns} FROM api_keys WHERE hash = $1`, [hash]);
    },
    async listKeys(accountId, page) {
      return paginate(page, (row: ApiKey) => [row.createdAt, row.id], (limit, after) =>
        after === null
          ? database.query<ApiKey>(`SELECT ${keyColumns} FROM api_keys WHERE account_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`, [accountId, limit])
          : database.query<ApiKey>(
              `SELECT ${keyColumns} FROM api_keys WHERE account_id = $1 AND (created_at, id) < ($2, $3) ORDER BY created_at DESC, id DESC LIMIT $4`,
              [accountId, after[0], after[1], limit],
            ),
      );
    },
    async revokeKey(accountId, keyId, at) {
      return (await database.execute('UPDATE api_keys SET revoked_at = $1 WHERE account_id = $2 AND id = $3 AND revoked_at IS NULL', [at, accountId, keyId])) === 1;
    },
    async listKeysRevokedSince(since) {
      return (await database.query<{ hash: string }>('SELECT hash FROM api_keys WHERE revoked_at >= $1', [since])).map((row) => row.hash);
    },
    async touchKeys(uses) {
      if (uses.length === 0) return;
      // The rows are locked in id order first, so two processes touching the same keys never deadlock.
      await database.execute(
        `WITH used AS (SELECT id, max(used_at) AS used_at FROM unnest($1::text[], $2::bigint[]) AS u (id, used_at) GROUP BY id),
              locked AS MATERIALIZED (SELECT k.id FROM api_keys k JOIN used USING (id) ORDER BY k.id FOR UPDATE OF k)
         UPDATE api_keys k SET last_used_at = used.used_at FROM used, locked
         WHERE k.id = used.id AND locked.id = used.id AND (k.last_used_at IS NULL OR k.last_used_at < used.used_at)`,
        [uses.map((use) => use.keyId), uses.map((use) => use.usedAt)],
      );
    },
  };
}

export function createPostgresProjectStore(database: PostgresDatabase): ProjectStore {
  const projectBySlug = async (accountId: string, slug: string) =>
    (await database.query<Project>(`SELECT ${projectColumns} FROM projects WHERE account_id = $1 AND slug = $2`, [accountId, slug]))[0] ?? null;
  const workloadByName = async (projectId: string, name: string) =>
    (await database.query<Workload>(`SELECT ${workloadColumns} FROM workloads WHERE project_id = $1 AND name = $2`, [projectId, name]))[0] ?? null;
  return {
    async ensureScope(accountId, projectSlug, workloadName) {
      // Read first: an existing scope, the usual case, costs one read and no write.
      let project = await projectBySlug(accountId, projectSlug);
      let workload = project === null ? null : await workloadByName(project.id, workloadName);
      if (project !== null && workload !== null) return { project, workload };
      if (project === null) {
        await database.execute(
          'INSERT INTO projects (id, account_id, slug, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (account_id, slug) DO NOTHING',
          [newId('proj'), accountId, projectSlug, Date.now()],
        );
        project = found(await projectBySlug(accountId, projectSlug));
      }
      await database.execute(
        'INSERT INTO workloads (id, project_id, name, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (project_id, name) DO NOTHING',
        [newId('wl'), project.id, workloadName, Date.now()],
      );
      workload = found(await workloadByName(project.id, workloadName));
      return { project, workload };
    },
    getProject: projectBySlug,
    async listProjects(accountId, page) {
      return paginate(page, (row: Project) => [row.createdAt, row.id], (limit, after) =>
        after === null
          ? database.query<Project>(`SELECT ${projectColumns} FROM projects WHERE account_id = $1 ORDER BY created_at, id LIMIT $2`, [accountId, limit])
          : database.query<Project>(
              `SELECT ${projectColumns} FROM projects WHERE account_id = $1 AND (created_at, id) > ($2, $3) ORDER BY created_at, id LIMIT $4`,
              [accountId, after[0], after[1], limit],
            ),
      );
    },
    async listWorkloads(accountId, projectSlug, page) {
      const project = await projectBySlug(accountId, projectSlug);
      if (project === null) return null;
      return paginate(page, (row: Workload) => [row.createdAt, row.id], (limit, after) =>
        after === null
          ? database.query<Workload>(`SELECT ${workloadColumns} FROM workloads WHERE project_id = $1 ORDER BY created_at, id LIMIT $2`, [project.id, limit])
          : database.query<Workload>(
              `SELECT ${workloadColumns} FROM workloads WHERE project_id = $1 AND (created_at, id) > ($2, $3) ORDER BY created_at, id LIMIT $4`,
              [project.id, after[0], after[1], limit],
            ),
      );
    },
  };
}

/** A row just written or guaranteed by a constraint; missing means the database broke its promise. */
function found<Row>(row: Row | null): Row {
  if (row === null) throw new Error('postgres store: a row written in this call could not be read back');
  return row;
}
