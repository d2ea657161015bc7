/**
 * Fresh PostgreSQL schemas for tests: each store under test gets a schema of
 * its own on the test database (so suites and processes never see each
 * other's rows), and every schema made here is dropped when the file ends.
 */
import pg from 'pg';
import { afterAll } from 'vitest';

export interface PostgresSchemas {
  /** A new, empty schema's name (created on the store's first migrate). */
  fresh(): string;
}

export function postgresSchemas(url: string, prefix: string): PostgresSchemas {
  const made: string[] = [];
  const base = `${prefix}_${process.pid}_${Date.now().toString(36)}`;
  afterAll(async () => {
    if (made.length === 0) return;
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      for (const schema of made) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    } finally {
      await client.end();
    }
  });
  return {
    fresh() {
      const schema = `${base}_${made.length + 1}`;
      made.push(schema);
      return schema;
    },
  };
}
