/**
 * Fresh PostgreSQL schemas and databases for tests, on the test server: each
 * store under test gets a schema of its own (so suites and processes never
 * see each other's rows), each fleet of processes a database of its own, and
 * every one made here is dropped when the file ends.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll } from 'vitest';

export interface PostgresSchemas {
  /** A new, empty schema's name (created on the store's first migrate). */
  fresh(): string;
}

/** Runs one statement on `url` with a connection of its own. */
export async function queryPostgres<Row extends pg.QueryResultRow = pg.QueryResultRow>(url: string, sql: string): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<Row>(sql)).rows;
  } finally {
    await client.end();
  }
}

export function postgresSchemas(url: string, prefix: string): PostgresSchemas {
  const made: string[] = [];
  const base = `${prefix}_${process.pid}_${Date.now().toString(36)}`;
  afterAll(async () => {
    for (const schema of made) await queryPostgres(url, `DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  });
  return {
    fresh() {
      const schema = `${base}_${made.length + 1}`;
      made.push(schema);
      return schema;
    },
  };
}

/** New empty databases on the server of `url`, each returned as its URL; dropped (connections and all) after the file. */
export function postgresDatabases(url: string, prefix: string): { fresh(): Promise<string> } {
  const made: string[] = [];
  afterAll(async () => {
    for (const name of made) await queryPostgres(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }, 30_000);
  return {
    async fresh() {
      const name = `${prefix}_${randomBytes(6).toString('hex')}`;
      await queryPostgres(url, `CREATE DATABASE ${name}`);
      made.push(name);
      const database = new URL(url);
      database.pathname = `/${name}`;
      return database.toString();
    },
  };
}
