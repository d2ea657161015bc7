/**
 * `tool_call_valid`: the reply's tool calls are ones the caller can execute.
 * Each call names a tool of `request.tools`, its arguments are a JSON object
 * valid against that tool's `parameters`, and the calls respect the request's
 * `tool_choice` and `parallel_tool_calls`. Reference-free (the guard runs it
 * with `reference: null`); with a reference, a candidate that answers in text
 * where the requested model called a tool fails.
 *
 * A tool whose `parameters` schema does not compile cannot be checked; when
 * nothing else is wrong, the outcome is `not_applicable` rather than a pass.
 */
import type { FunctionTool, GenerationParameters, ToolCall } from '../api/chat-types.js';
import type { EvalCheckOf } from './eval-contract.js';
import { excerpt, fail, notApplicable, pass, type EvalOutcome, type SyncEvaluator } from './evaluator.js';
import { compileJsonSchema } from './json-schema-validator.js';
import { isJsonObject, parseJson } from './json-value.js';
import { toolCallsOf } from './reply-shape.js';

export const evaluateToolCallValid: SyncEvaluator<EvalCheckOf<'tool_call_valid'>> = (_check, { request, reference, candidate }) => {
  const calls = toolCallsOf(candidate);
  const choice = request.tool_choice;
  if (calls.length === 0) {
    if (choice === 'required') return fail('tool_choice is "required" but the reply calls no tool');
    if (typeof choice === 'object') return fail(`tool_choice names "${choice.function.name}" but the reply calls no tool`);
    if (reference !== null && toolCallsOf(reference).length > 0) return fail('the reference reply calls a tool; this reply calls none');
    return notApplicable('neither the reply nor the reference calls a tool');
  }
  if (choice === 'none') return fail('tool_choice is "none" but the reply calls a tool');
  if (request.parallel_tool_calls === false && calls.length > 1) {
    return fail(`parallel_tool_calls is false but the reply makes ${calls.length} calls`);
  }
  let uncheckable: string | null = null;
  for (const [index, call] of calls.entries()) {
    const outcome = checkCall(call, request);
    if (outcome.verdict === 'fail') return fail(`tool_calls[${index}]: ${outcome.reason}`);
    if (outcome.verdict === 'not_applicable') uncheckable ??= `tool_calls[${index}]: ${outcome.reason}`;
  }
  return uncheckable === null ? pass : notApplicable(uncheckable);
};

function checkCall(call: ToolCall, request: GenerationParameters): EvalOutcome {
  const name = call.function.name;
  const choice = request.tool_choice;
  if (typeof choice === 'object' && choice.function.name !== name) {
    return fail(`calls "${name}" but tool_choice names "${choice.function.name}"`);
  }
  const tool: FunctionTool | undefined = request.tools?.find((offered) => offered.function.name === name);
  if (tool === undefined) {
    const offered = request.tools?.map((offeredTool) => offeredTool.function.name) ?? [];
    const listed = offered.length > 10 ? `${offered.slice(0, 10).join(', ')}, …` : offered.join(', ');
    return fail(`calls "${name}", which is not an offered tool (${offered.length === 0 ? 'none are offered' : `offered: ${listed}`})`);
  }
  // OpenAI sends "{}" for a call without arguments; an empty string breaks the caller's JSON.parse, so it fails too.
  const parsed = parseJson(call.function.arguments);
  if (!parsed.ok) return fail(`arguments of "${name}" are not valid JSON (${parsed.error}): ${excerpt(call.function.arguments)}`);
  if (!isJsonObject(parsed.value)) return fail(`arguments of "${name}" are not a JSON object: ${excerpt(call.function.arguments)}`);
  const parameters = tool.function.parameters;
  if (parameters === undefined) return pass;
  const schema = compileJsonSchema(parameters);
  if (!schema.ok) return notApplicable(`the parameters schema of "${name}" does not compile (${schema.error})`);
  const problem = schema.validate(parsed.value);
  return problem === null ? pass : fail(`arguments of "${name}" do not match its parameters at ${problem}`);
}
