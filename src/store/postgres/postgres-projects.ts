/** Projects and their workloads (`ProjectStore`, `store.ts`) on PostgreSQL. */
import { newId, projectColumns, readBack, workloadColumns } from '../sql-records.js';
import type { Project, ProjectStore, Workload } from '../store.js';
import type { PostgresDatabase } from './postgres-database.js';
import { paginate } from './postgres-pagination.js';

export function createPostgresProjects(database: PostgresDatabase): ProjectStore {
  const projectBySlug = async (accountId: string, slug: string) =>
    (await database.query<Project>(`SELECT ${projectColumns} FROM projects WHERE account_id = $1 AND slug = $2`, [accountId, slug]))[0] ??
    null;
  const workloadByName = async (projectId: string, name: string) =>
    (
      await database.query<Workload>(`SELECT ${workloadColumns} FROM workloads WHERE project_id = $1 AND name = $2`, [projectId, name])
    )[0] ?? null;
  return {
    async ensureScope({ accountId, project: projectSlug, workload: workloadName }) {
      // Read first: an existing scope, the usual case, costs one read and no write.
      let project = await projectBySlug(accountId, projectSlug);
      let workload = project === null ? null : await workloadByName(project.id, workloadName);
      if (project !== null && workload !== null) return { project, workload };
      if (project === null) {
        await database.execute(
          'INSERT INTO projects (id, account_id, slug, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (account_id, slug) DO NOTHING',
          [newId('proj'), accountId, projectSlug, Date.now()],
        );
        project = readBack(await projectBySlug(accountId, projectSlug), 'postgres');
      }
      await database.execute(
        'INSERT INTO workloads (id, project_id, name, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (project_id, name) DO NOTHING',
        [newId('wl'), project.id, workloadName, Date.now()],
      );
      workload = readBack(await workloadByName(project.id, workloadName), 'postgres');
      return { project, workload };
    },
    getProject: projectBySlug,
    async listProjects(accountId, page) {
      return paginate(
        page,
        (row: Project) => [row.createdAt, row.id],
        (limit, after) =>
          after === null
            ? database.query<Project>(`SELECT ${projectColumns} FROM projects WHERE account_id = $1 ORDER BY created_at, id LIMIT $2`, [
                accountId,
                limit,
              ])
            : database.query<Project>(
                `SELECT ${projectColumns} FROM projects WHERE account_id = $1 AND (created_at, id) > ($2, $3) ORDER BY created_at, id LIMIT $4`,
                [accountId, after[0], after[1], limit],
              ),
      );
    },
    async listWorkloads(accountId, projectSlug, page) {
      const project = await projectBySlug(accountId, projectSlug);
      if (project === null) return null;
      return paginate(
        page,
        (row: Workload) => [row.createdAt, row.id],
        (limit, after) =>
          after === null
            ? database.query<Workload>(`SELECT ${workloadColumns} FROM workloads WHERE project_id = $1 ORDER BY created_at, id LIMIT $2`, [
                project.id,
                limit,
              ])
            : database.query<Workload>(
                `SELECT ${workloadColumns} FROM workloads WHERE project_id = $1 AND (created_at, id) > ($2, $3) ORDER BY created_at, id LIMIT $4`,
                [project.id, after[0], after[1], limit],
              ),
      );
    },
  };
}
