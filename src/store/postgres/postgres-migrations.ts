/**
 * The PostgreSQL schema as an ordered list of migrations, mirroring SQLite's
 * (`sqlite-migrations.ts`: the same tables and column names). A migration is
 * never edited once released: a schema change is a new entry at the end.
 *
 * Types: epoch ms and counts are BIGINT, costs and latencies DOUBLE PRECISION,
 * sketches BYTEA. JSON is TEXT, not JSONB: JSONB refuses `\u0000`, and the
 * store keeps strings as given. Every key column is `COLLATE "C"`, so ties
 * sort by code point as SQLite's BINARY does, whatever the database's locale.
 *
 * Traces are partitioned by day on `started_at` (`postgres-partitions.ts`
 * creates the days; rows outside them land in `traces_default`), so retention
 * drops whole days. A partitioned table's unique keys must hold the partition
 * key, so a trace is unique by (request_id, started_at): a retried trace,
 * identical, is skipped; request ids are random, never reused for another call.
 */
import { pairedCells } from '../sql-routing-records.js';
import { advisoryLockKey, quoteIdentifier, type PostgresDatabase } from './postgres-database.js';

export interface Migration {
  /** Sortable and unique; recorded in `schema_migrations` once applied. */
  id: string;
  sql: string;
}

const key = 'TEXT COLLATE "C"';

export const migrations: readonly Migration[] = [
  {
    id: '0001_accounts',
    sql: `
      CREATE TABLE accounts (
        id ${key} PRIMARY KEY,
        name ${key} NOT NULL UNIQUE,
        created_at BIGINT NOT NULL
      );
      CREATE TABLE api_keys (
        id ${key} PRIMARY KEY,
        account_id ${key} NOT NULL REFERENCES accounts (id),
        name TEXT,
        display_prefix TEXT NOT NULL,
        hash ${key} NOT NULL UNIQUE,
        environment TEXT NOT NULL CHECK (environment IN ('production', 'staging')),
        role TEXT NOT NULL CHECK (role IN ('inference', 'admin')),
        requests_per_minute INTEGER,
        tokens_per_minute INTEGER,
        created_at BIGINT NOT NULL,
        last_used_at BIGINT,
        revoked_at BIGINT
      );
      CREATE INDEX api_keys_account_created ON api_keys (account_id, created_at, id);
      CREATE INDEX api_keys_revoked ON api_keys (revoked_at) WHERE revoked_at IS NOT NULL;
      CREATE TABLE projects (
        id ${key} PRIMARY KEY,
        account_id ${key} NOT NULL REFERENCES accounts (id),
        slug ${key} NOT NULL,
        created_at BIGINT NOT NULL,
        UNIQUE (account_id, slug)
      );
      CREATE INDEX projects_account_created ON projects (account_id, created_at, id);
      CREATE TABLE workloads (
        id ${key} PRIMARY KEY,
        project_id ${key} NOT NULL REFERENCES projects (id),
        name ${key} NOT NULL,
        created_at BIGINT NOT NULL,
        UNIQUE (project_id, name)
      );
      CREATE INDEX workloads_project_created ON workloads (project_id, created_at, id);
    `,
  },
  {
    id: '0002_traces',
    sql: `
      -- No foreign keys, as in SQLite: traces are a log written in batches, and
      -- one row naming a missing account must not fail a batch.
      CREATE TABLE traces (
        request_id ${key} NOT NULL,
        account_id ${key} NOT NULL,
        key_id ${key} NOT NULL,
        environment ${key} NOT NULL,
        project ${key},
        workload ${key},
        end_user ${key},
        requested_model ${key},
        served_model ${key},
        replica TEXT,
        status ${key} NOT NULL,
        error_class TEXT,
        error_message TEXT,
        http_status INTEGER NOT NULL,
        finish_reason TEXT,
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        cost_usd DOUBLE PRECISION NOT NULL,
        latency_ms DOUBLE PRECISION NOT NULL,
        ttft_ms DOUBLE PRECISION,
        stream BOOLEAN NOT NULL,
        metadata TEXT,
        started_at BIGINT NOT NULL,
        request_body TEXT,
        reply_body TEXT,
        PRIMARY KEY (request_id, started_at)
      ) PARTITION BY RANGE (started_at);
      CREATE TABLE traces_default PARTITION OF traces DEFAULT;
      -- request_id ends both indexes so "newest first, ties by id" pages are index scans.
      CREATE INDEX traces_account_started ON traces (account_id, started_at, request_id);
      CREATE INDEX traces_account_scope_started ON traces (account_id, project, workload, started_at, request_id);
      -- Retention: the oldest calls, and the oldest calls that still have bodies.
      CREATE INDEX traces_started ON traces (started_at);
      CREATE INDEX traces_started_with_bodies ON traces (started_at) WHERE request_body IS NOT NULL OR reply_body IS NOT NULL;

      CREATE TABLE rollups (
        account_id ${key} NOT NULL,
        project ${key} NOT NULL,
        workload ${key} NOT NULL,
        environment ${key} NOT NULL,
        model ${key} NOT NULL,
        minute BIGINT NOT NULL,
        calls BIGINT NOT NULL,
        errors BIGINT NOT NULL,
        error_classes TEXT NOT NULL,
        prompt_tokens BIGINT NOT NULL,
        completion_tokens BIGINT NOT NULL,
        cost_usd DOUBLE PRECISION NOT NULL,
        latency BYTEA,
        ttft BYTEA,
        PRIMARY KEY (account_id, project, workload, environment, model, minute)
      );
      CREATE INDEX rollups_account_minute ON rollups (account_id, minute);

      CREATE TABLE project_retention (
        account_id ${key} NOT NULL,
        project ${key} NOT NULL,
        bodies TEXT NOT NULL,
        sample_rate DOUBLE PRECISION NOT NULL,
        bodies_ttl_days DOUBLE PRECISION,
        traces_ttl_days DOUBLE PRECISION,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (account_id, project)
      );
    `,
  },
  {
    id: '0003_routing',
    sql: `
      CREATE TABLE eval_contracts (
        account_id ${key} NOT NULL,
        project ${key} NOT NULL,
        workload ${key} NOT NULL,
        version INTEGER NOT NULL,
        evidence_version INTEGER,
        contract TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        PRIMARY KEY (account_id, project, workload, version)
      );
      CREATE TABLE route_evidence (
        account_id ${key} NOT NULL,
        project ${key} NOT NULL,
        workload ${key} NOT NULL,
        requested_model ${key} NOT NULL,
        candidate_model ${key} NOT NULL,
        contract_version INTEGER NOT NULL,
        evaluated BIGINT NOT NULL,
        passed BIGINT NOT NULL,
        errors BIGINT NOT NULL,
        prompt_tokens BIGINT NOT NULL,
        completion_tokens BIGINT NOT NULL,
        cost_usd DOUBLE PRECISION NOT NULL,
        latency_ms_total DOUBLE PRECISION NOT NULL,
        latency BYTEA,
        ttft BYTEA,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (account_id, project, workload, requested_model, contract_version, candidate_model)
      );
      CREATE TABLE routes (
        account_id ${key} NOT NULL,
        project ${key} NOT NULL,
        workload ${key} NOT NULL,
        requested_model ${key} NOT NULL,
        served_model ${key} NOT NULL,
        pinned_model ${key},
        certificate TEXT,
        cooldowns TEXT NOT NULL,
        fallbacks TEXT NOT NULL DEFAULT '[]',
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (account_id, project, workload, requested_model)
      );
      CREATE INDEX routes_updated ON routes (updated_at);
      CREATE TABLE route_changes (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        account_id ${key} NOT NULL,
        project ${key} NOT NULL,
        workload ${key} NOT NULL,
        requested_model ${key} NOT NULL,
        from_model ${key} NOT NULL,
        to_model ${key} NOT NULL,
        reason TEXT NOT NULL,
        certificate TEXT,
        detail TEXT,
        at BIGINT NOT NULL
      );
      CREATE INDEX route_changes_scope ON route_changes (account_id, project, workload, at, id);
      CREATE TABLE eval_spend (
        account_id ${key} NOT NULL,
        project ${key} NOT NULL,
        workload ${key} NOT NULL,
        day ${key} NOT NULL,
        cost_usd DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (account_id, project, workload, day)
      );
      CREATE TABLE route_eval_spend (
        account_id ${key} NOT NULL,
        project ${key} NOT NULL,
        workload ${key} NOT NULL,
        requested_model ${key} NOT NULL,
        cost_usd DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (account_id, project, workload, requested_model)
      );
      CREATE TABLE judge_checks (
        account_id ${key} NOT NULL,
        project ${key} NOT NULL,
        workload ${key} NOT NULL,
        judge_model ${key} NOT NULL,
        checks BIGINT NOT NULL,
        false_losses BIGINT NOT NULL,
        PRIMARY KEY (account_id, project, workload, judge_model)
      );
      CREATE TABLE feedback (
        account_id ${key} NOT NULL,
        request_id ${key} NOT NULL,
        model ${key},
        project ${key},
        workload ${key},
        pass BOOLEAN,
        score DOUBLE PRECISION,
        comment TEXT,
        evidence_version INTEGER,
        created_at BIGINT NOT NULL,
        PRIMARY KEY (account_id, request_id)
      );
      CREATE INDEX feedback_scope ON feedback (account_id, project, workload);
    `,
  },
  {
    id: '0004_fleet',
    sql: `
      -- No changes table: the change feed is LISTEN/NOTIFY.
      CREATE TABLE leases (
        name ${key} PRIMARY KEY,
        holder ${key} NOT NULL,
        expires_at BIGINT NOT NULL
      );
      CREATE TABLE dashboard_sessions (
        id_hash ${key} PRIMARY KEY,
        key_id ${key} NOT NULL,
        account_id ${key} NOT NULL,
        key_hash ${key} NOT NULL,
        expires_at BIGINT NOT NULL
      );
      CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at);
      CREATE TABLE router_samples (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        body TEXT NOT NULL,
        at BIGINT NOT NULL
      );
      CREATE TABLE router_states (
        account_id ${key} NOT NULL,
        project ${key} NOT NULL,
        workload ${key} NOT NULL,
        requested_model ${key} NOT NULL,
        state TEXT NOT NULL,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (account_id, project, workload, requested_model)
      );
      CREATE INDEX router_states_updated ON router_states (updated_at);
    `,
  },
  {
    // On the partitioned parent: every partition, the default one included, takes the columns.
    id: '0005_measured_cost',
    sql: `
      ALTER TABLE traces ADD COLUMN engine_seconds DOUBLE PRECISION;
      ALTER TABLE traces ADD COLUMN measured_cost_usd DOUBLE PRECISION;
      ALTER TABLE rollups ADD COLUMN measured_calls BIGINT NOT NULL DEFAULT 0;
      ALTER TABLE rollups ADD COLUMN measured_cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0;
      ALTER TABLE rollups ADD COLUMN measured_tokens BIGINT NOT NULL DEFAULT 0;
    `,
  },
  {
    // The router's measured prices: recent minutes with a measured cost, over every account.
    id: '0006_measured_minutes',
    sql: `CREATE INDEX rollups_measured_minute ON rollups (minute) WHERE measured_calls > 0;`,
  },
  {
    // Routes and router states are polled by a revision the database gives every write
    // (routing-store.ts, Revised), never by updated_at, the writing process's clock.
    //
    // A sequence alone would not do: a reader that has seen revision 11 must never find a 10
    // committed later, yet a transaction may take 10 and commit after another took 11 and
    // committed. So the trigger first takes a transaction-level advisory lock, one per table:
    // the writes of a table take their revisions one transaction at a time, each after the one
    // before has committed (PostgreSQL makes a commit visible before it releases its locks), and
    // revision order is commit order. These writes are rare (a route change; the router
    // leader's states once a second), so the wait costs nothing that matters. Being a trigger,
    // it numbers every writer's writes: processes of the previous release during a rolling
    // deploy, an operator's UPDATE.
    id: '0007_revisions',
    sql: `
      CREATE FUNCTION next_revision() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtext(TG_TABLE_SCHEMA), hashtext(TG_TABLE_NAME));
        NEW.revision := nextval(format('%I.%I', TG_TABLE_SCHEMA, TG_TABLE_NAME || '_revision')::regclass);
        RETURN NEW;
      END
      $$;
      CREATE SEQUENCE routes_revision;
      ALTER TABLE routes ADD COLUMN revision BIGINT;
      UPDATE routes SET revision = nextval('routes_revision');
      ALTER TABLE routes ALTER COLUMN revision SET NOT NULL;
      CREATE INDEX routes_by_revision ON routes (revision);
      CREATE TRIGGER routes_next_revision BEFORE INSERT OR UPDATE ON routes FOR EACH ROW EXECUTE FUNCTION next_revision();
      CREATE SEQUENCE router_states_revision;
      ALTER TABLE router_states ADD COLUMN revision BIGINT;
      UPDATE router_states SET revision = nextval('router_states_revision');
      ALTER TABLE router_states ALTER COLUMN revision SET NOT NULL;
      CREATE INDEX router_states_by_revision ON router_states (revision);
      CREATE TRIGGER router_states_next_revision BEFORE INSERT OR UPDATE ON router_states FOR EACH ROW EXECUTE FUNCTION next_revision();
    `,
  },
  {
    // Every upstream attempt of a call that made several (Trace.attempts), as JSON; null for one or none.
    id: '0008_trace_attempts',
    sql: `ALTER TABLE traces ADD COLUMN attempts TEXT;`,
  },
  {
    // Paired evidence (a column per cell of CandidateCounts.paired, from the list in
    // sql-routing-records.ts) and absolute-check counts; a route's certified shares as JSON;
    // why a call's model served it, and the share it was drawn for (Trace.routeReason, routeShare),
    // on the partitioned parent, so every partition takes them. A column with a constant default
    // is added without rewriting the table (PostgreSQL 11+).
    id: '0009_paired_evidence_route_splits',
    sql: `
      ALTER TABLE route_evidence
        ${pairedCells.map((cell) => `ADD COLUMN ${cell.column} BIGINT NOT NULL DEFAULT 0,`).join('\n        ')}
        ADD COLUMN constraints_evaluated BIGINT NOT NULL DEFAULT 0,
        ADD COLUMN constraints_passed BIGINT NOT NULL DEFAULT 0;
      ALTER TABLE routes ADD COLUMN split TEXT;
      ALTER TABLE traces ADD COLUMN route_reason TEXT, ADD COLUMN route_share DOUBLE PRECISION;
    `,
  },
  {
    // Spend budgets and the response cache, as SQLite's 0015_budgets_cache: budgets and cache
    // settings per scope (workload '' for the project), the store ledger's rows (locked per
    // reservation, postgres-budgets.ts), a key's own caps, and on the traces (the partitioned
    // parent, so every partition) and rollups whether a call was cached and what it saved.
    // Constant defaults: no table is rewritten.
    id: '0010_budgets_cache',
    sql: `
      CREATE TABLE budgets (
        account_id ${key} NOT NULL,
        project ${key} NOT NULL,
        workload ${key} NOT NULL,
        environment ${key} NOT NULL CHECK (environment IN ('production', 'staging')),
        daily_usd DOUBLE PRECISION,
        monthly_usd DOUBLE PRECISION,
        alert_at DOUBLE PRECISION,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (account_id, project, workload, environment)
      );
      CREATE TABLE cache_settings (
        account_id ${key} NOT NULL,
        project ${key} NOT NULL,
        workload ${key} NOT NULL,
        enabled BOOLEAN NOT NULL,
        ttl_seconds INTEGER NOT NULL,
        only_repeatable BOOLEAN NOT NULL,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (account_id, project, workload)
      );
      CREATE TABLE budget_spend (
        cap_id ${key} PRIMARY KEY,
        spent_micros BIGINT NOT NULL,
        expires_at BIGINT NOT NULL
      );
      CREATE INDEX budget_spend_expiry ON budget_spend (expires_at);
      ALTER TABLE api_keys ADD COLUMN daily_budget_usd DOUBLE PRECISION, ADD COLUMN monthly_budget_usd DOUBLE PRECISION;
      ALTER TABLE traces ADD COLUMN cached BOOLEAN NOT NULL DEFAULT false, ADD COLUMN cost_saved_usd DOUBLE PRECISION;
      ALTER TABLE rollups ADD COLUMN cached_calls BIGINT NOT NULL DEFAULT 0, ADD COLUMN cost_saved_usd DOUBLE PRECISION NOT NULL DEFAULT 0;
    `,
  },
];

/**
 * Applies the migrations not yet recorded, all in one transaction; returns the
 * ids it applied. A transaction-level advisory lock keyed by the schema is
 * taken first (before the schema is even created), so processes migrating at
 * once apply each migration once: the others wait, then find nothing to do.
 */
export async function applyMigrations(database: PostgresDatabase, list: readonly Migration[] = migrations): Promise<string[]> {
  return database.transaction(async (transaction) => {
    // Waiting for another process's migration is expected; DDL may run long.
    await transaction.execute('SET LOCAL lock_timeout = 0; SET LOCAL statement_timeout = 0');
    await transaction.query('SELECT pg_advisory_xact_lock($1::bigint)', [advisoryLockKey(database.schema, 'migrate')]);
    await transaction.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(database.schema)}`);
    await transaction.query('CREATE TABLE IF NOT EXISTS schema_migrations (id TEXT COLLATE "C" PRIMARY KEY, applied_at BIGINT NOT NULL)');
    const applied = new Set((await transaction.query<{ id: string }>('SELECT id FROM schema_migrations')).map((row) => row.id));
    const done: string[] = [];
    for (const migration of list) {
      if (applied.has(migration.id)) continue;
      await transaction.execute(migration.sql);
      await transaction.query('INSERT INTO schema_migrations (id, applied_at) VALUES ($1, $2)', [migration.id, Date.now()]);
      done.push(migration.id);
    }
    return done;
  });
}
