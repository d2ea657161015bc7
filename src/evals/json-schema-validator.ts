/**
 * JSON Schema validation (ajv), compiled once per schema.
 *
 * Compiled validators are memoised in a bounded, module-level LRU keyed by the
 * schema's canonical JSON. This breaks the "no module-level singletons" habit
 * on purpose: compiling is a pure function of the schema, so the memo changes
 * speed, never behaviour, and threading a cache through every evaluator call
 * would make each signature worse for nothing. The bound matters because tool
 * schemas arrive with every request.
 *
 * Choices:
 * - The draft follows `$schema` (2020-12, 2019-09), else draft-07, which is
 *   what OpenAI-style tool and response schemas are written in.
 * - `format` is an annotation, not an assertion (as in 2019-09 and later),
 *   so a schema that says `"format": "date-time"` compiles and validates
 *   without a formats plugin.
 * - `lenient` (tool `parameters`, which callers send and we only forward) ignores
 *   unknown keywords; `strict` (schemas in an eval contract, which we own)
 *   rejects them, so a typo like `"requred"` is an error when the contract is
 *   set rather than a check that silently accepts everything.
 * - Each schema compiles in an ajv instance of its own (about 1.5 ms, once
 *   per schema thanks to the LRU): ajv registers a schema under its `$id`,
 *   so in a shared instance two callers' schemas with one `$id` would
 *   collide, and one that reused a meta-schema's `$id` could unregister it.
 *   The instance lives as long as its validator, no longer.
 * - Remote `$ref`s are never fetched: such a schema does not compile.
 */
import { Ajv, type ErrorObject, type Options } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { canonicalJson } from './json-value.js';

export type SchemaMode = 'lenient' | 'strict';

/** `validate` answers `null` when the value is valid, else why it is not. */
export type CompiledSchema = { ok: true; validate: (value: unknown) => string | null } | { ok: false; error: string };

const MAX_CACHED_SCHEMAS = 1_000;
const cache = new Map<string, CompiledSchema>();

type Draft = 'draft-07' | '2019-09' | '2020-12';
const metaValidators = new Map<Draft, Ajv>();

export function compileJsonSchema(schema: Record<string, unknown>, mode: SchemaMode = 'lenient'): CompiledSchema {
  const key = `${mode}\n${canonicalJson(schema)}`;
  const cached = cache.get(key);
  if (cached !== undefined) {
    // Re-insert: Map keeps insertion order, so the first key is the least recently used.
    cache.delete(key);
    cache.set(key, cached);
    return cached;
  }
  const compiled = compile(schema, mode);
  cache.set(key, compiled);
  if (cache.size > MAX_CACHED_SCHEMAS) {
    const oldest = cache.keys().next();
    if (oldest.done !== true) cache.delete(oldest.value);
  }
  return compiled;
}

function compile(schema: Record<string, unknown>, mode: SchemaMode): CompiledSchema {
  const draft = draftOf(schema);
  try {
    // Checked apart from compiling for the message: it names the schema's keyword ("schema/type …"), not "data/type".
    const meta = metaValidator(draft);
    if (meta.validateSchema(schema) === false)
      return { ok: false, error: `schema is invalid: ${meta.errorsText(meta.errors, { dataVar: 'schema' })}` };
    const validate = createAjv(draft, { ...optionsFor(mode), validateSchema: false }).compile(schema);
    return { ok: true, validate: (value) => (validate(value) ? null : describeErrors(validate.errors)) };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

function draftOf(schema: Record<string, unknown>): Draft {
  const declared = schema.$schema;
  if (typeof declared !== 'string') return 'draft-07';
  if (declared.includes('2020-12')) return '2020-12';
  if (declared.includes('2019-09')) return '2019-09';
  return 'draft-07';
}

/** Validating a schema against its meta-schema registers nothing, so one instance per draft serves every schema. */
function metaValidator(draft: Draft): Ajv {
  let ajv = metaValidators.get(draft);
  if (ajv === undefined) {
    ajv = createAjv(draft, optionsFor('lenient'));
    metaValidators.set(draft, ajv);
  }
  return ajv;
}

function optionsFor(mode: SchemaMode): Options {
  return {
    // Of ajv's strict rules only "unknown keyword" is worth an error: its type and tuple rules reject schemas that are fine.
    strict: false,
    strictSchema: mode === 'strict',
    validateFormats: false,
    allErrors: false,
    logger: false,
  };
}

function createAjv(draft: Draft, options: Options): Ajv {
  if (draft === '2020-12') return new Ajv2020(options);
  if (draft === '2019-09') return new Ajv2019(options);
  return new Ajv(options);
}

/** The first error, e.g. `/items/0/name: must be string`. */
function describeErrors(errors: ErrorObject[] | null | undefined): string {
  const error = errors?.[0];
  if (error === undefined) return 'does not match the schema';
  const where = error.instancePath === '' ? '(root)' : error.instancePath;
  const extra = error.params.additionalProperty;
  const detail = typeof extra === 'string' ? ` (${JSON.stringify(extra)})` : '';
  return `${where}: ${error.message ?? 'does not match the schema'}${detail}`;
}
