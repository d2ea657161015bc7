/**
 * The README's front door, run as written: the quick start's `npm start` on
 * an empty data directory (the first start fetches the recommended model,
 * here from a local server standing in for the public download), then every
 * example of "Calling it" in order, against that server, then the commands
 * of "After the first calls". Only the port and the data directory differ
 * from a newcomer's run (`PORT` and `TASKGATE_URL`, `TASKGATE_DATA_DIR`), so
 * the test can run beside a real taskgate. That every link of the README
 * leads somewhere is test/docs-links.test.ts.
 */
import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from 'node:child_process';
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireOrSkip, type Requirement } from './helpers/machine-requirements.js';
import { startModelCatalogServer, type ModelCatalogServer } from './helpers/model-catalog-server.js';
import { temporaryDirectory } from './helpers/temporary-directory.js';

interface CodeBlock {
  language: string;
  code: string;
}

const readme = readFileSync('README.md', 'utf8');

/** The text of a `## title` section, up to the next `## `. */
function section(title: string): string {
  const start = readme.indexOf(`\n## ${title}\n`);
  if (start === -1) throw new Error(`the README has no "## ${title}" section`);
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end === -1 ? undefined : end);
}

function codeBlocks(text: string): CodeBlock[] {
  return [...text.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((match) => ({ language: match[1] as string, code: match[2] as string }));
}

/** Python with its `openai` package: optional here (PyPI may be out of reach), said when missing. */
const pythonOpenAI: Requirement<string> = {
  what: "python3 with the openai package (for the README's Python example)",
  howToGet: 'Install it with "python3 -m pip install openai".',
  name: 'PYTHON_OPENAI',
  find: () =>
    spawnSync('python3', ['-c', 'import openai'], { encoding: 'utf8' }).status === 0
      ? { found: 'python3' }
      : { missing: 'python3 -c "import openai" fails' },
};

let catalog: ModelCatalogServer;
let server: ChildProcess | null = null;
let stdout = '';
let stderr = '';
let port = 0;
let key = '';
let dataDirectory = '';
/** How many of the "Calling it" examples ran (the Python one needs its SDK). */
let examplesRun = 0;

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const { port: found } = probe.address() as { port: number };
  await new Promise<void>((done) => probe.close(() => done()));
  return found;
}

async function until(check: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (server?.exitCode !== null || Date.now() > deadline) throw new Error(`no ${what}; stdout:\n${stdout}\nstderr:\n${stderr}`);
    await sleep(25);
  }
}

/** An example as the reader would run it, on this test's port. */
const onOurPort = (code: string) => code.replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`);

beforeAll(async () => {
  catalog = await startModelCatalogServer();
  port = await freePort();
});

afterAll(async () => {
  if (server !== null && server.exitCode === null) {
    process.kill(-(server.pid as number), 'SIGTERM');
    await new Promise((done) => server!.once('exit', done));
  }
  await catalog?.close();
});

describe('the README', () => {
  it('quick start: `npm ci && npm start` serves on 127.0.0.1:8080, fetches the recommended model and prints the admin key', async () => {
    const [block] = codeBlocks(section('Quick start'));
    const commands = (block as CodeBlock).code
      .split('\n')
      .map((line) => line.replace(/#.*$/, '').trim())
      .filter((line) => line !== '');
    expect(commands).toEqual(['npm ci && npm start', 'npm test']);
    // `npm ci` is what put node_modules here; `npm test` is what runs this file.
    expect(readFileSync(join('node_modules', 'openai', 'package.json'), 'utf8')).toContain('"name": "openai"');
    expect((block as CodeBlock).code).toContain('serves on http://127.0.0.1:8080/v1');

    dataDirectory = temporaryDirectory('taskgate-readme-');
    // A newcomer's environment: none of taskgate's own variables but these.
    const environment: NodeJS.ProcessEnv = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith('TASKGATE_')),
    );
    Object.assign(environment, { PORT: String(port), TASKGATE_DATA_DIR: dataDirectory, TASKGATE_MODEL_CATALOG: catalog.catalogPath });
    server = spawn('npm', ['start'], { cwd: resolve('.'), env: environment, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    server.stdout?.on('data', (data: Buffer) => (stdout += data.toString()));
    server.stderr?.on('data', (data: Buffer) => (stderr += data.toString()));

    await until(() => /\ntg_live_\S+\n/.test(stdout), 'admin key on stdout');
    key = (/\n(tg_live_\S+)\n/.exec(stdout) as RegExpExecArray)[1] as string;
    expect(stderr).toContain(`"url":"http://127.0.0.1:${port}/v1"`);
    await until(() => stderr.includes(`${catalog.model.id} is ready`), 'model ready');
    expect(stderr).toContain(`fetching ${catalog.model.id}`);
    expect(readme).toContain(`fetches the recommended model**, \`${catalog.model.id}\``);
  });

  it('"Calling it": the curl, Python and TypeScript examples answer as written', async () => {
    expect(key).not.toBe('');
    const blocks = codeBlocks(section('Calling it'));
    expect(blocks.map((block) => block.language)).toEqual(['sh', 'sh', 'python', 'ts']);
    const [keyBlock, curlBlock, pythonBlock, typescriptBlock] = blocks as [CodeBlock, CodeBlock, CodeBlock, CodeBlock];
    // The first block tells the reader to put the printed key in TASKGATE_KEY; so does this test.
    expect(keyBlock.code).toMatch(/^export TASKGATE_KEY=tg_live_\.\.\./);
    const environment = { PATH: process.env.PATH ?? '', TASKGATE_KEY: key };
    const expectAnswer = (output: string) => {
      expect(output).toContain(catalog.model.id);
      expect(output).toContain(catalog.answer);
    };

    const curl = spawnSync('bash', ['-c', onOurPort(curlBlock.code)], { encoding: 'utf8', env: environment });
    expect(curl.status, curl.stderr).toBe(0);
    const reply = JSON.parse(curl.stdout) as { model: string; choices: Array<{ message: { content: string } }> };
    expect(reply.model).toBe(catalog.model.id);
    expect(reply.choices[0]?.message.content).toBe(catalog.answer);
    examplesRun += 1;

    const directory = temporaryDirectory('taskgate-readme-examples-');
    // Resolves `import OpenAI from 'openai'` as it would in the reader's project.
    symlinkSync(resolve('node_modules'), join(directory, 'node_modules'), 'dir');
    const transpiled = ts.transpileModule(onOurPort(typescriptBlock.code), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      reportDiagnostics: true,
    });
    expect(transpiled.diagnostics ?? []).toEqual([]);
    writeFileSync(join(directory, 'example.mjs'), transpiled.outputText);
    const typescript = spawnSync(process.execPath, [join(directory, 'example.mjs')], {
      encoding: 'utf8',
      env: environment,
      cwd: directory,
    });
    expect(typescript.status, typescript.stderr).toBe(0);
    expectAnswer(typescript.stdout);
    examplesRun += 1;

    writeFileSync(join(directory, 'example.py'), onOurPort(pythonBlock.code));
    const python = requireOrSkip(pythonOpenAI, 'test/readme.test.ts', 'The Python example is only checked to parse.');
    if (python !== null) {
      const run = spawnSync(python, [join(directory, 'example.py')], { encoding: 'utf8', env: environment });
      expect(run.status, run.stderr).toBe(0);
      expectAnswer(run.stdout);
      examplesRun += 1;
    } else if (spawnSync('python3', ['--version']).status === 0) {
      // Without the SDK, Python at least checks the example parses.
      expect(spawnSync('python3', ['-m', 'py_compile', join(directory, 'example.py')], { encoding: 'utf8' }).status).toBe(0);
    }

    // Every example labelled its call with project shop and the task as workload.
    const workloads = (await (
      await fetch(`http://127.0.0.1:${port}/v1/projects/shop/workloads`, { headers: { authorization: `Bearer ${key}` } })
    ).json()) as { data: Array<{ name: string }> };
    expect(workloads.data.map((workload) => workload.name)).toEqual(['summarise']);
  });

  it('"After the first calls": stats, traces, routes and a new key, as written', async () => {
    expect(examplesRun).toBeGreaterThanOrEqual(2);
    const [block, ...others] = codeBlocks(section('After the first calls'));
    expect(others).toEqual([]);
    const commands = (block as CodeBlock).code
      .split('\n')
      .map((line) => line.replace(/#.*$/, '').trim())
      .filter((line) => line !== '');
    expect(commands.map((command) => command.split(' ').slice(0, 3).join(' '))).toEqual([
      'npx taskgate stats',
      'npx taskgate traces',
      'npx taskgate routes',
      'npx taskgate keys',
    ]);
    // The reader's shell: TASKGATE_KEY from "Calling it", the server on its default address (here our port), the default data directory (here the test's).
    const environment: NodeJS.ProcessEnv = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith('TASKGATE_')),
    );
    Object.assign(environment, { TASKGATE_KEY: key, TASKGATE_URL: `http://127.0.0.1:${port}`, TASKGATE_DATA_DIR: dataDirectory });
    const runs = commands.map((command) => spawnSync('bash', ['-c', command], { encoding: 'utf8', env: environment, cwd: resolve('.') }));
    for (const run of runs) expect(run.status, run.stderr).toBe(0);
    const [stats, traces, routes, keys] = runs as [
      SpawnSyncReturns<string>,
      SpawnSyncReturns<string>,
      SpawnSyncReturns<string>,
      SpawnSyncReturns<string>,
    ];

    expect(stats.stdout).toContain('summarise (shop), production');
    expect(stats.stdout).toContain(`calls ${examplesRun} `);
    expect(stats.stdout).toContain(catalog.model.id);
    const traceLines = traces.stdout.trim().split('\n');
    expect(traceLines).toHaveLength(examplesRun);
    const servedAndOk = new RegExp(`  200  ${catalog.model.id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s.*\\sok\\s*$`);
    for (const line of traceLines) expect(line).toMatch(servedAndOk);
    expect(routes.stdout).toContain('summarise');
    expect(routes.stdout).toContain(catalog.model.id);
    // The new key is alone on the last line, and the server takes it.
    const newKey = keys.stdout.trim().split('\n').at(-1) ?? '';
    expect(newKey).toMatch(/^tg_test_\S+$/);
    expect((await fetch(`http://127.0.0.1:${port}/v1/models`, { headers: { authorization: `Bearer ${newKey}` } })).status).toBe(200);
  }, 120_000); // four `npx` starts, one after the other
});
