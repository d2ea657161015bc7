/**
 * A newcomer's first start, as they meet it: `taskgate serve` on an empty
 * data directory. It fetches the recommended model while it already listens
 * (here from a local server standing in for the public download), says so on
 * `/readyz` and in its 503s, and answers once the file is in place; offline or
 * told not to, it starts anyway and says in one block how to fetch the model.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findDefaultModel } from '../src/catalog/default-models.js';
import { closedPort } from './helpers/file-server.js';
import { startModelCatalogServer, type ModelCatalogServer } from './helpers/model-catalog-server.js';
import { serveTaskgate, type ServingProcess } from './helpers/taskgate-process.js';
import { temporaryDirectory } from './helpers/temporary-directory.js';
import { eventually } from './helpers/eventually.js';

let catalog: ModelCatalogServer;
beforeAll(async () => {
  catalog = await startModelCatalogServer();
});
afterAll(async () => {
  await catalog?.close();
});

const origin = (server: ServingProcess) => server.baseUrl.replace(/\/v1$/, '');
const adminKeyOf = (server: ServingProcess) => eventually(() => /\n(tg_live_\S+)\n/.exec(server.stdout())?.[1], 'the admin key');

async function stop(server: ServingProcess): Promise<number | null> {
  server.child.kill('SIGTERM');
  return server.exited;
}

async function chat(server: ServingProcess, key: string): Promise<Response> {
  return fetch(`${server.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: catalog.model.id, messages: [{ role: 'user', content: 'Hi' }] }),
  });
}

describe('first start with no model on disk', () => {
  it('fetches the recommended model while listening, reports the download, resumes after a restart, then answers', async () => {
    const dataDirectory = temporaryDirectory('taskgate-first-');
    const environment = { TASKGATE_OFFLINE: '0', TASKGATE_MODEL_CATALOG: catalog.catalogPath };
    catalog.files.switches.stallAfterBytes = Math.floor(catalog.model.sizeBytes / 2);
    const first = await serveTaskgate(['--data-dir', dataDirectory], environment);
    try {
      const key = await adminKeyOf(first);
      const ready = await eventually(async () => {
        const response = await fetch(`${origin(first)}/readyz`);
        const body = (await response.json()) as { ready: boolean; reason: string | null };
        return body.reason?.includes('downloading') === true ? { status: response.status, body } : undefined;
      }, 'the download to show on /readyz');
      expect(ready.status).toBe(503);
      expect(ready.body.reason).toMatch(
        new RegExp(`no model can answer yet \\(${catalog.model.id.replace(/\./g, '\\.')}: .*downloading, \\d+%`),
      );
      expect((await fetch(`${origin(first)}/healthz`)).status).toBe(200);

      const waiting = await chat(first, key);
      expect(waiting.status).toBe(503);
      expect(waiting.headers.get('retry-after')).toBe('10');
      expect(waiting.headers.get('x-should-retry')).toBeNull();
      expect(((await waiting.json()) as { error: { code: string; message: string } }).error).toMatchObject({
        code: 'model_downloading',
        message: expect.stringContaining('downloading'),
      });
      expect(first.stderr()).toContain(`fetching ${catalog.model.id} (`);
    } finally {
      expect(await stop(first)).toBe(0);
    }
    const partPath = join(dataDirectory, 'models', `${catalog.model.file}.part`);
    const kept = statSync(partPath).size;
    expect(kept).toBe(Math.floor(catalog.model.sizeBytes / 2));

    // The next start picks the download up where it stopped, verifies it, and the model answers.
    catalog.files.switches.stallAfterBytes = null;
    const second = await serveTaskgate(['--data-dir', dataDirectory], environment);
    try {
      expect(second.stdout()).not.toContain('tg_live_');
      await eventually(() => (second.stderr().includes(`${catalog.model.id} is ready`) ? true : undefined), 'the model to be ready');
      expect(catalog.files.requests.filter((request) => request.path === catalog.path).at(-1)).toMatchObject({
        range: `bytes=${kept}-`,
        status: 206,
      });
      expect(second.stderr()).toMatch(new RegExp(`${catalog.model.file.replace(/\./g, '\\.')}: 100%`));
      expect(existsSync(partPath)).toBe(false);
      const readiness = await fetch(`${origin(second)}/readyz`);
      expect(readiness.status).toBe(200);
      expect(((await readiness.json()) as { models: { available: string[] } }).models.available).toEqual([catalog.model.id]);

      const key = (/\n(tg_live_\S+)\n/.exec(first.stdout()) as RegExpExecArray)[1] as string;
      const client = new OpenAI({ apiKey: key, baseURL: second.baseUrl, maxRetries: 0 });
      const reply = await client.chat.completions.create({ model: catalog.model.id, messages: [{ role: 'user', content: 'Hi' }] });
      expect(reply.model).toBe(catalog.model.id);
      expect(reply.choices[0]?.message.content).toBe(catalog.answer);
    } finally {
      expect(await stop(second)).toBe(0);
    }
  });

  it('offline, starts anyway and prints one block with the exact command, the size and where the file goes', async () => {
    const dataDirectory = temporaryDirectory('taskgate-offline-');
    const recommended = findDefaultModel('qwen2.5-0.5b-instruct')!;
    const server = await serveTaskgate(['--data-dir', dataDirectory], { TASKGATE_OFFLINE: '1' });
    try {
      const key = await adminKeyOf(server);
      const block = await eventually(() => (server.stderr().includes('Fetch it later with') ? server.stderr() : undefined), 'the block');
      expect(block).toContain('no model is on disk, and TASKGATE_OFFLINE=1 says not to fetch one');
      expect(block).toContain(`Fetch it later with:  npx taskgate models pull qwen2.5-0.5b-instruct --data-dir ${dataDirectory}`);
      expect(block).toContain(`Size:                 491.4 MB (${recommended.file})`);
      expect(block).toContain(`It goes to:           ${join(dataDirectory, 'models', recommended.file)}`);
      expect(block).not.toContain('Downloading');

      const readiness = await fetch(`${origin(server)}/readyz`);
      expect(readiness.status).toBe(503);
      const report = (await readiness.json()) as {
        ready: boolean;
        reason: string;
        models: { available: string[]; unavailable: Record<string, string> };
      };
      expect(report).toMatchObject({ ready: false, models: { available: [] } });
      expect(report.reason).toContain('taskgate models pull');
      expect(Object.keys(report.models.unavailable)).toHaveLength(8);

      // The stock SDK retries 503s with backoff, but not this one: x-should-retry is false.
      const client = new OpenAI({ apiKey: key, baseURL: server.baseUrl, maxRetries: 2 });
      const failure = await client.chat.completions
        .create({ model: 'qwen2.5-0.5b-instruct', messages: [{ role: 'user', content: 'Hi' }] })
        .then(
          () => null,
          (error: unknown) => error,
        );
      expect(failure).toBeInstanceOf(OpenAI.APIError);
      expect((failure as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
      expect((failure as InstanceType<typeof OpenAI.APIError>).code).toBe('model_not_downloaded');
      expect((failure as InstanceType<typeof OpenAI.APIError>).headers?.get('x-should-retry')).toBe('false');
      // One call reached taskgate (the request counter moves with each call, before its trace is written).
      const metrics = await (await fetch(`${origin(server)}/metrics`, { headers: { authorization: `Bearer ${key}` } })).text();
      const calls = metrics
        .split('\n')
        .filter((line) => line.startsWith('taskgate_requests_total{'))
        .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
      expect(calls).toBe(1);
    } finally {
      expect(await stop(server)).toBe(0);
    }
  });

  it('with --no-pull, or when the download cannot start, still serves and says how to fetch the model later', async () => {
    const requestsBefore = catalog.files.requests.length;
    const skipped = await serveTaskgate(['--data-dir', temporaryDirectory('taskgate-no-pull-'), '--no-pull'], {
      TASKGATE_OFFLINE: '0',
      TASKGATE_MODEL_CATALOG: catalog.catalogPath,
    });
    try {
      await eventually(() => (skipped.stderr().includes('Fetch it later with') ? true : undefined), 'the block');
      expect(skipped.stderr()).toContain('no model is on disk, and --no-pull says not to fetch one');
    } finally {
      expect(await stop(skipped)).toBe(0);
    }
    expect(catalog.files.requests.length).toBe(requestsBefore);

    const unreachable = await startModelCatalogServer({ url: `http://127.0.0.1:${await closedPort()}/model.gguf` });
    const dataDirectory = temporaryDirectory('taskgate-unreachable-');
    const server = await serveTaskgate(['--data-dir', dataDirectory], {
      TASKGATE_OFFLINE: '0',
      TASKGATE_MODEL_CATALOG: unreachable.catalogPath,
    });
    try {
      const block = await eventually(() => (server.stderr().includes('Fetch it later with') ? server.stderr() : undefined), 'the block');
      expect(block).toMatch(/could not fetch qwen2\.5-0\.5b-instruct: cannot reach 127\.0\.0\.1:\d+: connection refused/);
      expect(block).toContain(`npx taskgate models pull qwen2.5-0.5b-instruct --data-dir ${dataDirectory}`);
      expect((await fetch(`${origin(server)}/healthz`)).status).toBe(200);
      expect((await fetch(`${origin(server)}/readyz`)).status).toBe(503);
    } finally {
      expect(await stop(server)).toBe(0);
      await unreachable.close();
    }
  });
});
