/**
 * `response_format_valid`: the reply's content is what the request's
 * `response_format` asked for. `json_object`: content that parses as a JSON
 * object; `json_schema`: content that parses as JSON and validates against
 * `response_format.json_schema.schema` (a `json_schema` format without a
 * schema asks only for JSON). Strict JSON, as in json-schema-check.ts: a
 * reply in a Markdown code fence fails, because the caller's parser would.
 * Reference-free, so it also runs in the inline guard.
 *
 * Content that is not JSON fails even when the schema does not compile: the
 * caller asked for JSON either way. Only the schema part of the check is then
 * `not_applicable`.
 */
import type { EvalCheckOf } from './eval-contract.js';
import { excerpt, fail, notApplicable, pass, type SyncEvaluator } from './evaluator.js';
import { compileJsonSchema } from './json-schema-validator.js';
import { isJsonObject, parseJson } from './json-value.js';
import { contentForCheck } from './reply-shape.js';

export const evaluateResponseFormat: SyncEvaluator<EvalCheckOf<'response_format_valid'>> = (_check, { request, candidate }) => {
  const format = request.response_format;
  if (format === undefined || format.type === 'text') return notApplicable('the request asks for no JSON response format');
  const content = contentForCheck(candidate);
  if (typeof content !== 'string') return content;
  const parsed = parseJson(content);
  if (!parsed.ok) return fail(`response_format is ${format.type} but the content is not valid JSON (${parsed.error}): ${excerpt(content)}`);
  if (format.type === 'json_object') {
    return isJsonObject(parsed.value)
      ? pass
      : fail(`response_format is json_object but the content is not a JSON object: ${excerpt(content)}`);
  }
  const declared = format.json_schema.schema;
  if (declared === undefined) return pass;
  // Lenient, as for tool parameters: the caller wrote this schema for its provider, not for our strict contract rules.
  const schema = compileJsonSchema(declared);
  if (!schema.ok) return notApplicable(`the response_format schema does not compile (${schema.error})`);
  const problem = schema.validate(parsed.value);
  return problem === null ? pass : fail(`content does not match the response_format schema at ${problem}`);
};
