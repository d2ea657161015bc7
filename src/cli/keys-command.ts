import { DEFAULT_ACCOUNT, issueKey } from '../auth/key-issuer.js';
import { loadSettings } from '../config/load-config.js';
import { openStore } from '../store/open-store.js';
import type { Store } from '../store/store.js';
import { CliError, UsageError } from './cli-error.js';
import { openDataDirectory } from './data-directory.js';
import { formatTable } from './format-table.js';
import { asksForHelp, parseCommand, parseInteger } from './parse-command.js';

export const keysUsage = `Usage: taskgate keys <command> [options]

Commands:
  create --env production|staging [--account A] [--name N] [--rpm N] [--tpm N] [--role inference|admin]
           issue a key; the key text is printed once, alone on the last line.
           --rpm and --tpm: the key's own requests and tokens per minute
           (default: limits.requests_per_minute and limits.tokens_per_minute)
  list   [--account A]                 list keys (never their text)
  revoke KEY_ID [--account A]          revoke a key; it stops working within a second

Common options:
  --config FILE    config file (env TASKGATE_CONFIG); its store: setting is used
  --data-dir DIR   data directory (env TASKGATE_DATA_DIR; default ./.taskgate)
  -h, --help       show this help`;

const commonOptions = { config: { type: 'string' }, 'data-dir': { type: 'string' }, account: { type: 'string' } } as const;

export async function keysCommand(argv: string[], environment: NodeJS.ProcessEnv): Promise<void> {
  const [subcommand, ...rest] = argv;
  if (asksForHelp(subcommand)) {
    process.stdout.write(`${keysUsage}\n`);
    return;
  }
  if (subcommand === 'create') return create(rest, environment);
  if (subcommand === 'list') return list(rest, environment);
  if (subcommand === 'revoke') return revoke(rest, environment);
  throw new UsageError(`Unknown keys command "${subcommand}"`, keysUsage);
}

async function withStore<T>(
  values: { config?: string; 'data-dir'?: string },
  environment: NodeJS.ProcessEnv,
  work: (store: Store) => Promise<T>,
): Promise<T> {
  const settings = loadSettings({ configPath: values.config, dataDirectory: values['data-dir'] }, environment);
  openDataDirectory(settings);
  const store = await openStore(settings.store);
  try {
    await store.migrate();
    return await work(store);
  } finally {
    await store.close();
  }
}

async function create(argv: string[], environment: NodeJS.ProcessEnv): Promise<void> {
  const { values, help } = parseCommand(
    argv,
    {
      ...commonOptions,
      env: { type: 'string' },
      name: { type: 'string' },
      rpm: { type: 'string' },
      tpm: { type: 'string' },
      role: { type: 'string' },
    },
    keysUsage,
  );
  if (help) return void process.stdout.write(`${keysUsage}\n`);
  if (values.env !== 'production' && values.env !== 'staging') throw new UsageError('--env must be production or staging', keysUsage);
  const role = values.role ?? 'inference';
  if (role !== 'inference' && role !== 'admin') throw new UsageError('--role must be inference or admin', keysUsage);
  const requestsPerMinute = parseInteger(values.rpm, '--rpm', keysUsage, 1, 1_000_000) ?? null;
  const tokensPerMinute = parseInteger(values.tpm, '--tpm', keysUsage, 1, 1_000_000_000) ?? null;
  const keyEnvironment = values.env;
  await withStore(values, environment, async (store) => {
    const account = await store.accounts.ensureAccount(values.account ?? DEFAULT_ACCOUNT);
    const { key, text } = await issueKey(store.accounts, {
      accountId: account.id,
      environment: keyEnvironment,
      role,
      name: values.name ?? null,
      requestsPerMinute,
      tokensPerMinute,
    });
    process.stdout.write(
      `Created ${key.environment} ${key.role} key ${key.id} for account "${account.name}". It is shown only this once:\n${text}\n`,
    );
  });
}

async function list(argv: string[], environment: NodeJS.ProcessEnv): Promise<void> {
  const { values, help } = parseCommand(argv, commonOptions, keysUsage);
  if (help) return void process.stdout.write(`${keysUsage}\n`);
  await withStore(values, environment, async (store) => {
    const account = await store.accounts.ensureAccount(values.account ?? DEFAULT_ACCOUNT);
    const rows = [['ID', 'PREFIX', 'ENV', 'ROLE', 'RPM', 'TPM', 'NAME', 'CREATED', 'LAST USED', 'REVOKED']];
    let cursor: string | null = null;
    do {
      const page = await store.accounts.listKeys(account.id, { limit: 100, cursor });
      for (const key of page.items) {
        rows.push([
          key.id,
          key.displayPrefix,
          key.environment,
          key.role,
          rate(key.requestsPerMinute),
          rate(key.tokensPerMinute),
          key.name ?? '-',
          time(key.createdAt),
          time(key.lastUsedAt),
          time(key.revokedAt),
        ]);
      }
      cursor = page.nextCursor;
    } while (cursor !== null);
    process.stdout.write(`${formatTable(rows)}\n`);
  });
}

async function revoke(argv: string[], environment: NodeJS.ProcessEnv): Promise<void> {
  const { values, positionals, help } = parseCommand(argv, commonOptions, keysUsage, true);
  if (help) return void process.stdout.write(`${keysUsage}\n`);
  if (positionals.length !== 1) throw new UsageError('revoke takes exactly one KEY_ID', keysUsage);
  const keyId = positionals[0] as string;
  await withStore(values, environment, async (store) => {
    const account = await store.accounts.ensureAccount(values.account ?? DEFAULT_ACCOUNT);
    if (!(await store.accounts.revokeKey(account.id, keyId, Date.now())))
      throw new CliError(`No active key ${keyId} in account "${account.name}".`);
    process.stdout.write(`Revoked ${keyId}.\n`);
  });
}

/** A key's own rate, or `-` for the configured default. */
function rate(perMinute: number | null): string {
  return perMinute === null ? '-' : String(perMinute);
}

function time(milliseconds: number | null): string {
  return milliseconds === null ? '-' : new Date(milliseconds).toISOString().slice(0, 19).replace('T', ' ');
}
