/**
 * Loads the settings once, at the composition root: the YAML config file with
 * `${ENV}` interpolation, then the command-line flags and environment variables
 * that override it. This is the only module that reads the environment.
 */
import type { StoreLocation } from '../store/open-store.js';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import type { z } from 'zod';
import { parseModelCatalog } from '../catalog/catalog-file.js';
import { DEFAULT_MODELS, type DefaultModel } from '../catalog/default-models.js';
import { createConfigSchema, type Config } from './config-schema.js';
import { defaultConfigDocument } from './default-config.js';
import { telemetrySettings } from './telemetry-settings.js';
import type { TelemetrySettings } from '../telemetry/telemetry.js';

export class ConfigError extends Error {
  constructor(
    message: string,
    /** One line per problem, each starting with the path it is about. */
    readonly problems: string[] = [],
  ) {
    super(problems.length === 0 ? message : `${message}\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export interface Settings {
  config: Config;
  /** Where the config came from, for the start-up log; null for the built-in default. */
  configPath: string | null;
  dataDirectory: string;
  host: string;
  port: number;
  /** `TASKGATE_ADMIN_KEY`: the bootstrap admin key of account `default`, if set. */
  adminKey: string | null;
  /** Where `dataDirectory` came from, so commands can say which one they opened. */
  dataDirectorySource: '--data-dir' | 'TASKGATE_DATA_DIR' | 'default';
  /** The store: SQLite (from `store:` or the data dir) or PostgreSQL (`store:` or `TASKGATE_DATABASE_URL`). */
  store: StoreLocation;
  /** Where rate limits live: this process, or Redis (`limits.backend` or `TASKGATE_REDIS_URL`). */
  limits: LimitsLocation;
  /** The models the CPU engine knows how to fetch: the built-in catalog, or `TASKGATE_MODEL_CATALOG`. */
  catalog: readonly DefaultModel[];
  /** `TASKGATE_OFFLINE=1`: never download anything unasked (the first start's model). */
  offline: boolean;
  /** Where spans are exported (`telemetry.otlp` and the `OTEL_*` variables, `telemetry-settings.ts`); null when off. */
  telemetry: TelemetrySettings | null;
}

export type LimitsLocation = { type: 'memory' } | { type: 'redis'; url: string };

export interface SettingsOverrides {
  configPath?: string;
  port?: number;
  host?: string;
  dataDirectory?: string;
}

type Environment = Readonly<Record<string, string | undefined>>;

const reference = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;
const wholeReference = new RegExp(`^${reference.source}$`);

/** Replaces `${NAME}` and `${NAME:-fallback}` inside string values (never keys), naming the path of a missing variable. */
export function interpolateEnvironment(value: unknown, environment: Environment, path: string[] = []): unknown {
  if (typeof value === 'string') {
    const replaced = value.replace(reference, (_match, name: string, fallback?: string) => {
      const found = environment[name];
      if (found !== undefined && found !== '') return found;
      if (fallback !== undefined) return fallback;
      throw new ConfigError('Invalid config', [`${formatPath(path)}: environment variable ${name} is not set`]);
    });
    // A value that is one whole reference takes the type its text spells (`port: ${PORT}` is a number).
    if (replaced === value || !wholeReference.test(value)) return replaced;
    if (/^-?\d+(\.\d+)?$/.test(replaced)) return Number(replaced);
    if (replaced === 'true' || replaced === 'false') return replaced === 'true';
    return replaced;
  }
  if (Array.isArray(value)) return value.map((item, index) => interpolateEnvironment(item, environment, [...path, String(index)]));
  if (value !== null && typeof value === 'object') {
    const result: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      Object.defineProperty(result, key, {
        value: interpolateEnvironment(item, environment, [...path, key]),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return result;
  }
  return value;
}

/** Parses and validates config text; throws `ConfigError` listing every problem by path. */
export function parseConfig(
  text: string,
  environment: Environment,
  source = 'config',
  catalog: readonly DefaultModel[] = DEFAULT_MODELS,
): Config {
  let document: unknown;
  try {
    document = parseYaml(text, { uniqueKeys: true }) ?? {};
  } catch (error) {
    const detail = error instanceof YAMLParseError ? error.message : String(error);
    throw new ConfigError(`Invalid config ${source}: not valid YAML`, [detail]);
  }
  return validateConfig(interpolateEnvironment(document, environment), source, catalog);
}

/** Validates a config document (parsed YAML, or the built-in default). */
export function validateConfig(document: unknown, source: string, catalog: readonly DefaultModel[] = DEFAULT_MODELS): Config {
  const result = createConfigSchema(catalog).safeParse(document);
  if (!result.success) throw new ConfigError(`Invalid config ${source}`, result.error.issues.map(describeIssue));
  return result.data;
}

export function loadSettings(overrides: SettingsOverrides, environment: Environment): Settings {
  const catalog = loadModelCatalog(nonEmpty(environment.TASKGATE_MODEL_CATALOG));
  const configPath = overrides.configPath ?? nonEmpty(environment.TASKGATE_CONFIG) ?? null;
  let config: Config;
  if (configPath === null) {
    config = validateConfig(defaultConfigDocument(catalog), '(built-in default)', catalog);
  } else {
    config = parseConfig(readText(configPath, 'config file'), environment, configPath, catalog);
  }

  const fromEnvironment = nonEmpty(environment.TASKGATE_DATA_DIR);
  const dataDirectorySource =
    overrides.dataDirectory !== undefined ? '--data-dir' : fromEnvironment !== undefined ? 'TASKGATE_DATA_DIR' : 'default';
  const dataDirectory = resolve(overrides.dataDirectory ?? fromEnvironment ?? '.taskgate');
  const port = overrides.port ?? parsePort(environment.PORT) ?? config.server.port;
  const adminKey = nonEmpty(environment.TASKGATE_ADMIN_KEY) ?? null;
  if (adminKey !== null && !/^[\x21-\x7e]{20,512}$/.test(adminKey)) {
    throw new ConfigError('TASKGATE_ADMIN_KEY must be 20 to 512 printable characters without spaces');
  }
  const offline = parseFlag(environment.TASKGATE_OFFLINE, 'TASKGATE_OFFLINE');
  const store = storeLocation(config, dataDirectory, nonEmpty(environment.TASKGATE_DATABASE_URL));
  const limits = limitsLocation(config, nonEmpty(environment.TASKGATE_REDIS_URL));
  const telemetry = telemetrySettings(config, environment);
  return {
    config,
    configPath,
    dataDirectory,
    dataDirectorySource,
    host: overrides.host ?? config.server.host,
    port,
    adminKey,
    store,
    limits,
    catalog,
    offline,
    telemetry,
  };
}

function readText(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`Cannot read ${what} ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
}

/** The built-in catalog, or the JSON file `TASKGATE_MODEL_CATALOG` names (`src/catalog/catalog-file.ts`). */
function loadModelCatalog(path: string | undefined): readonly DefaultModel[] {
  if (path === undefined) return DEFAULT_MODELS;
  let document: unknown;
  try {
    document = JSON.parse(readText(path, 'TASKGATE_MODEL_CATALOG'));
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(`Invalid model catalog ${path}: not valid JSON`, [error instanceof Error ? error.message : String(error)]);
  }
  const parsed = parseModelCatalog(document);
  if ('problems' in parsed) throw new ConfigError(`Invalid model catalog ${path}`, parsed.problems);
  return parsed.models;
}

function parseFlag(text: string | undefined, name: string): boolean {
  if (text === undefined || text === '' || text === '0' || text === 'false') return false;
  if (text === '1' || text === 'true') return true;
  throw new ConfigError(`${name} must be 1 or 0, got "${text}"`);
}

/** `TASKGATE_DATABASE_URL` over `store:` over the data directory's SQLite file. */
export function storeLocation(config: Config, dataDirectory: string, databaseUrl: string | undefined): StoreLocation {
  const poolSize = typeof config.store === 'object' && config.store.type === 'postgres' ? config.store.pool_size : 10;
  if (databaseUrl !== undefined) {
    if (!/^postgres(ql)?:\/\//.test(databaseUrl)) throw new ConfigError('TASKGATE_DATABASE_URL must be a postgres:// URL');
    return { type: 'postgres', url: databaseUrl, poolSize };
  }
  const store = config.store;
  if (store === undefined) return { type: 'sqlite', path: resolve(dataDirectory, 'taskgate.db') };
  if (typeof store === 'string') return { type: 'sqlite', path: sqlitePath(store.slice('sqlite:'.length)) };
  return store.type === 'sqlite' ? { type: 'sqlite', path: sqlitePath(store.url) } : { type: 'postgres', url: store.url, poolSize };
}

function sqlitePath(path: string): string {
  return path === ':memory:' ? path : resolve(path);
}

/** `TASKGATE_REDIS_URL` over `limits.backend`. */
function limitsLocation(config: Config, redisUrl: string | undefined): LimitsLocation {
  if (redisUrl !== undefined) {
    if (!/^rediss?:\/\//.test(redisUrl)) throw new ConfigError('TASKGATE_REDIS_URL must be a redis:// or rediss:// URL');
    return { type: 'redis', url: redisUrl };
  }
  return config.limits.backend;
}

function parsePort(text: string | undefined): number | undefined {
  if (text === undefined || text === '') return undefined;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new ConfigError(`PORT must be an integer 0-65535, got "${text}"`);
  return port;
}

function nonEmpty(text: string | undefined): string | undefined {
  return text === undefined || text === '' ? undefined : text;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const where = formatPath(issue.path.map(String));
  if (issue.code === 'unrecognized_keys')
    return `${where}: unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => `"${key}"`).join(', ')}`;
  return `${where}: ${issue.message}`;
}

function formatPath(path: readonly string[]): string {
  if (path.length === 0) return '(top level)';
  return path.map((part, index) => (/^\d+$/.test(part) ? `[${part}]` : index === 0 ? part : `.${part}`)).join('');
}
