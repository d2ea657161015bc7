import { describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { temporaryDirectory } from '../../test/helpers/temporary-directory.js';
import { DEFAULT_MODELS, findDefaultModel } from '../catalog/default-models.js';
import { ConfigError, loadSettings, parseConfig, storeLocation } from './load-config.js';

const engine = '  - { id: gpu-a, type: openai, base_url: "http://127.0.0.1:8000/v1" }';
const model = (extra = '') =>
  `  - { id: m1, provider: acme, served_by: [{ engine: gpu-a }], price: { input: 0.1, output: 0.3 }, context_window: 4096${extra} }`;

function problems(text: string, environment: Record<string, string> = {}): string[] {
  try {
    parseConfig(text, environment);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('parseConfig', () => {
  it('fills defaults for an empty file', () => {
    const config = parseConfig('', {});
    expect(config).toMatchObject({
      engines: [],
      models: [],
      limits: { requests_per_minute: 600, max_body_bytes: 4194304 },
      server: { port: 8080 },
    });
  });

  it('parses the design sketch and applies engine defaults', () => {
    const config = parseConfig(`engines:\n${engine}\nmodels:\n${model(', aliases: [Acme/M1], supports: [tools, json]')}\n`, {});
    expect(config.engines[0]).toMatchObject({ id: 'gpu-a', max_concurrency: 256, timeout_ms: 120_000 });
    expect(config.models[0]).toMatchObject({ id: 'm1', aliases: ['Acme/M1'], supports: ['tools', 'json'] });
  });

  it('interpolates ${ENV} and ${ENV:-fallback} in values, typing whole references', () => {
    const config = parseConfig(
      `engines:\n  - { id: gpu-a, type: openai, base_url: "http://\${HOST}:8000/v1", api_key: "\${KEY}" }\nlimits:\n  requests_per_minute: \${RATE:-60}\n`,
      { HOST: 'gpu.internal', KEY: 'secret' },
    );
    expect(config.engines[0]).toMatchObject({ base_url: 'http://gpu.internal:8000/v1', api_key: 'secret' });
    expect(config.limits.requests_per_minute).toBe(60);
  });

  it('names the path of every problem', () => {
    expect(problems(`engines:\n${engine}\nmodels:\n${model(', colour: red')}\n`)).toEqual(['models[0]: unknown key "colour"']);
    expect(problems(`engines:\n${engine}\n${engine}\n`)).toEqual(['engines[1].id: duplicate engine id "gpu-a"']);
    expect(problems('limits: { requests_per_minute: 0 }')[0]).toMatch(/^limits\.requests_per_minute: /);
    expect(problems('engines:\n  - { id: x, type: tgi, base_url: "http://a/v1" }')[0]).toMatch(/^engines\[0\]\.type: unknown engine type/);
    expect(
      problems(
        `engines:\n${engine}\nmodels:\n${model()}\n  - { id: m2, aliases: [m1], served_by: [{ engine: gpu-a }], price: { input: 0, output: 0 }, context_window: 1 }`,
      ),
    ).toEqual(['models[1].aliases[0]: "m1" already names model "m1"']);
    expect(problems('store: postgres://x')[0]).toMatch(/^store: /);
    const withHeaders = (headers: string) =>
      `engines:\n  - { id: gpu-a, type: openai, base_url: "http://127.0.0.1:8000/v1", headers: ${headers} }\n`;
    expect(problems(withHeaders('{ x-tenant: blue }'))).toEqual([]);
    expect(problems(withHeaders('{ Content-Length: "10" }'))[0]).toMatch(/^engines\[0\]\.headers\.Content-Length: .*set by taskgate/);
    expect(problems(withHeaders('{ "bad name": x }'))[0]).toMatch(/HTTP header name/);
    expect(problems(withHeaders('{ x-a: "one\\r\\nx-b: two" }'))[0]).toMatch(/one line/);
    expect(problems('bogus: 1')).toEqual(['(top level): unknown key "bogus"']);
  });

  it('takes llama-cpp engines, and fills a default-catalog model from the catalog', () => {
    const config = parseConfig(
      `engines:\n  - { id: cpu, type: llama-cpp, threads: 3 }\nmodels:\n  - { id: qwen2.5-0.5b-instruct, served_by: [{ engine: cpu, sequences: 2, context_size: 2048 }] }\n`,
      {},
    );
    expect(config.engines[0]).toMatchObject({ id: 'cpu', type: 'llama-cpp', threads: 3, max_queue: 64 });
    const catalog = findDefaultModel('qwen2.5-0.5b-instruct')!;
    expect(config.models[0]).toMatchObject({
      provider: 'qwen',
      aliases: catalog.aliases,
      price: catalog.price,
      context_window: 32_768,
      supports: ['tools', 'json'],
      served_by: [{ engine: 'cpu', sequences: 2, context_size: 2048 }],
    });
    // What the config says wins over the catalog.
    const priced = parseConfig(
      `engines:\n  - { id: cpu, type: llama-cpp }\nmodels:\n  - { id: qwen2.5-0.5b-instruct, served_by: [{ engine: cpu }], price: { input: 5, output: 6 } }\n`,
      {},
    );
    expect(priced.models[0]?.price).toEqual({ input: 5, output: 6 });
  });

  it('names what a llama-cpp replica or a model outside the catalog is missing', () => {
    const cpu = '  - { id: cpu, type: llama-cpp }';
    expect(problems(`engines:\n${cpu}\nmodels:\n  - { id: mine, served_by: [{ engine: cpu }] }\n`)).toEqual([
      'models[0].served_by[0].file: required: "mine" is not in the default catalog, so name its GGUF file',
      'models[0].price: required: "mine" is not in the default catalog',
      'models[0].context_window: required: "mine" is not in the default catalog',
    ]);
    expect(
      problems(
        `engines:\n${engine}\nmodels:\n${model()}\n  - { id: m2, served_by: [{ engine: gpu-a, file: x.gguf, sequences: 2 }], price: { input: 0, output: 0 }, context_window: 1 }`,
      ),
    ).toEqual([
      'models[1].served_by[0].file: only for llama-cpp engines; "gpu-a" is openai',
      'models[1].served_by[0].sequences: only for llama-cpp engines; "gpu-a" is openai',
    ]);
    expect(problems('engines:\n  - { id: cpu, type: llama-cpp, base_url: "http://a/v1" }')).toEqual(['engines[0]: unknown key "base_url"']);
    expect(problems('engines:\n  - { id: x, type: tgi }')[0]).toBe('engines[0].type: unknown engine type; supported: openai, llama-cpp');
  });

  it('reports YAML syntax errors and duplicate keys', () => {
    expect(() => parseConfig('engines: [', {})).toThrow(/not valid YAML/);
    expect(() => parseConfig('limits: {}\nlimits: {}', {})).toThrow(/not valid YAML/);
  });
});

describe('loadSettings', () => {
  it('takes flags over environment over config', () => {
    const settings = loadSettings({ port: 9000 }, { PORT: '7000', TASKGATE_DATA_DIR: '/tmp/taskgate-x' });
    expect(settings).toMatchObject({
      port: 9000,
      dataDirectory: '/tmp/taskgate-x',
      store: { type: 'sqlite', path: '/tmp/taskgate-x/taskgate.db' },
      limits: { type: 'memory' },
      configPath: null,
      adminKey: null,
    });
    expect(loadSettings({}, { PORT: '7000' }).port).toBe(7000);
  });

  it('picks the store and the limits back end: config, overridden by TASKGATE_DATABASE_URL and TASKGATE_REDIS_URL', () => {
    const config = (yaml: string) => parseConfig(yaml, {});
    expect(storeLocation(config('store: sqlite:/tmp/a.db'), '/data', undefined)).toEqual({ type: 'sqlite', path: '/tmp/a.db' });
    expect(storeLocation(config('store: { type: sqlite, url: /tmp/b.db }'), '/data', undefined)).toEqual({
      type: 'sqlite',
      path: '/tmp/b.db',
    });
    expect(storeLocation(config('store: { type: postgres, url: "postgres://db/taskgate", pool_size: 4 }'), '/data', undefined)).toEqual({
      type: 'postgres',
      url: 'postgres://db/taskgate',
      poolSize: 4,
    });
    expect(storeLocation(config(''), '/data', 'postgres://other/db')).toEqual({
      type: 'postgres',
      url: 'postgres://other/db',
      poolSize: 10,
    });
    expect(() => storeLocation(config(''), '/data', 'mysql://x')).toThrow(/TASKGATE_DATABASE_URL must be a postgres/);
    expect(() => config('store: { type: postgres, url: "mysql://x" }')).toThrow(/store/);

    expect(loadSettings({}, {}).limits).toEqual({ type: 'memory' });
    expect(loadSettings({}, { TASKGATE_REDIS_URL: 'redis://127.0.0.1:6379' }).limits).toEqual({
      type: 'redis',
      url: 'redis://127.0.0.1:6379',
    });
    expect(() => loadSettings({}, { TASKGATE_REDIS_URL: 'http://x' })).toThrow(/TASKGATE_REDIS_URL/);
    expect(config('limits: { backend: { type: redis, url: "redis://cache:6379" }, tokens_per_minute: 90000 }').limits).toMatchObject({
      backend: { type: 'redis', url: 'redis://cache:6379' },
      tokens_per_minute: 90_000,
    });
  });

  it('checks the bootstrap admin key and the port', () => {
    expect(() => loadSettings({}, { TASKGATE_ADMIN_KEY: 'short' })).toThrow(/20 to 512/);
    expect(loadSettings({}, { TASKGATE_ADMIN_KEY: 'x'.repeat(20) }).adminKey).toBe('x'.repeat(20));
    expect(() => loadSettings({}, { PORT: 'eighty' })).toThrow(/PORT/);
  });

  it('serves the default catalog on the CPU engine when there is no config file', () => {
    const { config, configPath } = loadSettings({}, {});
    expect(configPath).toBeNull();
    expect(config.engines).toMatchObject([{ id: 'cpu', type: 'llama-cpp' }]);
    expect(config.models.map((entry) => entry.id)).toEqual(DEFAULT_MODELS.map((entry) => entry.id));
    expect(
      config.models.every(
        (entry) => entry.served_by.length === 1 && entry.served_by[0]?.engine === 'cpu' && entry.served_by[0].file === undefined,
      ),
    ).toBe(true);
  });

  it('binds loopback by default and says where the data directory came from', () => {
    const settings = loadSettings({}, {});
    expect(settings).toMatchObject({ host: '127.0.0.1', dataDirectorySource: 'default', offline: false });
    expect(settings.config.server.metrics).toBeNull();
    expect(loadSettings({ dataDirectory: '/tmp/a' }, { TASKGATE_DATA_DIR: '/tmp/b' }).dataDirectorySource).toBe('--data-dir');
    expect(loadSettings({}, { TASKGATE_DATA_DIR: '/tmp/b' }).dataDirectorySource).toBe('TASKGATE_DATA_DIR');
    expect(loadSettings({}, { TASKGATE_OFFLINE: '1' }).offline).toBe(true);
    expect(() => loadSettings({}, { TASKGATE_OFFLINE: 'yes' })).toThrow('TASKGATE_OFFLINE must be 1 or 0, got "yes"');
  });

  it('takes a model catalog of its own from TASKGATE_MODEL_CATALOG, checked like the config', () => {
    const directory = temporaryDirectory('taskgate-catalog-');
    const qwen = findDefaultModel('qwen2.5-0.5b-instruct')!;
    const { price: _price, ...entry } = {
      ...qwen,
      id: 'house-model',
      url: 'https://files.example/house.gguf',
      file: 'house.gguf',
      recommended: true,
    };
    writeFileSync(join(directory, 'catalog.json'), JSON.stringify([entry]));
    const settings = loadSettings({}, { TASKGATE_MODEL_CATALOG: join(directory, 'catalog.json') });
    expect(settings.catalog).toEqual([{ ...entry, price: qwen.price }]);
    expect(settings.config.models.map((model) => model.id)).toEqual(['house-model']);
    expect(settings.config.models[0]).toMatchObject({
      provider: 'qwen',
      context_window: 32_768,
      supports: ['tools', 'json'],
      catalog: { family: 'qwen2.5' },
    });

    writeFileSync(join(directory, 'bad.json'), JSON.stringify([{ ...entry, sha256: 'abc', colour: 'blue' }, entry]));
    expect(() => loadSettings({}, { TASKGATE_MODEL_CATALOG: join(directory, 'bad.json') })).toThrow(
      `Invalid model catalog ${join(directory, 'bad.json')}\n  - [0].sha256: must be 64 lower-case hex digits\n  - [0]: Unrecognized key: "colour"`,
    );
    writeFileSync(join(directory, 'twice.json'), JSON.stringify([entry, entry]));
    expect(() => loadSettings({}, { TASKGATE_MODEL_CATALOG: join(directory, 'twice.json') })).toThrow('[1].id: duplicate id "house-model"');
    writeFileSync(join(directory, 'broken.json'), '[{');
    expect(() => loadSettings({}, { TASKGATE_MODEL_CATALOG: join(directory, 'broken.json') })).toThrow('not valid JSON');
  });

  it('says which config file it cannot read', () => {
    expect(() => loadSettings({ configPath: '/nonexistent/taskgate.yaml' }, {})).toThrow('/nonexistent/taskgate.yaml');
  });
});
