/**
 * `taskgate models pull` and `models list` as a user runs them, against a local
 * file server (never the network beyond 127.0.0.1), and `downloadModelFile`
 * directly for the HTTP cases that are clearer without a child process.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { findDefaultModel } from '../src/catalog/default-models.js';
import { downloadModelFile } from '../src/models/model-download.js';
import { ModelFileError } from '../src/models/model-file-error.js';
import { closedPort, startFileServer, type FileServer } from './helpers/file-server.js';
import { runTaskgateAsync as runTaskgate, startTaskgateCommand as startTaskgate } from './helpers/taskgate-process.js';
import { temporaryDirectory } from './helpers/temporary-directory.js';

const MEGABYTE = 1 << 20;
const freshDirectory = () => temporaryDirectory('taskgate-models-');
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
/** A GGUF header (magic, version 3) and random bytes: passes the magic check, hashes like nothing real. */
const fakeGguf = (size: number) => Buffer.concat([Buffer.from('GGUF'), Buffer.from([3, 0, 0, 0]), randomBytes(size - 8)]);

let server: FileServer;
beforeAll(async () => {
  server = await startFileServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  Object.assign(server.switches, { dropNextAfterBytes: null, stallAfterBytes: null, ignoreRange: false, status: null });
});

/** Serves fresh bytes at a new path; returns them and their URL. */
function serve(name: string, size = 4 * MEGABYTE) {
  const bytes = fakeGguf(size);
  const path = `/files/${Math.random().toString(36).slice(2)}/${name}`;
  server.files.set(path, bytes);
  return { bytes, path, url: `${server.baseUrl}${path}` };
}

describe('models help', () => {
  it.each([[['models', '--help']], [['models', 'pull', '--help']], [['models', 'list', '--help']], [['--help']]])(
    '%j prints usage and exits 0',
    async (args) => {
      const result = await runTaskgate(args);
      expect(result.status).toBe(0);
      expect(result.stdout).toMatch(/Usage: taskgate/);
      expect(result.stdout).toContain('models');
    },
  );

  it('refuses an unknown subcommand, a missing model and a malformed --sha256 with usage errors', async () => {
    expect((await runTaskgate(['models', 'frobnicate'])).status).toBe(2);
    expect((await runTaskgate(['models', 'pull'])).status).toBe(2);
    const badChecksum = await runTaskgate(['models', 'pull', 'https://example.invalid/a.gguf', '--sha256', 'abc']);
    expect(badChecksum.status).toBe(2);
    expect(badChecksum.stderr).toContain('--sha256 must be 64 hex digits');
  });
});

describe('models pull <URL>', () => {
  it('downloads with progress on stderr and the path alone on stdout; a second pull finds it in place', async () => {
    const dataDirectory = freshDirectory();
    const file = serve('tiny.gguf');
    const result = await runTaskgate(['models', 'pull', file.url, '--data-dir', dataDirectory, '--sha256', sha256(file.bytes)]);
    expect(result.stderr).not.toMatch(/error/i);
    expect(result.status).toBe(0);
    const destination = join(dataDirectory, 'models', 'tiny.gguf');
    expect(result.stdout).toBe(`${destination}\n`);
    const progressLines = result.stderr
      .split('\n')
      .filter((line) => /^tiny\.gguf: \d+%  [\d.]+ [kM]?B \/ 4\.19 MB  [\d.]+ [kMG]?B\/s/.test(line));
    expect(progressLines.length).toBeGreaterThanOrEqual(3);
    expect(result.stderr).toMatch(/100%  4\.19 MB \/ 4\.19 MB/);
    expect(result.stderr).toMatch(/ETA \d+:\d\d/);
    expect(result.stderr).toContain('(verified)');
    expect(sha256(readFileSync(destination))).toBe(sha256(file.bytes));
    expect(existsSync(`${destination}.part`)).toBe(false);

    const requestsBefore = server.requests.length;
    const again = await runTaskgate(['models', 'pull', file.url, '--data-dir', dataDirectory, '--sha256', sha256(file.bytes)]);
    expect(again.status).toBe(0);
    expect(again.stdout).toBe(`${destination}\n`);
    expect(again.stderr).toContain('already present and matches');
    expect(server.requests.length).toBe(requestsBefore);
  });

  it('resumes an interrupted download with a Range request', async () => {
    const dataDirectory = freshDirectory();
    const file = serve('resumed.gguf');
    server.switches.dropNextAfterBytes = Math.floor(1.5 * MEGABYTE);
    const first = await runTaskgate(['models', 'pull', file.url, '--data-dir', dataDirectory]);
    expect(first.status).toBe(1);
    expect(first.stderr).toMatch(/the connection to 127\.0\.0\.1:\d+ dropped after \d+ of 4194304 bytes/);
    expect(first.stderr).toContain('run the same command again to resume');
    const partPath = join(dataDirectory, 'models', 'resumed.gguf.part');
    const kept = statSync(partPath).size;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(file.bytes.length);

    const second = await runTaskgate(['models', 'pull', file.url, '--data-dir', dataDirectory]);
    expect(second.status).toBe(0);
    const requests = server.requests.filter((request) => request.path === file.path);
    expect(requests.map((request) => request.range)).toEqual([null, `bytes=${kept}-`]);
    expect(requests[1]?.status).toBe(206);
    expect(sha256(readFileSync(join(dataDirectory, 'models', 'resumed.gguf')))).toBe(sha256(file.bytes));
    expect(existsSync(partPath)).toBe(false);
  });

  it('rejects a checksum mismatch: exit 1, both checksums named, nothing left behind', async () => {
    const dataDirectory = freshDirectory();
    const file = serve('tampered.gguf');
    const wanted = 'ab'.repeat(32);
    const result = await runTaskgate(['models', 'pull', file.url, '--data-dir', dataDirectory, '--sha256', wanted]);
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('checksum mismatch for tampered.gguf');
    expect(result.stderr).toContain(`expected sha256 ${wanted}`);
    expect(result.stderr).toContain(`got sha256 ${sha256(file.bytes)}`);
    expect(existsSync(join(dataDirectory, 'models', 'tampered.gguf'))).toBe(false);
    expect(existsSync(join(dataDirectory, 'models', 'tampered.gguf.part'))).toBe(false);
  });

  it('names the host and what to do when it cannot be reached', async () => {
    const port = await closedPort();
    const result = await runTaskgate(['models', 'pull', `http://127.0.0.1:${port}/a.gguf`, '--data-dir', freshDirectory()]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`cannot reach 127.0.0.1:${port}: connection refused (ECONNREFUSED); check the network, set a mirror`);
    expect(result.stderr).toContain('or pass a local file path');
  });

  it('reports an HTTP 404 with its status', async () => {
    const result = await runTaskgate(['models', 'pull', `${server.baseUrl}/files/nothing-here.gguf`, '--data-dir', freshDirectory()]);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/answered 404 Not Found for http:\/\/127\.0\.0\.1:\d+\/files\/nothing-here\.gguf: there is no file/);
  });

  it('on Ctrl-C keeps the part, says how to resume, and the next pull resumes it', async () => {
    const dataDirectory = freshDirectory();
    const file = serve('stopped.gguf');
    server.switches.stallAfterBytes = MEGABYTE;
    const running = startTaskgate(['models', 'pull', file.url, '--data-dir', dataDirectory]);
    // Interrupt once some bytes are in (the server then stalls, as a slow link would).
    for (let attempt = 0; attempt < 400 && !/stopped\.gguf: [1-9]\d*%/.test(running.stderr()); attempt++) await sleep(25);
    running.interrupt();
    expect(await running.exited).toBe(130);
    expect(running.stderr()).toMatch(
      /interrupted; \d+ bytes are kept in .*stopped\.gguf\.part; resume with: taskgate models pull http:\/\/127\.0\.0\.1:\d+\/files\/\S+\/stopped\.gguf --data-dir /,
    );
    const kept = statSync(join(dataDirectory, 'models', 'stopped.gguf.part')).size;
    expect(kept).toBeGreaterThan(0);

    server.switches.stallAfterBytes = null;
    const resumed = await runTaskgate(['models', 'pull', file.url, '--data-dir', dataDirectory]);
    expect(resumed.status).toBe(0);
    expect(server.requests.filter((request) => request.path === file.path).at(-1)?.range).toBe(`bytes=${kept}-`);
    expect(sha256(readFileSync(join(dataDirectory, 'models', 'stopped.gguf')))).toBe(sha256(file.bytes));
  });
});

describe('models pull <catalog id>', () => {
  it('maps the id to its pinned URL on the mirror and verifies against the catalog', async () => {
    const model = findDefaultModel('qwen2.5-0.5b-instruct')!;
    const path = new URL(model.url).pathname;
    server.files.set(path, fakeGguf(2 * MEGABYTE));
    const dataDirectory = freshDirectory();
    const result = await runTaskgate([
      'models',
      'pull',
      'Qwen/Qwen2.5-0.5B-INSTRUCT',
      '--data-dir',
      dataDirectory,
      '--mirror',
      `${server.baseUrl}/`,
    ]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`Downloading ${model.file} from ${server.baseUrl}${path}`);
    expect(result.stderr).toContain(
      `size mismatch for ${server.baseUrl}${path}: expected ${model.sizeBytes} bytes (sha256 ${model.sha256}), but the server offers ${2 * MEGABYTE} bytes`,
    );
    expect(server.requests.some((request) => request.path === path)).toBe(true);
    expect(existsSync(join(dataDirectory, 'models', model.file))).toBe(false);
  });

  it('takes the mirror from TASKGATE_MODEL_MIRROR too', async () => {
    const model = findDefaultModel('llama3.2:1b')!;
    const path = new URL(model.url).pathname;
    server.files.set(`/hf${path}`, fakeGguf(MEGABYTE));
    const result = await runTaskgate(['models', 'pull', 'llama3.2:1b', '--data-dir', freshDirectory()], {
      TASKGATE_MODEL_MIRROR: `${server.baseUrl}/hf`,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`expected ${model.sizeBytes} bytes (sha256 ${model.sha256})`);
    expect(server.requests.some((request) => request.path === `/hf${path}`)).toBe(true);
  });
});

describe('models pull <local file>', () => {
  it('copies a GGUF file into the models directory and refuses a file that is not GGUF', async () => {
    const directory = freshDirectory();
    const bytes = fakeGguf(MEGABYTE);
    writeFileSync(join(directory, 'carried-in.gguf'), bytes);
    const dataDirectory = join(directory, 'data');
    const result = await runTaskgate(['models', 'pull', join(directory, 'carried-in.gguf'), '--data-dir', dataDirectory]);
    expect(result.status).toBe(0);
    const destination = join(dataDirectory, 'models', 'carried-in.gguf');
    expect(result.stdout).toBe(`${destination}\n`);
    expect(readFileSync(destination).equals(bytes)).toBe(true);

    writeFileSync(join(directory, 'page.gguf'), '<html>sign in</html>');
    const refused = await runTaskgate(['models', 'pull', join(directory, 'page.gguf'), '--data-dir', dataDirectory]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('is not a GGUF file (it starts with "<htm", not "GGUF")');
    expect(existsSync(join(dataDirectory, 'models', 'page.gguf'))).toBe(false);
  });
});

describe('models list', () => {
  it('shows present, partial and missing files, as a table and as JSON', async () => {
    const dataDirectory = freshDirectory();
    const modelsDirectory = join(dataDirectory, 'models');
    mkdirSync(modelsDirectory);
    const present = findDefaultModel('smollm2-135m-instruct')!;
    const partial = findDefaultModel('qwen2.5-1.5b-instruct')!;
    // Sparse files: list compares sizes only, so no disk is spent on them.
    writeFileSync(join(modelsDirectory, present.file), '');
    truncateSync(join(modelsDirectory, present.file), present.sizeBytes);
    writeFileSync(join(modelsDirectory, `${partial.file}.part`), '');
    truncateSync(join(modelsDirectory, `${partial.file}.part`), Math.floor(partial.sizeBytes * 0.425));
    writeFileSync(join(modelsDirectory, 'my-own.gguf'), fakeGguf(1024));

    const table = await runTaskgate(['models', 'list', '--data-dir', dataDirectory]);
    expect(table.status).toBe(0);
    const line = (id: string) => table.stdout.split('\n').find((row) => row.startsWith(`${id} `)) ?? '';
    expect(line(present.id)).toContain(`present ${join(modelsDirectory, present.file)}`);
    expect(line(present.id)).toMatch(/smollm2\s+105\.5 MB\s+8K\s+0\.0213\s+0\.2125\s+json/);
    expect(line(partial.id)).toContain('partial 42%');
    expect(line('llama3.2-3b-instruct')).toMatch(/128K .* missing$/);
    expect(table.stdout).toContain(`Models directory: ${modelsDirectory}`);
    expect(table.stdout).toContain('Other GGUF files there: my-own.gguf (1.02 kB)');

    const json = await runTaskgate(['models', 'list', '--data-dir', dataDirectory, '--json']);
    expect(json.status).toBe(0);
    const document = JSON.parse(json.stdout) as { models: Array<{ id: string; status: string; partBytes: number | null; sha256: string }> };
    const states = Object.fromEntries(document.models.map((model) => [model.id, model.status]));
    expect(states).toMatchObject({ [present.id]: 'present', [partial.id]: 'partial', 'llama3.2-3b-instruct': 'missing' });
    expect(document.models).toHaveLength(8);
  });

  it('lists the llama-cpp models of a config: catalog files and files the config names', async () => {
    const dataDirectory = freshDirectory();
    writeFileSync(join(dataDirectory, 'mine.gguf'), fakeGguf(2048));
    const configPath = join(dataDirectory, 'taskgate.yaml');
    writeFileSync(
      configPath,
      `engines: [{ id: cpu, type: llama-cpp }]
models:
  - { id: qwen2.5-0.5b-instruct, served_by: [{ engine: cpu }] }
  - { id: mine, served_by: [{ engine: cpu, file: mine.gguf }], price: { input: 0.5, output: 1 }, context_window: 2048 }
  - { id: gone, served_by: [{ engine: cpu, file: gone.gguf }], price: { input: 0.5, output: 1 }, context_window: 2048 }
`,
    );
    const table = await runTaskgate(['models', 'list', '--data-dir', dataDirectory, '--config', configPath]);
    expect(table.status).toBe(0);
    const rows = table.stdout.split('\n');
    expect(rows.filter((row) => /^(qwen|mine|gone|smollm|llama)/.test(row)).map((row) => row.split(' ')[0])).toEqual([
      'qwen2.5-0.5b-instruct',
      'mine',
      'gone',
    ]);
    expect(rows.find((row) => row.startsWith('mine '))).toMatch(/2\.05 kB\s+2K\s+0\.5\s+1\s+present .*mine\.gguf$/);
    expect(rows.find((row) => row.startsWith('gone '))).toContain(`missing ${join(dataDirectory, 'gone.gguf')}`);
    expect(rows.find((row) => row.startsWith('qwen2.5-0.5b-instruct '))).toMatch(/missing$/);
  });
});

describe('downloadModelFile', () => {
  const destinationIn = (name: string) => join(freshDirectory(), 'models', name);

  it('follows a redirect and resumes a part through it', async () => {
    const file = serve('redirected.gguf');
    const destination = destinationIn('redirected.gguf');
    mkdirSync(join(destination, '..'), { recursive: true });
    writeFileSync(`${destination}.part`, file.bytes.subarray(0, MEGABYTE));
    const progress: number[] = [];
    const result = await downloadModelFile({
      url: `${server.baseUrl}/redirect${file.path}`,
      destination,
      expectedSha256: sha256(file.bytes),
      expectedSize: file.bytes.length,
      onProgress: (update) => progress.push(update.bytesDone),
    });
    expect(result).toMatchObject({
      path: destination,
      sizeBytes: file.bytes.length,
      sha256: sha256(file.bytes),
      resumedFromBytes: MEGABYTE,
    });
    expect(server.requests.slice(-2)).toEqual([
      { path: `/redirect${file.path}`, range: `bytes=${MEGABYTE}-`, status: 302 },
      { path: file.path, range: `bytes=${MEGABYTE}-`, status: 206 },
    ]);
    expect(progress[0]).toBe(MEGABYTE);
    expect(progress.at(-1)).toBe(file.bytes.length);
  });

  it('starts over when the server ignores the range', async () => {
    const file = serve('no-ranges.gguf');
    const destination = destinationIn('no-ranges.gguf');
    mkdirSync(join(destination, '..'), { recursive: true });
    writeFileSync(`${destination}.part`, file.bytes.subarray(0, MEGABYTE));
    server.switches.ignoreRange = true;
    const result = await downloadModelFile({ url: file.url, destination, expectedSha256: sha256(file.bytes) });
    expect(result.resumedFromBytes).toBe(0);
    expect(server.requests.at(-1)).toEqual({ path: file.path, range: `bytes=${MEGABYTE}-`, status: 200 });
    expect(sha256(readFileSync(destination))).toBe(sha256(file.bytes));
  });

  it('treats 416 on a whole part as complete, starts over when the part is too long, and needs no request when the size is known', async () => {
    const file = serve('whole-part.gguf', MEGABYTE);
    const destination = destinationIn('whole-part.gguf');
    mkdirSync(join(destination, '..'), { recursive: true });
    writeFileSync(`${destination}.part`, file.bytes);
    await downloadModelFile({ url: file.url, destination, expectedSha256: sha256(file.bytes) });
    expect(server.requests.at(-1)).toEqual({ path: file.path, range: `bytes=${MEGABYTE}-`, status: 416 });
    expect(readFileSync(destination).equals(file.bytes)).toBe(true);

    // A part longer than the file: the 416 names the real size, so it starts over.
    const longer = destinationIn('whole-part.gguf');
    mkdirSync(join(longer, '..'), { recursive: true });
    writeFileSync(`${longer}.part`, Buffer.concat([file.bytes, Buffer.from('extra')]));
    await downloadModelFile({ url: file.url, destination: longer });
    expect(server.requests.slice(-2).map((request) => [request.range, request.status])).toEqual([
      [`bytes=${MEGABYTE + 5}-`, 416],
      [null, 200],
    ]);
    expect(readFileSync(longer).equals(file.bytes)).toBe(true);

    const second = destinationIn('whole-part.gguf');
    mkdirSync(join(second, '..'), { recursive: true });
    writeFileSync(`${second}.part`, file.bytes);
    const requestsBefore = server.requests.length;
    await downloadModelFile({ url: file.url, destination: second, expectedSha256: sha256(file.bytes), expectedSize: file.bytes.length });
    expect(server.requests.length).toBe(requestsBefore);
  });

  it('deletes a resumed part whose earlier bytes were corrupt', async () => {
    const file = serve('corrupt-part.gguf');
    const destination = destinationIn('corrupt-part.gguf');
    mkdirSync(join(destination, '..'), { recursive: true });
    writeFileSync(`${destination}.part`, fakeGguf(MEGABYTE));
    const failure = await downloadModelFile({ url: file.url, destination, expectedSha256: sha256(file.bytes) }).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(ModelFileError);
    expect((failure as ModelFileError).code).toBe('integrity');
    expect(existsSync(`${destination}.part`)).toBe(false);
    expect(existsSync(destination)).toBe(false);
  });

  it('refuses a reply that is not GGUF, and keeps the part when aborted', async () => {
    const page = `/files/${Math.random()}/login.gguf`;
    server.files.set(page, Buffer.from('<!doctype html><p>Sign in to continue</p>'));
    const notGguf = await downloadModelFile({
      url: `${server.baseUrl}${page}`,
      destination: destinationIn('login.gguf'),
      requireGguf: true,
    }).catch((error: unknown) => error);
    expect((notGguf as ModelFileError).code).toBe('not_gguf');

    const file = serve('aborted.gguf');
    server.switches.stallAfterBytes = MEGABYTE;
    const controller = new AbortController();
    const destination = destinationIn('aborted.gguf');
    const aborted = await downloadModelFile({
      url: file.url,
      destination,
      signal: controller.signal,
      onProgress: (update) => update.bytesDone >= MEGABYTE && controller.abort(),
    }).catch((error: unknown) => error);
    expect(aborted).toBeInstanceOf(ModelFileError);
    expect((aborted as ModelFileError).code).toBe('aborted');
    expect((aborted as ModelFileError).resumable).toBe(true);
    expect(statSync(`${destination}.part`).size).toBe((aborted as ModelFileError).bytesKept);
  });
});
