/**
 * The project and workload a management path names, checked against the
 * caller's account: another account's project is a 404, as if it did not
 * exist. A workload needs no call of its own yet (a contract may be set first).
 */
import { NotFoundError } from '../api/errors.js';
import { isValidProjectSlug, isValidWorkloadName, type Scope } from '../api/scope.js';
import type { ApiKey, Store } from '../store/store.js';

export async function accountProject(store: Store, key: ApiKey, project: string): Promise<string> {
  if (!isValidProjectSlug(project) || (await store.projects.getProject(key.accountId, project)) === null) {
    throw new NotFoundError(`No project '${project.slice(0, 64)}'.`, 'project_not_found');
  }
  return project;
}

export async function accountWorkload(store: Store, key: ApiKey, project: string, workload: string): Promise<Scope> {
  const found =
    isValidProjectSlug(project) && isValidWorkloadName(workload) ? await store.projects.getProject(key.accountId, project) : null;
  if (found === null)
    throw new NotFoundError(`No workload '${workload.slice(0, 64)}' in project '${project.slice(0, 64)}'.`, 'workload_not_found');
  return { accountId: key.accountId, project, workload };
}
