/**
 * The Store contract as test suites, one per domain, each in its own file:
 * every back end runs them all, unchanged (`describeStoreContracts('sqlite',
 * …)`, `('postgres', …)`), so they use only the Store interface and never a
 * back end's own tables or settings.
 *
 * `open` must return a store on an empty database; each suite migrates it.
 * `openShared` opens two stores on one fresh, migrated database (two
 * processes' view of it), for the tests that need both; a back end that
 * cannot (SQLite `:memory:`) leaves it out, and those tests are skipped.
 */
import { describe } from 'vitest';
import { describeAccountsContract } from './accounts-contract.js';
import { describeBudgetsContract } from './budgets-contract.js';
import { describeChangeFeedContract } from './change-feed-contract.js';
import { describeKeysContract } from './keys-contract.js';
import { describeLeasesContract } from './leases-contract.js';
import { describeLifecycleContract } from './lifecycle-contract.js';
import { describeProjectsContract } from './projects-contract.js';
import { describeRetentionContract } from './retention-contract.js';
import { describeRollupsContract } from './rollups-contract.js';
import { describeRouterQueueContract } from './router-queue-contract.js';
import { describeRoutingContract } from './routing-contract.js';
import { describeSessionsContract } from './sessions-contract.js';
import type { OpenSharedStores, OpenStore } from './store-contract-support.js';
import { describeTracesContract } from './traces-contract.js';

export function describeStoreContracts(backendName: string, open: OpenStore, openShared?: OpenSharedStores): void {
  describe(`Store contract: ${backendName}`, () => {
    describeAccountsContract(open);
    describeKeysContract(open);
    describeProjectsContract(open);
    describeTracesContract(open);
    describeRoutingContract(open, openShared);
    describeRouterQueueContract(open, openShared);
    describeRollupsContract(open);
    describeRetentionContract(open);
    describeLeasesContract(open, openShared);
    describeSessionsContract(open);
    describeBudgetsContract(open, openShared);
    describeChangeFeedContract(open, openShared);
    describeLifecycleContract(open);
  });
}
