/**
 * The Store contract, projects and workloads (`ProjectStore`,
 * `src/store/store.ts`), with the page limits and cursors every list keeps:
 * every back end runs it unchanged, through the Store interface alone.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../../src/store/store.js';
import { eachTestOnAFreshStore, collectPages, compareText, type OpenStore } from './store-contract-support.js';

export function describeProjectsContract(open: OpenStore): void {
  describe('projects and workloads', () => {
    let store: Store;
    eachTestOnAFreshStore(open, (opened) => (store = opened));

    it('ensureScope creates a project and a workload once', async () => {
      const account = await store.accounts.ensureAccount('acme');
      const first = await store.projects.ensureScope({ accountId: account.id, project: 'shop', workload: 'main' });
      expect(first.project).toEqual({ id: expect.any(String), accountId: account.id, slug: 'shop', createdAt: expect.any(Number) });
      expect(first.workload).toEqual({ id: expect.any(String), projectId: first.project.id, name: 'main', createdAt: expect.any(Number) });
      expect(await store.projects.ensureScope({ accountId: account.id, project: 'shop', workload: 'main' })).toEqual(first);

      const sibling = await store.projects.ensureScope({ accountId: account.id, project: 'shop', workload: 'summarize' });
      expect(sibling.project).toEqual(first.project);
      expect(sibling.workload.id).not.toBe(first.workload.id);
      expect(await store.projects.getProject(account.id, 'shop')).toEqual(first.project);
      expect(await store.projects.getProject(account.id, 'missing')).toBeNull();
    });

    it('concurrent ensureScope calls create one project and one workload', async () => {
      const account = await store.accounts.ensureAccount('acme');
      const scopes = await Promise.all(
        Array.from({ length: 20 }, () => store.projects.ensureScope({ accountId: account.id, project: 'shop', workload: 'main' })),
      );
      expect(new Set(scopes.map((scope) => scope.project.id)).size).toBe(1);
      expect(new Set(scopes.map((scope) => scope.workload.id)).size).toBe(1);
      expect((await store.projects.listProjects(account.id, { limit: 100 })).items).toHaveLength(1);
      expect((await store.projects.listWorkloads(account.id, 'shop', { limit: 100 }))?.items).toHaveLength(1);
    });

    it("two accounts with the same slug each get their own project and never see the other's", async () => {
      const acme = await store.accounts.ensureAccount('acme');
      const globex = await store.accounts.ensureAccount('globex');
      const acmeShop = await store.projects.ensureScope({ accountId: acme.id, project: 'shop', workload: 'main' });
      const globexShop = await store.projects.ensureScope({ accountId: globex.id, project: 'shop', workload: 'checkout' });
      await store.projects.ensureScope({ accountId: acme.id, project: 'acme-only', workload: 'main' });

      expect(globexShop.project.id).not.toBe(acmeShop.project.id);
      expect(await store.projects.getProject(globex.id, 'shop')).toEqual(globexShop.project);
      expect(await store.projects.getProject(globex.id, 'acme-only')).toBeNull();
      expect((await store.projects.listProjects(globex.id, { limit: 100 })).items).toEqual([globexShop.project]);
      expect((await store.projects.listProjects(acme.id, { limit: 100 })).items.map((project) => project.slug).sort()).toEqual([
        'acme-only',
        'shop',
      ]);
      expect((await store.projects.listWorkloads(globex.id, 'shop', { limit: 100 }))?.items).toEqual([globexShop.workload]);
      expect(await store.projects.listWorkloads(globex.id, 'acme-only', { limit: 100 })).toBeNull();
    });

    it('listProjects and listWorkloads page oldest first without duplicates or gaps', async () => {
      const account = await store.accounts.ensureAccount('acme');
      for (const slug of ['p1', 'p2', 'p3', 'p4', 'p5'])
        await store.projects.ensureScope({ accountId: account.id, project: slug, workload: 'main' });
      for (const name of ['w2', 'w3', 'w4']) await store.projects.ensureScope({ accountId: account.id, project: 'p1', workload: name });

      const projects = await collectPages((page) => store.projects.listProjects(account.id, page), 2);
      expect(projects.map((page) => page.length)).toEqual([2, 2, 1]);
      const allProjects = projects.flat();
      expect(allProjects.map((project) => project.slug).sort()).toEqual(['p1', 'p2', 'p3', 'p4', 'p5']);
      expect(allProjects).toEqual(
        [...allProjects].sort((left, right) => left.createdAt - right.createdAt || compareText(left.id, right.id)),
      );

      const workloads = await collectPages(async (page) => {
        const result = await store.projects.listWorkloads(account.id, 'p1', page);
        if (result === null) throw new Error('project p1 should exist');
        return result;
      }, 3);
      expect(workloads.map((page) => page.length)).toEqual([3, 1]);
      expect(
        workloads
          .flat()
          .map((workload) => workload.name)
          .sort(),
      ).toEqual(['main', 'w2', 'w3', 'w4']);
      expect(await store.projects.listWorkloads(account.id, 'missing', { limit: 10 })).toBeNull();
    });

    it('clamps page limits to 1..100', async () => {
      const account = await store.accounts.ensureAccount('acme');
      for (let index = 0; index < 101; index += 1)
        await store.projects.ensureScope({ accountId: account.id, project: `p-${index}`, workload: 'main' });
      expect((await store.projects.listProjects(account.id, { limit: 0 })).items).toHaveLength(1);
      expect((await store.projects.listProjects(account.id, { limit: -5 })).items).toHaveLength(1);
      const capped = await store.projects.listProjects(account.id, { limit: 1_000 });
      expect(capped.items).toHaveLength(100);
      expect(capped.nextCursor).not.toBeNull();
    });

    it('rejects a cursor it did not make as a 400 on the cursor parameter', async () => {
      const account = await store.accounts.ensureAccount('acme');
      await expect(store.projects.listProjects(account.id, { limit: 10, cursor: 'not-a-cursor' })).rejects.toMatchObject({
        status: 400,
        param: 'cursor',
      });
    });
  });
}
