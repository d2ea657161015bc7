import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { postgres, requireServiceOrSkip } from '../../../test/helpers/machine-requirements.js';
import { postgresSchemas } from '../../../test/helpers/postgres-schemas.js';
import { describeStoreContract } from '../store-contract.js';
import { migrations } from './postgres-migrations.js';
import { createPostgresStore } from './postgres-store.js';

const url = await requireServiceOrSkip(postgres, 'src/store/postgres/postgres-store.test.ts');

if (url !== null) {
  const schemas = postgresSchemas(url, 'tg_contract');
  const open = (schema = schemas.fresh()) => createPostgresStore({ url, schema, poolSize: 4 });

  describeStoreContract('postgres', async () => open(), async () => {
    const schema = schemas.fresh();
    const first = open(schema);
    const second = open(schema);
    // Every process migrates as it starts; migrating is also when a store starts hearing changes.
    await Promise.all([first.migrate(), second.migrate()]);
    return [first, second];
  });

  describe('postgres store', () => {
    it('migrates once when several processes start at once', async () => {
      const schema = schemas.fresh();
      const stores = Array.from({ length: 4 }, () => open(schema));
      await Promise.all(stores.map((store) => store.migrate()));
      await Promise.all(stores.map((store) => store.migrate()));
      await Promise.all(stores.map((store) => store.close()));
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const applied = await client.query<{ id: string }>(`SELECT id FROM ${schema}.schema_migrations ORDER BY id`);
      await client.end();
      expect(applied.rows.map((row) => row.id)).toEqual(migrations.map((migration) => migration.id));
    });

    it('ping fails once the store is closed', async () => {
      const store = open();
      await store.migrate();
      await store.ping();
      await store.close();
      await expect(store.ping()).rejects.toThrow();
    });
  });
}
