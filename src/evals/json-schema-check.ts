/**
 * `json_schema`: the reply's content parses as JSON and validates against the
 * contract's schema. Strict JSON: a reply wrapped in a Markdown code fence
 * fails, because the client that asked for JSON would fail to parse it too.
 * Reference-free, so it also runs in the inline guard.
 */
import type { EvalCheckOf } from './eval-contract.js';
import { excerpt, fail, notApplicable, pass, type SyncEvaluator } from './evaluator.js';
import { compileJsonSchema } from './json-schema-validator.js';
import { parseJson } from './json-value.js';
import { contentForCheck } from './reply-shape.js';

export const evaluateJsonSchema: SyncEvaluator<EvalCheckOf<'json_schema'>> = (check, { candidate }) => {
  const content = contentForCheck(candidate);
  if (typeof content !== 'string') return content;
  const parsed = parseJson(content);
  if (!parsed.ok) return fail(`content is not valid JSON (${parsed.error}): ${excerpt(content)}`);
  const schema = compileJsonSchema(check.schema);
  // Only a contract that skipped parseEvalContract gets here.
  if (!schema.ok) return notApplicable(`the schema does not compile (${schema.error})`);
  const problem = schema.validate(parsed.value);
  return problem === null ? pass : fail(`content does not match the schema at ${problem}`);
};
