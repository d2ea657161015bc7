/** The `taskgate` command as a user runs it. */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MODELS } from '../src/catalog/default-models.js';
import { runTaskgate, serveTaskgate } from './helpers/taskgate-process.js';
import { TINY_ANSWERS, writeAnsweringModel } from './helpers/tiny-models.js';
import { temporaryDirectory } from './helpers/temporary-directory.js';

const freshDirectory = () => temporaryDirectory('taskgate-cli-');

describe('help and usage', () => {
  it.each([
    [['--help']],
    [['serve', '--help']],
    [['keys', '--help']],
    [['keys', 'create', '--help']],
    [['routes', '--help']],
    [['evals', '--help']],
    [['evals', 'get', '--help']],
    [['stats', '--help']],
    [['traces', '--help']],
  ])('%j prints usage and exits 0', (args) => {
    const result = runTaskgate(args);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/Usage: taskgate/);
  });

  it('--version prints the version of package.json', () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    for (const flag of ['--version', '-v']) {
      const result = runTaskgate([flag]);
      expect(result.status).toBe(0);
      expect(result.stdout).toBe(`taskgate ${version}\n`);
    }
    expect(runTaskgate(['--help']).stdout).toContain('taskgate --version');
  });

  it('an unknown command or flag is a usage error on stderr', () => {
    const unknown = runTaskgate(['frobnicate']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('Unknown command "frobnicate"');
    const flag = runTaskgate(['serve', '--colour']);
    expect(flag.status).toBe(2);
    expect(flag.stderr).toContain('--colour');
    expect(flag.stdout).toBe('');
  });
});

describe('keys', () => {
  it('creates, lists and revokes keys, printing the key alone on the last line', () => {
    const directory = freshDirectory();
    const created = runTaskgate(['keys', 'create', '--env', 'staging', '--name', 'ci', '--rpm', '30', '--data-dir', directory]);
    expect(created.status).toBe(0);
    const lines = created.stdout.trimEnd().split('\n');
    const key = lines.at(-1) as string;
    expect(key).toMatch(/^tg_test_[A-Za-z0-9_-]{43}$/);
    const keyId = /key (key_\S+)/.exec(created.stdout)?.[1] as string;

    const listed = runTaskgate(['keys', 'list', '--data-dir', directory]);
    expect(listed.status).toBe(0);
    expect(listed.stdout).toContain(keyId);
    expect(listed.stdout).toContain('staging');
    expect(listed.stdout).not.toContain(key);

    expect(runTaskgate(['keys', 'revoke', keyId, '--data-dir', directory]).status).toBe(0);
    const again = runTaskgate(['keys', 'revoke', keyId, '--data-dir', directory]);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain(keyId);
  });

  it('says which data directory it opened, and where that came from', () => {
    const directory = freshDirectory();
    const flagged = runTaskgate(['keys', 'list', '--data-dir', join(directory, 'a')]);
    expect(flagged.stderr).toContain(`taskgate: data directory ${join(directory, 'a')} (--data-dir)`);
    const fromEnvironment = runTaskgate(['models', 'list'], { TASKGATE_DATA_DIR: join(directory, 'b') });
    expect(fromEnvironment.stderr).toContain(`taskgate: data directory ${join(directory, 'b')} (TASKGATE_DATA_DIR)`);
    const created = runTaskgate(['keys', 'create', '--env', 'production'], {}, { cwd: directory });
    expect(created.stderr).toContain(`taskgate: data directory ${join(directory, '.taskgate')} (the default, ./.taskgate)`);
    expect(created.stdout.trimEnd().split('\n').at(-1)).toMatch(/^tg_live_/);
  });

  it('refuses a create without a valid --env', () => {
    const result = runTaskgate(['keys', 'create', '--data-dir', freshDirectory()]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('--env');
  });
});

describe('config', () => {
  it('refuses to start on a bad config, naming every bad path', () => {
    const directory = freshDirectory();
    const configPath = join(directory, 'bad.yaml');
    writeFileSync(
      configPath,
      `engines:
  - { id: gpu, type: openai, base_url: "not a url" }
models:
  - { id: m, served_by: [{ engine: nowhere }], price: { input: -1, output: 1 }, context_window: 10, colour: blue }`,
    );
    const result = runTaskgate(['serve', '--config', configPath, '--data-dir', directory, '--port', '0']);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('engines[0].base_url');
    expect(result.stderr).toContain('models[0].served_by[0].engine');
    expect(result.stderr).toContain('models[0].price.input');
    expect(result.stderr).toContain('unknown key "colour"');
  });

  it('names a missing environment variable by its path', () => {
    const directory = freshDirectory();
    const configPath = join(directory, 'env.yaml');
    writeFileSync(configPath, 'engines:\n  - { id: gpu, type: openai, base_url: "http://127.0.0.1:1/v1", api_key: "${GPU_KEY}" }\n');
    const result = runTaskgate(['serve', '--config', configPath, '--data-dir', directory]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('engines[0].api_key: environment variable GPU_KEY is not set');
  });

  it('serves the default catalog with no config: absent models say how to fetch them, present ones answer', async () => {
    const directory = freshDirectory();
    const server = await serveTaskgate(['--data-dir', directory]);
    try {
      for (let attempt = 0; attempt < 100 && !server.stdout().includes('tg_live_'); attempt++) await sleep(20);
      const adminKey = /\n(tg_live_\S+)\n/.exec(server.stdout())?.[1];
      expect(adminKey).toBeDefined();
      const headers = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' };
      const models = (await (await fetch(`${server.baseUrl}/models`, { headers })).json()) as { data: Array<{ id: string }> };
      expect(models.data.map((model) => model.id)).toEqual(DEFAULT_MODELS.map((model) => model.id));

      const call = (model: string) =>
        fetch(`${server.baseUrl}/chat/completions`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ model, messages: [{ role: 'user', content: 'x' }] }),
        });
      const absent = await call('qwen2.5-0.5b-instruct');
      expect(absent.status).toBe(503);
      const error = ((await absent.json()) as { error: { code: string; message: string } }).error;
      expect(error.code).toBe('model_not_downloaded');
      expect(error.message).toContain(`taskgate models pull qwen2.5-0.5b-instruct --data-dir ${directory}`);

      // A file put where the catalog expects it is served on the next call, without a restart.
      const smallest = DEFAULT_MODELS.find((model) => model.id === 'smollm2-135m-instruct')!;
      mkdirSync(join(directory, 'models'));
      writeAnsweringModel(join(directory, 'models', smallest.file), TINY_ANSWERS.plain);
      const present = await call('HuggingFaceTB/SmolLM2-135M-Instruct');
      expect(present.status).toBe(200);
      const reply = (await present.json()) as { model: string; choices: Array<{ message: { content: string } }> };
      expect(reply.model).toBe('smollm2-135m-instruct');
      expect(reply.choices[0]?.message.content).toBe(TINY_ANSWERS.plain);
      expect((await fetch(`${server.baseUrl.replace('/v1', '')}/healthz`)).status).toBe(200);
      expect((await fetch(`${server.baseUrl.replace('/v1', '')}/readyz`)).status).toBe(200);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    // The bootstrap key is printed once: a second start prints none.
    const second = await serveTaskgate(['--data-dir', directory]);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    expect(second.stdout()).not.toContain('tg_live_');
  });
});
