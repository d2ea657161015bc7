import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from './errors.js';
import { validateChatRequest } from './validate-chat-request.js';
import { invalidRequestOf } from '../../test/helpers/invalid-request.js';

const request = (fields: Record<string, unknown>) =>
  validateChatRequest({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...fields });
const rejected = (fields: Record<string, unknown>): InvalidRequestError => invalidRequestOf(() => request(fields));

const weather = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } };
const custom = (name: string, format?: unknown) => ({ type: 'custom', custom: { name, ...(format === undefined ? {} : { format }) } });
const inputSchema = (description: string) => ({
  type: 'object',
  properties: { input: { type: 'string', description } },
  required: ['input'],
  additionalProperties: false,
});

describe('custom tools', () => {
  it('are offered to engines as functions taking one string, with the grammar as an instruction', () => {
    const checked = request({
      tools: [
        weather,
        { type: 'custom', custom: { name: 'free', description: 'Anything' } },
        custom('plain', { type: 'text' }),
        custom('sql', { type: 'grammar', grammar: { syntax: 'regex', definition: '^SELECT' } }),
        custom('lark', { type: 'grammar', grammar: { syntax: 'lark', definition: 'start: "a"' } }),
      ],
    });
    expect(checked.tools).toStrictEqual([
      weather,
      { type: 'function', function: { name: 'free', description: 'Anything', parameters: inputSchema('The input, as free-form text.') } },
      { type: 'function', function: { name: 'plain', parameters: inputSchema('The input, as free-form text.') } },
      { type: 'function', function: { name: 'sql', parameters: inputSchema('The input must match this regular expression:\n^SELECT') } },
      { type: 'function', function: { name: 'lark', parameters: inputSchema('The input must match this Lark grammar:\nstart: "a"') } },
    ]);
    expect(checked.notes).toStrictEqual({ ignoredFields: [], customTools: ['free', 'plain', 'sql', 'lark'], legacyFunctions: false });
  });

  it.each<[string, unknown, string]>([
    ['without custom', { type: 'custom' }, 'tools[0].custom'],
    ['without a name', { type: 'custom', custom: {} }, 'tools[0].custom.name'],
    ['with a name of spaces', custom('a b'), 'tools[0].custom.name'],
    ['with a format of another type', custom('x', { type: 'json' }), 'tools[0].custom.format.type'],
    ['with an extra format field', custom('x', { type: 'text', strict: true }), 'tools[0].custom.format.strict'],
    [
      'with a grammar without syntax',
      custom('x', { type: 'grammar', grammar: { definition: 'a' } }),
      'tools[0].custom.format.grammar.syntax',
    ],
    [
      'with a grammar in ebnf',
      custom('x', { type: 'grammar', grammar: { definition: 'a', syntax: 'ebnf' } }),
      'tools[0].custom.format.grammar.syntax',
    ],
    [
      'with a grammar without definition',
      custom('x', { type: 'grammar', grammar: { syntax: 'lark' } }),
      'tools[0].custom.format.grammar.definition',
    ],
  ])('a custom tool %s is a 400', (_name, tool, param) => {
    expect(rejected({ tools: [tool] }).param).toBe(param);
  });

  it('share one namespace with function tools', () => {
    expect(rejected({ tools: [weather, custom('get_weather')] }).param).toBe('tools[1].custom.name');
  });
});

describe('the legacy functions', () => {
  it('become function tools after the tools, and make the reply legacy only without tools', () => {
    const legacy = request({ functions: [{ name: 'get_time', description: 'Now', parameters: { type: 'object' }, strict: true }] });
    expect(legacy.tools).toStrictEqual([
      { type: 'function', function: { name: 'get_time', description: 'Now', parameters: { type: 'object' } } },
    ]);
    expect(legacy.parallel_tool_calls).toBe(false);
    expect(legacy.notes?.legacyFunctions).toBe(true);

    const mixed = request({ tools: [weather], functions: [{ name: 'get_time' }], parallel_tool_calls: true });
    expect(mixed.tools?.map((tool) => tool.function.name)).toStrictEqual(['get_weather', 'get_time']);
    expect(mixed.parallel_tool_calls).toBe(true);
    expect(mixed.notes).toBeUndefined();
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['an empty list', { functions: [] }, 'functions'],
    ['an object', { functions: { name: 'f' } }, 'functions'],
    ['a function without a name', { functions: [{ description: 'x' }] }, 'functions[0].name'],
    ['a name used by a tool', { tools: [weather], functions: [{ name: 'get_weather' }] }, 'functions[0].name'],
    ['129 functions', { functions: Array.from({ length: 129 }, (_, index) => ({ name: `f${index}` })) }, 'functions'],
    [
      '128 together with a tool',
      { tools: [weather], functions: Array.from({ length: 128 }, (_, index) => ({ name: `f${index}` })) },
      'functions',
    ],
  ])('%s is a 400', (_name, fields, param) => {
    expect(rejected(fields).param).toBe(param);
  });
});
