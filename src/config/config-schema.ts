/**
 * The taskgate config file, declared once with every setting documented where
 * it is declared. Parsing is strict: an unknown key is an error that names its
 * path, so a typo never silently falls back to a default.
 */
import { validateHeaderName, validateHeaderValue } from 'node:http';
import { z } from 'zod';
import { DEFAULT_MODELS, type DefaultModel } from '../catalog/default-models.js';

/** `traces.flush_interval_ms`'s default. */
const FLUSH_INTERVAL_MS = 50;

const identifier = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'must be 1-64 letters, digits, ".", "_" or "-"');

/** A replica on an engine that fails `failures` times in a row is taken out for `cooldown_ms`, doubling up to `max_cooldown_ms`. */
const circuitBreaker = z
  .object({
    failures: z.number().int().min(1).default(3),
    cooldown_ms: z.number().int().min(0).default(5_000),
    max_cooldown_ms: z.number().int().min(0).default(60_000),
  })
  .strict()
  .default({ failures: 3, cooldown_ms: 5_000, max_cooldown_ms: 60_000 });

/**
 * What the engine's machine costs, USD per hour (rent, or amortised hardware
 * and power). With it, each call's share of the engine's busy time is priced:
 * its measured cost (docs/measured-cost.md). Null: calls on it have none.
 */
const costPerHour = z.number().min(0).nullable().default(null);

/** Headers an engine request's framing owns (`src/engines/transport/`). */
const transportHeaders = new Set(['host', 'content-length', 'transfer-encoding', 'connection']);

/**
 * Each configured header is a valid name, one line, and not one of the
 * transport's: checked with node:http's own validators, the ones the engine
 * runs when it writes its request head, so a config that loads never fails there.
 */
function checkEngineHeaders(headers: Record<string, string> | undefined, context: z.RefinementCtx): void {
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (!passes(() => validateHeaderName(name))) context.addIssue({ code: 'custom', path: [name], message: 'must be an HTTP header name' });
    else if (transportHeaders.has(name.toLowerCase()))
      context.addIssue({ code: 'custom', path: [name], message: 'is set by taskgate itself' });
    else if (!passes(() => validateHeaderValue(name, value)))
      context.addIssue({ code: 'custom', path: [name], message: 'must be one line of text' });
  }
}

function passes(check: () => void): boolean {
  try {
    check();
    return true;
  } catch {
    return false;
  }
}

const openAIEngine = z
  .object({
    id: identifier,
    /** Any OpenAI-compatible server: vLLM, SGLang, llama.cpp server, Ollama, TGI. */
    type: z.literal('openai'),
    /** Base URL ending in `/v1`; `/chat/completions` is appended. */
    base_url: z.url({ protocol: /^https?$/ }),
    /** Sent as `Authorization: Bearer …` to the engine; usually `${ENV}` interpolated. */
    api_key: z.string().min(1).optional(),
    /** Calls sent to the engine at once (and connections kept to it); calls beyond this wait in a queue. */
    max_concurrency: z.number().int().min(1).max(4096).default(256),
    /** Calls that may wait for a free slot; past it a call gets 503 `engine_overloaded` with `retry-after` (another replica may take it). */
    max_queue: z.number().int().min(0).max(100_000).default(256),
    /** The longest a call waits in that queue before the same 503. */
    queue_timeout_ms: z.number().int().min(1).default(30_000),
    /** The HTTP client: `http1`, taskgate's own (the fastest), or `undici`, Node's (the reference). Both pass one suite of wire cases. */
    transport: z.enum(['http1', 'undici']).default('http1'),
    /** The router's shadow replays and judge calls on this engine at once: below its own capacity, so they never crowd out callers. Default max_concurrency / 8. */
    replay_concurrency: z.number().int().min(1).max(4096).optional(),
    /** Time to connect to the engine. */
    connect_timeout_ms: z.number().int().min(1).default(5_000),
    /** Time until the engine starts replying (a whole reply, when not streamed). */
    timeout_ms: z.number().int().min(1).default(120_000),
    /** Longest silence allowed between two chunks of a stream. */
    idle_timeout_ms: z.number().int().min(1).default(60_000),
    /** Extra headers sent to the engine: not the ones taskgate writes itself (the request's framing). */
    headers: z.record(z.string(), z.string()).optional().superRefine(checkEngineHeaders),
    cost_per_hour: costPerHour,
    circuit_breaker: circuitBreaker,
  })
  .strict();

const llamaCppEngine = z
  .object({
    id: identifier,
    /** GGUF models run in this process on the CPU (llama.cpp through node-llama-cpp): the embedded default. */
    type: z.literal('llama-cpp'),
    /**
     * Threads generating tokens, shared by all models of the process. Default:
     * `os.availableParallelism() - 1` (at least 1), leaving a CPU to Node.
     * More threads than free CPUs makes generation far slower, not faster.
     */
    threads: z.number().int().min(1).max(1024).optional(),
    /**
     * Which llama.cpp build runs: `auto` uses CUDA or Vulkan when their build
     * is installed (`TASKGATE_GPU_BUILDS=1 npm ci`) and the machine has the
     * GPU, else the CPU; `cuda`, `vulkan` or `metal` insist on one; `false`
     * stays on the CPU.
     */
    gpu: z.union([z.enum(['auto', 'cuda', 'vulkan', 'metal']), z.literal(false)]).default('auto'),
    /** Per model: calls that may wait for a free sequence. Beyond it a call gets 503 with `retry-after`. */
    max_queue: z.number().int().min(0).max(100_000).default(64),
    /** The router's shadow replays and judge calls on this engine at once (default 1: a model's sequences stay with callers). */
    replay_concurrency: z.number().int().min(1).max(256).optional(),
    cost_per_hour: costPerHour,
    circuit_breaker: circuitBreaker,
  })
  .strict();

const engine = z.discriminatedUnion('type', [openAIEngine, llamaCppEngine], {
  error: (issue) => (issue.code === 'invalid_union' ? 'unknown engine type; supported: openai, llama-cpp' : undefined),
});

const replica = z
  .object({
    /** An `engines[].id`. */
    engine: identifier,
    /** The model's name on that engine (e.g. the HF repo vLLM serves); defaults to the catalog id. */
    name: z.string().min(1).optional(),
    /**
     * llama-cpp only: the GGUF file, relative to the config file's folder.
     * Default, for a model of the default catalog: its file under
     * `<data dir>/models/` (`taskgate models pull <id>` puts it there).
     */
    file: z.string().min(1).optional(),
    /** llama-cpp only: calls generated at once, one context sequence each (memory grows with it). */
    sequences: z.number().int().min(1).max(256).optional(),
    /** llama-cpp only: tokens per sequence, prompt and reply; default min(context_window, 4096). */
    context_size: z.number().int().min(64).optional(),
  })
  .strict();

const model = z
  .object({
    /** Canonical id, returned as `model` in responses. */
    id: z
      .string()
      .min(1)
      .max(128)
      .regex(/^[^\s/]+$/, 'must not contain spaces or "/"'),
    /** Makes the provider-pinned form `<provider>/<id>` resolve here. */
    provider: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[^\s/]+$/, 'must not contain spaces or "/"')
      .optional(),
    /** Other names callers may use (e.g. `Qwen/Qwen2.5-7B-Instruct`). */
    aliases: z.array(z.string().min(1).max(256)).optional(),
    /** Replicas serving this model; the pool balances across them and fails over. */
    served_by: z.array(replica).min(1),
    /**
     * USD per million tokens: the cost of our own capacity. For a model of the
     * default catalog, this, `provider`, `aliases`, `context_window` and
     * `supports` default to the catalog's values.
     */
    price: z
      .object({ input: z.number().min(0), output: z.number().min(0) })
      .strict()
      .optional(),
    context_window: z.number().int().min(1).optional(),
    /** What the model can do; the router only offers a call to models that support what it needs. */
    supports: z.array(z.enum(['tools', 'json', 'vision'])).optional(),
  })
  .strict();

const configObject = z
  .object({
    server: z
      .object({
        /** Loopback by default: nothing outside this machine reaches taskgate until you say so (`0.0.0.0` for every interface). */
        host: z.string().min(1).default('127.0.0.1'),
        port: z.number().int().min(0).max(65_535).default(8080),
        /**
         * A second address serving only `GET /metrics`, without a key, for a
         * Prometheus on a private network. Without it `/metrics` is on the
         * main port and needs an admin key (a Bearer token in the scrape config).
         */
        metrics: z
          .object({ host: z.string().min(1).default('127.0.0.1'), port: z.number().int().min(0).max(65_535) })
          .strict()
          .nullable()
          .default(null),
        /** How long SIGTERM waits for calls in flight before cancelling them. */
        shutdown_timeout_ms: z.number().int().min(0).default(15_000),
        /** A comment line sent on a quiet stream so proxies keep it open. */
        stream_ping_interval_ms: z.number().int().min(100).default(15_000),
        /**
         * A streaming client that reads nothing for this long, while taskgate
         * has chunks waiting for it, is disconnected and its generation
         * cancelled (traced `client_stalled`), so it holds no engine slot.
         */
        stream_stall_timeout_ms: z.number().int().min(100).default(30_000),
        /** Time for a request's headers and body to arrive, answered 408 after it; 0 for no bound. The reply may take as long as it needs. */
        request_timeout_ms: z.number().int().min(0).default(30_000),
        /**
         * Slow connections one client address may hold: connections that have
         * spent over a second without sending a whole request (a stalled or
         * trickling upload, a socket opened and left silent), time the
         * server's own event loop was busy not counted. Past it, the
         * address's oldest slow connections are closed (408, or cut when
         * the request is already with a handler); no connection is refused,
         * so a prompt client on the same address is served. Behind a proxy
         * every client shares its address, so this caps them all together.
         * Per process. 0 for no cap.
         */
        max_slow_connections_per_address: z.number().int().min(0).default(64),
        /** Slow connections (as above) all addresses may hold together before the oldest are closed. Per process. 0 for no cap. */
        max_slow_connections: z.number().int().min(0).default(1_024),
      })
      .strict()
      .default({
        host: '127.0.0.1',
        port: 8080,
        metrics: null,
        shutdown_timeout_ms: 15_000,
        stream_ping_interval_ms: 15_000,
        stream_stall_timeout_ms: 30_000,
        request_timeout_ms: 30_000,
        max_slow_connections_per_address: 64,
        max_slow_connections: 1_024,
      }),
    engines: z.array(engine).default([]),
    models: z.array(model).default([]),
    routing: z
      .object({
        /**
         * The cost the router ranks candidates by: `catalog` (tokens × the
         * model's price) or `measured` (tokens × what its calls cost on
         * engines with a `cost_per_hour`, per token, as measured in this
         * process; a model with no measured cost yet keeps its catalog price).
         */
        cost: z.enum(['catalog', 'measured']).default('catalog'),
      })
      .strict()
      .default({ cost: 'catalog' }),
    limits: z
      .object({
        /** Per key, unless the key carries its own rate. */
        requests_per_minute: z.number().int().min(1).default(600),
        /** Per key, unless the key carries its own; null for no token limit. Prompt and completion tokens count. */
        tokens_per_minute: z.number().int().min(1).nullable().default(null),
        max_body_bytes: z
          .number()
          .int()
          .min(1024)
          .default(4 * 1024 * 1024),
        /**
         * Where the budgets live: in this process (`memory`), or in Redis,
         * shared by every process that names the same Redis, so N processes
         * give a key one budget, not N. `TASKGATE_REDIS_URL` overrides it.
         */
        backend: z
          .discriminatedUnion('type', [
            z.object({ type: z.literal('memory') }).strict(),
            z.object({ type: z.literal('redis'), url: z.string().regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL') }).strict(),
          ])
          .default({ type: 'memory' }),
      })
      .strict()
      .default({ requests_per_minute: 600, tokens_per_minute: null, max_body_bytes: 4 * 1024 * 1024, backend: { type: 'memory' } }),
    /**
     * Where everything is kept. SQLite (the default, `<data dir>/taskgate.db`)
     * for one machine; PostgreSQL for several processes or machines sharing
     * one service. `TASKGATE_DATABASE_URL` overrides it. The short form
     * `sqlite:<path>` is accepted too.
     */
    store: z
      .union([
        z.string().regex(/^sqlite:.+/, 'must be sqlite:<path>, or an object { type: sqlite | postgres, url }'),
        z.object({ type: z.literal('sqlite'), url: z.string().min(1) }).strict(),
        z
          .object({
            type: z.literal('postgres'),
            url: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL'),
            /** Connections per process. */
            pool_size: z.number().int().min(1).max(1_000).default(10),
          })
          .strict(),
      ])
      .optional(),
    traces: z
      .object({
        /** Keep request and reply bodies with each trace; a project's retention policy may keep fewer. */
        bodies: z.boolean().default(true),
        /** Days after which bodies are removed, for projects without a policy of their own; null keeps them. */
        bodies_ttl_days: z.number().positive().nullable().default(null),
        /** Days after which traces are removed (rollups stay), for projects without a policy; null keeps them. */
        ttl_days: z.number().positive().nullable().default(null),
        /** How often the pruner runs. */
        prune_interval_ms: z.number().int().min(1_000).default(600_000),
        /**
         * Longest a finished call's trace waits in memory before its batch is
         * written (a full batch of 256 goes at once). A kill -9 loses at most
         * the traces of this window; SIGTERM loses none.
         */
        flush_interval_ms: z.number().int().min(1).max(10_000).default(FLUSH_INTERVAL_MS),
      })
      .strict()
      .default({ bodies: true, bodies_ttl_days: null, ttl_days: null, prune_interval_ms: 600_000, flush_interval_ms: FLUSH_INTERVAL_MS }),
    logging: z
      .object({ level: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info') })
      .strict()
      .default({ level: 'info' }),
    /**
     * OpenTelemetry export of a span per chat call (docs/telemetry.md). Off
     * unless an endpoint is set here or in `OTEL_EXPORTER_OTLP_ENDPOINT` /
     * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (which override this one).
     */
    telemetry: z
      .object({
        otlp: z
          .object({
            /** The collector's OTLP/HTTP base URL (`http://collector:4318`); spans go to `<endpoint>/v1/traces`. */
            endpoint: z.url({ protocol: /^https?$/ }).optional(),
            /** `OTEL_EXPORTER_OTLP_PROTOCOL` overrides it; gRPC is not supported. */
            protocol: z.enum(['http/protobuf', 'http/json']).default('http/protobuf'),
            /** Sent with every export (a vendor's API key, usually `${ENV}` interpolated); `OTEL_EXPORTER_OTLP_HEADERS` adds to them. */
            headers: z.record(z.string(), z.string()).default({}),
          })
          .strict()
          .default({ protocol: 'http/protobuf', headers: {} }),
      })
      .strict()
      .default({ otlp: { protocol: 'http/protobuf', headers: {} } }),
  })
  .strict();

/**
 * The config schema over a model catalog (the built-in one, or
 * `TASKGATE_MODEL_CATALOG`): a model of the catalog takes what the config
 * leaves out from there.
 */
export function createConfigSchema(catalog: readonly DefaultModel[] = DEFAULT_MODELS) {
  const catalogEntry = (modelId: string) => catalog.find((model) => model.id === modelId);
  return configObject
    .superRefine((config, context) => checkReferences(config, context, catalogEntry))
    .transform((config) => ({
      ...config,
      models: config.models.map((modelConfig) => withCatalogDefaults(modelConfig, catalogEntry(modelConfig.id))),
    }));
}

type ParsedConfig = z.output<typeof configObject>;

/** Cross-field rules zod cannot state field by field; every issue names its path. */
function checkReferences(
  config: ParsedConfig,
  context: z.RefinementCtx,
  catalogEntry: (modelId: string) => DefaultModel | undefined,
): void {
  const engineTypes = new Map<string, string>();
  config.engines.forEach((engineConfig, index) => {
    if (engineTypes.has(engineConfig.id)) {
      context.addIssue({ code: 'custom', path: ['engines', index, 'id'], message: `duplicate engine id "${engineConfig.id}"` });
    }
    engineTypes.set(engineConfig.id, engineConfig.type);
  });
  const names = new Map<string, string>();
  config.models.forEach((modelConfig, modelIndex) => {
    const fromCatalog = catalogEntry(modelConfig.id);
    const at = (...path: Array<string | number>) => ['models', modelIndex, ...path];
    modelConfig.served_by.forEach((replicaConfig, replicaIndex) => {
      const type = engineTypes.get(replicaConfig.engine);
      const path = at('served_by', replicaIndex);
      if (type === undefined) {
        context.addIssue({ code: 'custom', path: [...path, 'engine'], message: `no engine with id "${replicaConfig.engine}" in engines` });
      } else if (type !== 'llama-cpp') {
        for (const key of ['file', 'sequences', 'context_size'] as const) {
          if (replicaConfig[key] !== undefined)
            context.addIssue({
              code: 'custom',
              path: [...path, key],
              message: `only for llama-cpp engines; "${replicaConfig.engine}" is ${type}`,
            });
        }
      } else if (replicaConfig.file === undefined && fromCatalog === undefined) {
        context.addIssue({
          code: 'custom',
          path: [...path, 'file'],
          message: `required: "${modelConfig.id}" is not in the default catalog, so name its GGUF file`,
        });
      }
    });
    if (fromCatalog === undefined) {
      if (modelConfig.price === undefined)
        context.addIssue({ code: 'custom', path: at('price'), message: `required: "${modelConfig.id}" is not in the default catalog` });
      if (modelConfig.context_window === undefined)
        context.addIssue({
          code: 'custom',
          path: at('context_window'),
          message: `required: "${modelConfig.id}" is not in the default catalog`,
        });
    }
    const claimed: Array<[string, (string | number)[]]> = [[modelConfig.id, at('id')]];
    (modelConfig.aliases ?? fromCatalog?.aliases ?? []).forEach((alias, aliasIndex) => claimed.push([alias, at('aliases', aliasIndex)]));
    for (const [name, path] of claimed) {
      const owner = names.get(name);
      if (owner !== undefined && owner !== modelConfig.id) {
        context.addIssue({ code: 'custom', path, message: `"${name}" already names model "${owner}"` });
      }
      names.set(name, modelConfig.id);
    }
  });
}

/** A model of the catalog takes what the config leaves out from there (checked above for the others). */
function withCatalogDefaults(modelConfig: ParsedConfig['models'][number], fromCatalog: DefaultModel | undefined) {
  return {
    ...modelConfig,
    provider: modelConfig.provider ?? fromCatalog?.provider,
    aliases: modelConfig.aliases ?? fromCatalog?.aliases ?? [],
    price: modelConfig.price ?? fromCatalog?.price ?? { input: 0, output: 0 },
    context_window: modelConfig.context_window ?? fromCatalog?.contextWindow ?? 1,
    supports: modelConfig.supports ?? fromCatalog?.supports ?? [],
    /** The catalog entry itself: where its file comes from, and its family (judges come from another one). */
    catalog: fromCatalog ?? null,
  };
}

export type Config = z.infer<ReturnType<typeof createConfigSchema>>;
export type EngineConfig = Config['engines'][number];
export type ModelConfig = Config['models'][number];
