/**
 * The CLI's client for a running taskgate: `--url` (env TASKGATE_URL, default
 * http://127.0.0.1:8080) and `--key` (env TASKGATE_KEY, else
 * TASKGATE_ADMIN_KEY). Commands that read or change live state (routes, eval
 * contracts) go through the API, so the server's caches stay right.
 */
import { CliError } from './cli-error.js';

export const apiOptions = { url: { type: 'string' }, key: { type: 'string' } } as const;

export const apiOptionsHelp = `  --url URL        taskgate's address (env TASKGATE_URL; default http://127.0.0.1:8080)
  --key KEY        an API key of the account (env TASKGATE_KEY, else TASKGATE_ADMIN_KEY)`;

/** `--project`, or `default`, said on stderr so nobody wonders where their workloads went. */
export function projectOf(values: { project?: string }): string {
  if (values.project !== undefined) return values.project;
  process.stderr.write('taskgate: project "default" (no --project given)\n');
  return 'default';
}

export interface ApiClient {
  request(method: string, path: string, body?: unknown): Promise<Record<string, unknown>>;
}

export function createApiClient(values: { url?: string; key?: string }, environment: NodeJS.ProcessEnv): ApiClient {
  const origin = (values.url ?? environment.TASKGATE_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '').replace(/\/v1$/, '');
  const key = values.key ?? (environment.TASKGATE_KEY || undefined) ?? (environment.TASKGATE_ADMIN_KEY || undefined);
  if (key === undefined) throw new CliError('no API key: pass --key or set TASKGATE_KEY');
  return {
    async request(method, path, body) {
      let response: Response;
      try {
        response = await fetch(`${origin}/v1${path}`, {
          method,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      } catch (error) {
        throw new CliError(
          `cannot reach taskgate at ${origin}: ${error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error)}`,
        );
      }
      const text = await response.text();
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(text) as Record<string, unknown>;
      } catch {
        throw new CliError(`${origin} answered ${response.status} with something that is not JSON`);
      }
      if (!response.ok) {
        const error = parsed.error as { message?: string } | undefined;
        throw new CliError(`${response.status}: ${error?.message ?? text}`);
      }
      return parsed;
    },
  };
}
