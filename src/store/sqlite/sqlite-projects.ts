/** Projects and their workloads (`ProjectStore`, `store.ts`) on SQLite. */
import { newId, projectColumns, readBack, workloadColumns } from '../sql-records.js';
import type { Project, ProjectStore, Workload } from '../store.js';
import { preparedOnFirstUse, type SqliteDatabase } from './sqlite-database.js';
import { paginate } from './sqlite-pagination.js';

export function createSqliteProjects(database: SqliteDatabase): ProjectStore {
  const prepared = preparedOnFirstUse(() => {
    const statements = {
      insertProject: database.prepare<[string, string, string, number]>(
        'INSERT INTO projects (id, account_id, slug, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (account_id, slug) DO NOTHING',
      ),
      projectBySlug: database.prepare<[string, string], Project>(
        `SELECT ${projectColumns} FROM projects WHERE account_id = ? AND slug = ?`,
      ),
      projectsFirst: database.prepare<[string, number], Project>(
        `SELECT ${projectColumns} FROM projects WHERE account_id = ? ORDER BY created_at, id LIMIT ?`,
      ),
      projectsAfter: database.prepare<[string, number, string, number], Project>(
        `SELECT ${projectColumns} FROM projects WHERE account_id = ? AND (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?`,
      ),
      insertWorkload: database.prepare<[string, string, string, number]>(
        'INSERT INTO workloads (id, project_id, name, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (project_id, name) DO NOTHING',
      ),
      workloadByName: database.prepare<[string, string], Workload>(
        `SELECT ${workloadColumns} FROM workloads WHERE project_id = ? AND name = ?`,
      ),
      workloadsFirst: database.prepare<[string, number], Workload>(
        `SELECT ${workloadColumns} FROM workloads WHERE project_id = ? ORDER BY created_at, id LIMIT ?`,
      ),
      workloadsAfter: database.prepare<[string, number, string, number], Workload>(
        `SELECT ${workloadColumns} FROM workloads WHERE project_id = ? AND (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?`,
      ),
    };
    const ensureScope = database.transaction((accountId: string, projectSlug: string, workloadName: string) => {
      statements.insertProject.run(newId('proj'), accountId, projectSlug, Date.now());
      const project = readBack(statements.projectBySlug.get(accountId, projectSlug), 'sqlite');
      statements.insertWorkload.run(newId('wl'), project.id, workloadName, Date.now());
      return { project, workload: readBack(statements.workloadByName.get(project.id, workloadName), 'sqlite') };
    });
    return { ...statements, ensureScope };
  });

  return {
    async ensureScope({ accountId, project: projectSlug, workload: workloadName }) {
      const statements = prepared();
      // Read first: an existing scope then costs no write lock, which the trace
      // writer would otherwise contend for.
      const project = statements.projectBySlug.get(accountId, projectSlug);
      const workload = project === undefined ? undefined : statements.workloadByName.get(project.id, workloadName);
      if (project !== undefined && workload !== undefined) return { project, workload };
      // IMMEDIATE takes the write lock before the inserts, so another process
      // creating the same scope waits and then reads the one row.
      return statements.ensureScope.immediate(accountId, projectSlug, workloadName);
    },
    async getProject(accountId, slug) {
      return prepared().projectBySlug.get(accountId, slug) ?? null;
    },
    async listProjects(accountId, page) {
      const statements = prepared();
      return paginate(
        page,
        (row) => [row.createdAt, row.id],
        (limit, after) =>
          after === null
            ? statements.projectsFirst.all(accountId, limit)
            : statements.projectsAfter.all(accountId, after[0], after[1], limit),
      );
    },
    async listWorkloads(accountId, projectSlug, page) {
      const statements = prepared();
      const project = statements.projectBySlug.get(accountId, projectSlug);
      if (project === undefined) return null;
      return paginate(
        page,
        (row) => [row.createdAt, row.id],
        (limit, after) =>
          after === null
            ? statements.workloadsFirst.all(project.id, limit)
            : statements.workloadsAfter.all(project.id, after[0], after[1], limit),
      );
    },
  };
}
