/**
 * The SQLite schema as an ordered list of migrations. A migration is never
 * edited once released: a schema change is a new entry at the end.
 *
 * Column names avoid words PostgreSQL reserves (`user`), so the PostgreSQL
 * schema can mirror this one.
 */
import type { SqliteDatabase } from './sqlite-database.js';
import { pairedCells } from '../sql-routing-records.js';

export interface Migration {
  /** Sortable and unique; recorded in `schema_migrations` once applied. */
  id: string;
  sql: string;
}

export const migrations: readonly Migration[] = [
  {
    id: '0001_initial',
    sql: `
      CREATE TABLE accounts (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        created_at INTEGER NOT NULL
      );

      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        name TEXT,
        display_prefix TEXT NOT NULL,
        hash TEXT NOT NULL,
        environment TEXT NOT NULL CHECK (environment IN ('production', 'staging')),
        role TEXT NOT NULL CHECK (role IN ('inference', 'admin')),
        requests_per_minute INTEGER,
        created_at INTEGER NOT NULL,
        last_used_at INTEGER,
        revoked_at INTEGER
      );
      CREATE UNIQUE INDEX api_keys_hash ON api_keys (hash);
      CREATE INDEX api_keys_account_created ON api_keys (account_id, created_at, id);
      -- Every process polls for recent revocations; only revoked keys belong in this index.
      CREATE INDEX api_keys_revoked ON api_keys (revoked_at) WHERE revoked_at IS NOT NULL;

      CREATE TABLE projects (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        slug TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        UNIQUE (account_id, slug)
      );
      CREATE INDEX projects_account_created ON projects (account_id, created_at, id);

      CREATE TABLE workloads (
        id TEXT PRIMARY KEY,
        project_id TEXT NOT NULL REFERENCES projects (id),
        name TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        UNIQUE (project_id, name)
      );
      CREATE INDEX workloads_project_created ON workloads (project_id, created_at, id);

      -- No foreign keys here: traces are a log written in batches off the hot
      -- path, and one row pointing at a missing account must not fail a batch.
      -- Scope columns hold names, as the Trace record does.
      CREATE TABLE traces (
        request_id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        key_id TEXT NOT NULL,
        environment TEXT NOT NULL,
        project TEXT,
        workload TEXT,
        end_user TEXT,
        requested_model TEXT,
        served_model TEXT,
        replica TEXT,
        status TEXT NOT NULL,
        error_class TEXT,
        error_message TEXT,
        http_status INTEGER NOT NULL,
        finish_reason TEXT,
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        cost_usd REAL NOT NULL,
        latency_ms REAL NOT NULL,
        ttft_ms REAL,
        stream INTEGER NOT NULL,
        metadata TEXT,
        started_at INTEGER NOT NULL,
        request_body TEXT,
        reply_body TEXT
      );
      -- request_id ends both indexes so "newest first, ties by id" pages are index scans.
      CREATE INDEX traces_account_started ON traces (account_id, started_at, request_id);
      CREATE INDEX traces_account_scope_started ON traces (account_id, project, workload, started_at, request_id);
    `,
  },
  {
    id: '0002_routing',
    sql: `
      -- Routing rows name their workload by scope (account, project, workload), as traces do.
      CREATE TABLE eval_contracts (
        account_id TEXT NOT NULL,
        project TEXT NOT NULL,
        workload TEXT NOT NULL,
        version INTEGER NOT NULL,
        contract TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (account_id, project, workload, version)
      );
      CREATE TABLE route_evidence (
        account_id TEXT NOT NULL,
        project TEXT NOT NULL,
        workload TEXT NOT NULL,
        requested_model TEXT NOT NULL,
        candidate_model TEXT NOT NULL,
        contract_version INTEGER NOT NULL,
        evaluated INTEGER NOT NULL,
        passed INTEGER NOT NULL,
        errors INTEGER NOT NULL,
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        cost_usd REAL NOT NULL,
        latency_ms_total REAL NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (account_id, project, workload, requested_model, contract_version, candidate_model)
      );
      CREATE TABLE routes (
        account_id TEXT NOT NULL,
        project TEXT NOT NULL,
        workload TEXT NOT NULL,
        requested_model TEXT NOT NULL,
        served_model TEXT NOT NULL,
        pinned_model TEXT,
        certificate TEXT,
        cooldowns TEXT NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (account_id, project, workload, requested_model)
      );
      CREATE INDEX routes_updated ON routes (updated_at);
      CREATE TABLE route_changes (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        account_id TEXT NOT NULL,
        project TEXT NOT NULL,
        workload TEXT NOT NULL,
        requested_model TEXT NOT NULL,
        from_model TEXT NOT NULL,
        to_model TEXT NOT NULL,
        reason TEXT NOT NULL,
        certificate TEXT,
        detail TEXT,
        at INTEGER NOT NULL
      );
      CREATE INDEX route_changes_scope ON route_changes (account_id, project, workload, at);
      CREATE TABLE eval_spend (
        account_id TEXT NOT NULL,
        project TEXT NOT NULL,
        workload TEXT NOT NULL,
        day TEXT NOT NULL,
        cost_usd REAL NOT NULL,
        PRIMARY KEY (account_id, project, workload, day)
      );
      CREATE TABLE feedback (
        account_id TEXT NOT NULL,
        request_id TEXT NOT NULL,
        model TEXT,
        project TEXT,
        workload TEXT,
        pass INTEGER,
        score REAL,
        comment TEXT,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (account_id, request_id)
      );
    `,
  },
  {
    id: '0003_rollups',
    sql: `
      CREATE TABLE rollups (
        account_id TEXT NOT NULL,
        project TEXT NOT NULL,
        workload TEXT NOT NULL,
        environment TEXT NOT NULL,
        model TEXT NOT NULL,
        minute INTEGER NOT NULL,
        calls INTEGER NOT NULL,
        errors INTEGER NOT NULL,
        error_classes TEXT NOT NULL,
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        cost_usd REAL NOT NULL,
        latency BLOB,
        ttft BLOB,
        PRIMARY KEY (account_id, project, workload, environment, model, minute)
      );
      CREATE INDEX rollups_account_minute ON rollups (account_id, minute);
    `,
  },
  {
    id: '0004_retention',
    sql: `
      CREATE TABLE project_retention (
        account_id TEXT NOT NULL,
        project TEXT NOT NULL,
        bodies TEXT NOT NULL,
        sample_rate REAL NOT NULL,
        bodies_ttl_days REAL,
        traces_ttl_days REAL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (account_id, project)
      );
      CREATE INDEX traces_started ON traces (started_at);
    `,
  },
  {
    id: '0005_route_fallbacks',
    sql: `ALTER TABLE routes ADD COLUMN fallbacks TEXT NOT NULL DEFAULT '[]';`,
  },
  {
    id: '0006_router_evidence',
    sql: `
      -- Versions whose checks did not change share their evidence (NULL: the version's own).
      ALTER TABLE eval_contracts ADD COLUMN evidence_version INTEGER;
      -- Latency and time-to-first-token sketches (DDSketch protobuf) per model.
      ALTER TABLE route_evidence ADD COLUMN latency BLOB;
      ALTER TABLE route_evidence ADD COLUMN ttft BLOB;
      -- Which evidence a feedback counted in, so a second post replaces it there.
      ALTER TABLE feedback ADD COLUMN evidence_version INTEGER;
      CREATE TABLE route_eval_spend (
        account_id TEXT NOT NULL,
        project TEXT NOT NULL,
        workload TEXT NOT NULL,
        requested_model TEXT NOT NULL,
        cost_usd REAL NOT NULL,
        PRIMARY KEY (account_id, project, workload, requested_model)
      );
      CREATE TABLE judge_checks (
        account_id TEXT NOT NULL,
        project TEXT NOT NULL,
        workload TEXT NOT NULL,
        judge_model TEXT NOT NULL,
        checks INTEGER NOT NULL,
        false_losses INTEGER NOT NULL,
        PRIMARY KEY (account_id, project, workload, judge_model)
      );
    `,
  },
  {
    id: '0007_token_limits',
    sql: `ALTER TABLE api_keys ADD COLUMN tokens_per_minute INTEGER;`,
  },
  {
    id: '0008_fleet',
    sql: `
      CREATE TABLE leases (
        name TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        expires_at INTEGER NOT NULL
      );
      CREATE TABLE changes (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        body TEXT NOT NULL,
        at INTEGER NOT NULL
      );
      CREATE TABLE dashboard_sessions (
        id_hash TEXT PRIMARY KEY,
        key_id TEXT NOT NULL,
        account_id TEXT NOT NULL,
        key_hash TEXT NOT NULL,
        expires_at INTEGER NOT NULL
      );
      CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at);
      CREATE TABLE router_samples (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        body TEXT NOT NULL,
        at INTEGER NOT NULL
      );
      CREATE TABLE router_states (
        account_id TEXT NOT NULL,
        project TEXT NOT NULL,
        workload TEXT NOT NULL,
        requested_model TEXT NOT NULL,
        state TEXT NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (account_id, project, workload, requested_model)
      );
      CREATE INDEX router_states_updated ON router_states (updated_at);
    `,
  },
  {
    id: '0009_measured_cost',
    sql: `
      ALTER TABLE traces ADD COLUMN engine_seconds REAL;
      ALTER TABLE traces ADD COLUMN measured_cost_usd REAL;
      ALTER TABLE rollups ADD COLUMN measured_calls INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE rollups ADD COLUMN measured_cost_usd REAL NOT NULL DEFAULT 0;
      ALTER TABLE rollups ADD COLUMN measured_tokens INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    // The router's measured prices: recent minutes with a measured cost, over every account.
    id: '0010_measured_minutes',
    sql: `CREATE INDEX rollups_measured_minute ON rollups (minute) WHERE measured_calls > 0;`,
  },
  {
    // Every call paid for this index, only the pruner read it: it now walks
    // traces_account_started one account at a time (sqlite-retention.ts).
    // Without it a stream call costs 2 % less CPU (docs/benchmarks.md).
    id: '0011_traces_pruned_by_account',
    sql: `DROP INDEX traces_started;`,
  },
  {
    // Routes and router states are polled by a revision the database gives every write
    // (routing-store.ts, Revised), never by updated_at, the writing process's clock. SQLite
    // runs one write transaction at a time, so a counter bumped inside the writing transaction
    // gives revisions in commit order. A counter row, not max(revision) + 1: a revision is
    // never given twice, even if the row that had the highest is deleted. The update trigger
    // runs for a write that left the revision as it was (every write of ours), not for its own
    // update of the revision.
    id: '0012_revisions',
    sql: `
      CREATE TABLE revisions (
        name TEXT PRIMARY KEY,
        value INTEGER NOT NULL
      );
      ALTER TABLE routes ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
      UPDATE routes SET revision = rowid;
      INSERT INTO revisions (name, value) SELECT 'routes', coalesce(max(revision), 0) FROM routes;
      CREATE INDEX routes_by_revision ON routes (revision);
      CREATE TRIGGER routes_revision_on_insert AFTER INSERT ON routes BEGIN
        UPDATE revisions SET value = value + 1 WHERE name = 'routes';
        UPDATE routes SET revision = (SELECT value FROM revisions WHERE name = 'routes') WHERE rowid = NEW.rowid;
      END;
      CREATE TRIGGER routes_revision_on_update AFTER UPDATE ON routes WHEN NEW.revision = OLD.revision BEGIN
        UPDATE revisions SET value = value + 1 WHERE name = 'routes';
        UPDATE routes SET revision = (SELECT value FROM revisions WHERE name = 'routes') WHERE rowid = NEW.rowid;
      END;
      ALTER TABLE router_states ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
      UPDATE router_states SET revision = rowid;
      INSERT INTO revisions (name, value) SELECT 'router_states', coalesce(max(revision), 0) FROM router_states;
      CREATE INDEX router_states_by_revision ON router_states (revision);
      CREATE TRIGGER router_states_revision_on_insert AFTER INSERT ON router_states BEGIN
        UPDATE revisions SET value = value + 1 WHERE name = 'router_states';
        UPDATE router_states SET revision = (SELECT value FROM revisions WHERE name = 'router_states') WHERE rowid = NEW.rowid;
      END;
      CREATE TRIGGER router_states_revision_on_update AFTER UPDATE ON router_states WHEN NEW.revision = OLD.revision BEGIN
        UPDATE revisions SET value = value + 1 WHERE name = 'router_states';
        UPDATE router_states SET revision = (SELECT value FROM revisions WHERE name = 'router_states') WHERE rowid = NEW.rowid;
      END;
    `,
  },
  {
    // Every upstream attempt of a call that made several (Trace.attempts), as JSON; null for one or none.
    id: '0013_trace_attempts',
    sql: `ALTER TABLE traces ADD COLUMN attempts TEXT;`,
  },
  {
    // Paired evidence (a column per cell of CandidateCounts.paired, from the list in
    // sql-routing-records.ts) and absolute-check counts; a route's certified shares as JSON;
    // why a call's model served it, and the share it was drawn for (Trace.routeReason, routeShare).
    id: '0014_paired_evidence_route_splits',
    sql: `
      ${pairedCells.map((cell) => `ALTER TABLE route_evidence ADD COLUMN ${cell.column} INTEGER NOT NULL DEFAULT 0;`).join('\n      ')}
      ALTER TABLE route_evidence ADD COLUMN constraints_evaluated INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE route_evidence ADD COLUMN constraints_passed INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE routes ADD COLUMN split TEXT;
      ALTER TABLE traces ADD COLUMN route_reason TEXT;
      ALTER TABLE traces ADD COLUMN route_share REAL;
    `,
  },
  {
    // Spend budgets and the response cache (budget-store.ts): the budgets of projects
    // (workload '') and workloads, per environment; the cache settings of projects and
    // workloads; the store ledger's rows, in integer micro-dollars, by cap id (the id names
    // the period), deleted once expired; a key's own caps; whether a call was answered
    // from the cache and what it saved, on its trace and summed in its rollup row. Old
    // traces read as not cached, saving nothing.
    id: '0015_budgets_cache',
    sql: `
      CREATE TABLE budgets (
        account_id TEXT NOT NULL,
        project TEXT NOT NULL,
        workload TEXT NOT NULL,
        environment TEXT NOT NULL CHECK (environment IN ('production', 'staging')),
        daily_usd REAL,
        monthly_usd REAL,
        alert_at REAL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (account_id, project, workload, environment)
      );
      CREATE TABLE cache_settings (
        account_id TEXT NOT NULL,
        project TEXT NOT NULL,
        workload TEXT NOT NULL,
        enabled INTEGER NOT NULL,
        ttl_seconds INTEGER NOT NULL,
        only_repeatable INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (account_id, project, workload)
      );
      CREATE TABLE budget_spend (
        cap_id TEXT PRIMARY KEY,
        spent_micros INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      );
      CREATE INDEX budget_spend_expiry ON budget_spend (expires_at);
      ALTER TABLE api_keys ADD COLUMN daily_budget_usd REAL;
      ALTER TABLE api_keys ADD COLUMN monthly_budget_usd REAL;
      ALTER TABLE traces ADD COLUMN cached INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE traces ADD COLUMN cost_saved_usd REAL;
      ALTER TABLE rollups ADD COLUMN cached_calls INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE rollups ADD COLUMN cost_saved_usd REAL NOT NULL DEFAULT 0;
    `,
  },
];

/**
 * Applies the migrations not yet recorded, all in one transaction; returns the
 * ids it applied. BEGIN IMMEDIATE takes the write lock before reading
 * `schema_migrations`, so two processes starting at once apply each migration
 * once: the second waits (busy_timeout), then finds nothing left to do.
 */
export function applyMigrations(database: SqliteDatabase, list: readonly Migration[] = migrations): string[] {
  const run = database.transaction((): string[] => {
    database.exec('CREATE TABLE IF NOT EXISTS schema_migrations (id TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)');
    const applied = new Set(database.prepare<[], string>('SELECT id FROM schema_migrations').pluck().all());
    const record = database.prepare<[string, number]>('INSERT INTO schema_migrations (id, applied_at) VALUES (?, ?)');
    const done: string[] = [];
    for (const migration of list) {
      if (applied.has(migration.id)) continue;
      database.exec(migration.sql);
      record.run(migration.id, Date.now());
      done.push(migration.id);
    }
    return done;
  });
  return run.immediate();
}
