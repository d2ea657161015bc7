import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from './errors.js';
import { validateChatRequest } from './validate-chat-request.js';
import { invalidRequestOf } from '../../test/helpers/invalid-request.js';

const request = (fields: Record<string, unknown>) =>
  validateChatRequest({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...fields });
const rejected = (fields: Record<string, unknown>): InvalidRequestError => invalidRequestOf(() => request(fields));

const fn = (name: string) => ({ type: 'function', function: { name } });
const custom = (name: string) => ({ type: 'custom', custom: { name } });
const tools = [fn('a'), custom('b'), fn('c')];
const allowed = (mode: unknown, list: unknown) => ({ tools, tool_choice: { type: 'allowed_tools', allowed_tools: { mode, tools: list } } });
const names = (fields: Record<string, unknown>) => request(fields).tools?.map((tool) => tool.function.name);

describe('tool_choice', () => {
  it('chooses a custom tool as the function engines see', () => {
    expect(request({ tools, tool_choice: custom('b') }).tool_choice).toStrictEqual({ type: 'function', function: { name: 'b' } });
    expect(request({ tools, tool_choice: fn('a') }).tool_choice).toStrictEqual({ type: 'function', function: { name: 'a' } });
  });

  it('narrows tools to allowed_tools, in the order of tools, with its mode', () => {
    expect(names(allowed('required', [fn('c'), custom('b'), fn('c')]))).toStrictEqual(['b', 'c']);
    expect(request(allowed('required', [fn('c')])).tool_choice).toBe('required');
    expect(request(allowed('auto', [fn('a')])).tool_choice).toBe('auto');
    const none = request(allowed('auto', []));
    expect(none.tool_choice).toBe('none');
    expect(none.tools).toHaveLength(3);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a custom choice of a function tool', { tools, tool_choice: custom('a') }, 'tool_choice.custom.name'],
    ['a function choice of a custom tool', { tools, tool_choice: fn('b') }, 'tool_choice.function.name'],
    ['a custom choice without custom', { tools, tool_choice: { type: 'custom' } }, 'tool_choice.custom'],
    ['a choice of another type', { tools, tool_choice: { type: 'any' } }, 'tool_choice.type'],
    ['allowed_tools without the object', { tools, tool_choice: { type: 'allowed_tools' } }, 'tool_choice.allowed_tools'],
    ['allowed_tools without mode', allowed(undefined, [fn('a')]), 'tool_choice.allowed_tools.mode'],
    ['allowed_tools in mode none', allowed('none', [fn('a')]), 'tool_choice.allowed_tools.mode'],
    ['allowed_tools without a list', allowed('auto', undefined), 'tool_choice.allowed_tools.tools'],
    ['allowed_tools required of none', allowed('required', []), 'tool_choice.allowed_tools.tools'],
    ['allowed_tools with a string', allowed('auto', ['a']), 'tool_choice.allowed_tools.tools[0]'],
    [
      'allowed_tools with a reference without type',
      allowed('auto', [{ function: { name: 'a' } }]),
      'tool_choice.allowed_tools.tools[0].type',
    ],
    ['allowed_tools naming a missing tool', allowed('auto', [fn('z')]), 'tool_choice.allowed_tools.tools[0].function.name'],
    ['allowed_tools of the wrong kind', allowed('auto', [fn('b')]), 'tool_choice.allowed_tools.tools[0].function.name'],
  ])('%s is a 400', (_name, fields, param) => {
    expect(rejected(fields).param).toBe(param);
  });
});

describe('the legacy function_call', () => {
  const functions = [{ name: 'f' }, { name: 'g' }];
  it('becomes tool_choice', () => {
    expect(request({ functions, function_call: 'none' }).tool_choice).toBe('none');
    expect(request({ functions, function_call: 'auto' }).tool_choice).toBe('auto');
    expect(request({ functions, function_call: { name: 'g' } }).tool_choice).toStrictEqual({ type: 'function', function: { name: 'g' } });
  });

  it('is ignored, and said to be, when tool_choice is sent too', () => {
    const checked = request({ functions, tool_choice: 'required', function_call: { name: 'g' } });
    expect(checked.tool_choice).toBe('required');
    expect(checked.notes?.ignoredFields).toStrictEqual(['function_call']);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['without functions', { function_call: 'auto' }, 'function_call'],
    ['"required", which it never had', { functions, function_call: 'required' }, 'function_call'],
    ['a number', { functions, function_call: 1 }, 'function_call'],
    ['without a name', { functions, function_call: {} }, 'function_call.name'],
    ['naming a missing function', { functions, function_call: { name: 'h' } }, 'function_call.name'],
    ['naming a custom tool', { tools: [custom('b')], functions, function_call: { name: 'b' } }, 'function_call.name'],
  ])('%s is a 400', (_name, fields, param) => {
    expect(rejected(fields).param).toBe(param);
  });
});
