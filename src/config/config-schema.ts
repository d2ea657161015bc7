/**
 * The taskgate config file, declared once with every setting documented where
 * it is declared. Parsing is strict: an unknown key is an error that names its
 * path, so a typo never silently falls back to a default.
 */
import { z } from 'zod';

const identifier = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'must be 1-64 letters, digits, ".", "_" or "-"');

const openAIEngine = z
  .object({
    id: identifier,
    /** Any OpenAI-compatible server: vLLM, SGLang, llama.cpp server, Ollama, TGI. */
    type: z.literal('openai'),
    /** Base URL ending in `/v1`; `/chat/completions` is appended. */
    base_url: z.url({ protocol: /^https?$/ }),
    /** Sent as `Authorization: Bearer …` to the engine; usually `${ENV}` interpolated. */
    api_key: z.string().min(1).optional(),
    /** Connections kept open to the engine; calls beyond this wait in undici's queue. */
    max_concurrency: z.number().int().min(1).max(4096).default(256),
    /** Time to connect to the engine. */
    connect_timeout_ms: z.number().int().min(1).default(5_000),
    /** Time until the engine starts replying (a whole reply, when not streamed). */
    timeout_ms: z.number().int().min(1).default(120_000),
    /** Longest silence allowed between two chunks of a stream. */
    idle_timeout_ms: z.number().int().min(1).default(60_000),
    /** Extra headers sent to the engine. */
    headers: z.record(z.string(), z.string()).optional(),
    /** A replica on this engine that fails `failures` times in a row is taken out for `cooldown_ms`, doubling up to `max_cooldown_ms`. */
    circuit_breaker: z
      .object({
        failures: z.number().int().min(1).default(3),
        cooldown_ms: z.number().int().min(0).default(5_000),
        max_cooldown_ms: z.number().int().min(0).default(60_000),
      })
      .strict()
      .default({ failures: 3, cooldown_ms: 5_000, max_cooldown_ms: 60_000 }),
  })
  .strict();

const engine = z.discriminatedUnion('type', [openAIEngine], {
  error: (issue) =>
    issue.code === 'invalid_union' ? 'unknown engine type; supported: openai' : undefined,
});

const replica = z
  .object({
    /** An `engines[].id`. */
    engine: identifier,
    /** The model's name on that engine (e.g. the HF repo vLLM serves); defaults to the catalog id. */
    name: z.string().min(1).optional(),
  })
  .strict();

const model = z
  .object({
    /** Canonical id, returned as `model` in responses. */
    id: z.string().min(1).max(128).regex(/^[^\s/]+$/, 'must not contain spaces or "/"'),
    /** Makes the provider-pinned form `<provider>/<id>` resolve here. */
    provider: z.string().min(1).max(64).regex(/^[^\s/]+$/, 'must not contain spaces or "/"').optional(),
    /** Other names callers may use (e.g. `Qwen/Qwen2.5-7B-Instruct`). */
    aliases: z.array(z.string().min(1).max(256)).default([]),
    /** Replicas serving this model; the pool balances across them and fails over. */
    served_by: z.array(replica).min(1),
    /** USD per million tokens: the cost of our own capacity. */
    price: z.object({ input: z.number().min(0), output: z.number().min(0) }).strict(),
    context_window: z.number().int().min(1),
    /** What the model can do; the router only offers a call to models that support what it needs. */
    supports: z.array(z.enum(['tools', 'json', 'vision'])).default([]),
  })
  .strict();

export const configSchema = z
  .object({
    server: z
      .object({
        host: z.string().min(1).default('0.0.0.0'),
        port: z.number().int().min(0).max(65_535).default(8080),
        /** How long SIGTERM waits for calls in flight before cancelling them. */
        shutdown_timeout_ms: z.number().int().min(0).default(15_000),
        /** A comment line sent on a quiet stream so proxies keep it open. */
        stream_ping_interval_ms: z.number().int().min(100).default(15_000),
      })
      .strict()
      .default({ host: '0.0.0.0', port: 8080, shutdown_timeout_ms: 15_000, stream_ping_interval_ms: 15_000 }),
    engines: z.array(engine).default([]),
    models: z.array(model).default([]),
    limits: z
      .object({
        /** Per key, unless the key carries its own rate. */
        requests_per_minute: z.number().int().min(1).default(600),
        max_body_bytes: z.number().int().min(1024).default(4 * 1024 * 1024),
      })
      .strict()
      .default({ requests_per_minute: 600, max_body_bytes: 4 * 1024 * 1024 }),
    /** `sqlite:<path>`; defaults to `sqlite:<data dir>/taskgate.db`. */
    store: z.string().regex(/^sqlite:.+/, 'must be sqlite:<path> (postgres:// comes with the PostgreSQL back end)').optional(),
    /** Reserved for shared limits and route notices across processes. */
    redis: z.null().optional(),
    traces: z
      .object({
        /** Keep request and reply bodies with each trace (routing replays them). */
        bodies: z.boolean().default(true),
      })
      .strict()
      .default({ bodies: true }),
    logging: z
      .object({ level: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info') })
      .strict()
      .default({ level: 'info' }),
  })
  .strict()
  .superRefine((config, context) => {
    const engineIds = new Set<string>();
    config.engines.forEach((engineConfig, index) => {
      if (engineIds.has(engineConfig.id)) {
        context.addIssue({ code: 'custom', path: ['engines', index, 'id'], message: `duplicate engine id "${engineConfig.id}"` });
      }
      engineIds.add(engineConfig.id);
    });
    const names = new Map<string, string>();
    config.models.forEach((modelConfig, modelIndex) => {
      modelConfig.served_by.forEach((replicaConfig, replicaIndex) => {
        if (!engineIds.has(replicaConfig.engine)) {
          context.addIssue({
            code: 'custom',
            path: ['models', modelIndex, 'served_by', replicaIndex, 'engine'],
            message: `no engine with id "${replicaConfig.engine}" in engines`,
          });
        }
      });
      const claimed: Array<[string, (string | number)[]]> = [[modelConfig.id, ['models', modelIndex, 'id']]];
      modelConfig.aliases.forEach((alias, aliasIndex) => claimed.push([alias, ['models', modelIndex, 'aliases', aliasIndex]]));
      for (const [name, path] of claimed) {
        const owner = names.get(name);
        if (owner !== undefined && owner !== modelConfig.id) {
          context.addIssue({ code: 'custom', path, message: `"${name}" already names model "${owner}"` });
        }
        names.set(name, modelConfig.id);
      }
    });
  });

export type Config = z.infer<typeof configSchema>;
export type EngineConfig = Config['engines'][number];
export type ModelConfig = Config['models'][number];
