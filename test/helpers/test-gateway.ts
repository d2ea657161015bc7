/**
 * Starts the real gateway in this process on a loopback port, with a config
 * naming the given engines, a fresh SQLite file, and every log line captured,
 * so tests can drive it with the stock `openai` client and inspect its store
 * and logs.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { issueKey } from '../../src/auth/key-issuer.js';
import { parseConfig, type LimitsLocation, type Settings } from '../../src/config/load-config.js';
import { telemetrySettings } from '../../src/config/telemetry-settings.js';
import { createLogger } from '../../src/log/logger.js';
import { DEFAULT_MODELS } from '../../src/catalog/default-models.js';
import { startTaskgate, type Taskgate } from '../../src/main.js';
import { openStore } from '../../src/store/open-store.js';
import type { Environment, KeyRole, Store, Trace } from '../../src/store/store.js';
import { temporaryDirectory } from './temporary-directory.js';

export const ADMIN_KEY = 'tg_test_admin_key_for_integration_tests_0123456789';

export interface TestGateway {
  gateway: Taskgate;
  baseUrl: string;
  /** Root URL without `/v1`. */
  origin: string;
  /** The SQLite file of its store (another gateway can share it: `shareStoreWith`). */
  storePath: string;
  adminKey: string;
  logLines: string[];
  client(key?: string, options?: { maxRetries?: number; timeout?: number }): OpenAI;
  createKey(options?: {
    environment?: Environment;
    role?: KeyRole;
    requestsPerMinute?: number;
    tokensPerMinute?: number;
    account?: string;
  }): Promise<{ id: string; text: string }>;
  /** Waits for the trace writer, then returns the traces of the default account (newest first). */
  traces(accountName?: string): Promise<Trace[]>;
  /** The trace of one request id (after flushing the writer). */
  traceOf(requestId: string | null): Promise<Trace | undefined>;
  /** A raw `POST /v1/chat/completions` (JSON-encoded unless a string), for what the SDK would hide. */
  postChat(body: unknown, options?: { key?: string; headers?: Record<string, string>; signal?: AbortSignal }): Promise<Response>;
  stop(): Promise<void>;
}

export interface TestGatewayOptions {
  /** Puts a double around the real SQLite store, e.g. one that refuses writes (`refusing-store.ts`). */
  wrapStore?: (store: Store) => Store;
  /** Where the rate limits live (`Settings.limits`); default this process's memory. */
  limits?: LimitsLocation;
  /** Serve from another test gateway's store, as a second process of one fleet would (stop this one first). */
  shareStoreWith?: TestGateway;
}

/** `configYaml` is a taskgate config; `${NAME}` is interpolated from `variables`, which also stand for the environment's `OTEL_*` variables. */
export async function startTestGateway(
  configYaml = '',
  variables: Record<string, string> = {},
  options: TestGatewayOptions = {},
): Promise<TestGateway> {
  const directory = temporaryDirectory('taskgate-test-');
  const config = parseConfig(configYaml, variables, 'test config');
  const logLines: string[] = [];
  const logger = createLogger({ level: 'debug', write: (line) => void logLines.push(line) });
  const settings: Settings = {
    config,
    configPath: null,
    dataDirectory: directory,
    dataDirectorySource: '--data-dir',
    host: '127.0.0.1',
    port: 0,
    adminKey: ADMIN_KEY,
    store: { type: 'sqlite', path: options.shareStoreWith?.storePath ?? join(directory, 'taskgate.db') },
    limits: options.limits ?? { type: 'memory' },
    catalog: DEFAULT_MODELS,
    offline: true,
    telemetry: telemetrySettings(config, variables),
  };
  const gateway = await startTaskgate(settings, logger, { store: options.wrapStore?.(await openStore(settings.store)) });
  const origin = `http://127.0.0.1:${gateway.port}`;
  let stopped = false;
  async function traces(accountName = 'default'): Promise<Trace[]> {
    await gateway.traces.flush();
    const account = await gateway.store.accounts.ensureAccount(accountName);
    return (await gateway.store.traces.list(account.id, {}, { limit: 100 })).items;
  }

  return {
    gateway,
    baseUrl: gateway.baseUrl,
    origin,
    storePath: (settings.store as { path: string }).path,
    adminKey: ADMIN_KEY,
    logLines,
    client: (key = ADMIN_KEY, options = {}) =>
      new OpenAI({ apiKey: key, baseURL: gateway.baseUrl, maxRetries: options.maxRetries ?? 0, timeout: options.timeout ?? 15_000 }),
    async createKey(options = {}) {
      const account = await gateway.store.accounts.ensureAccount(options.account ?? 'default');
      const { key, text } = await issueKey(gateway.store.accounts, {
        accountId: account.id,
        environment: options.environment ?? 'production',
        role: options.role ?? 'inference',
        requestsPerMinute: options.requestsPerMinute ?? null,
        tokensPerMinute: options.tokensPerMinute ?? null,
      });
      return { id: key.id, text };
    },
    traces,
    async traceOf(requestId) {
      return (await traces()).find((trace) => trace.requestId === requestId);
    },
    postChat(body, options = {}) {
      return fetch(`${gateway.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${options.key ?? ADMIN_KEY}`, 'content-type': 'application/json', ...options.headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
        signal: options.signal,
      });
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await gateway.stop();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** A config with one `openai` engine per URL and one model per engine (`model-0`, `model-1`, …), or one model on all of them as replicas. */
export function engineConfig(
  baseUrls: string[],
  options: { replicas?: boolean; timeoutMs?: number; idleTimeoutMs?: number; extra?: string } = {},
): string {
  const engines = baseUrls
    .map(
      (url, index) =>
        `  - { id: engine-${index}, type: openai, base_url: "${url}", connect_timeout_ms: 2000, timeout_ms: ${options.timeoutMs ?? 10_000}, idle_timeout_ms: ${options.idleTimeoutMs ?? 10_000} }`,
    )
    .join('\n');
  const models = options.replicas
    ? `  - id: model-0
    provider: acme
    aliases: [Acme/Model-Zero]
    served_by: [${baseUrls.map((_, index) => `{ engine: engine-${index}, name: upstream-0 }`).join(', ')}]
    price: { input: 1, output: 2 }
    context_window: 8192
    supports: [tools, json]`
    : baseUrls
        .map(
          (_, index) => `  - id: model-${index}
    provider: acme
    aliases: [Acme/Model-${index}]
    served_by: [{ engine: engine-${index}, name: upstream-${index} }]
    price: { input: 1, output: 2 }
    context_window: 8192
    supports: [tools, json]`,
        )
        .join('\n');
  return `engines:\n${engines}\nmodels:\n${models}\n${options.extra ?? ''}`;
}
