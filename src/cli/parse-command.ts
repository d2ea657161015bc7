/** Strict flag parsing for every command: an unknown flag or a missing value is a usage error that shows the command's help. */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './cli-error.js';

type Options = NonNullable<ParseArgsConfig['options']>;

export function parseCommand<T extends Options>(argv: string[], options: T, usage: string, allowPositionals = false) {
  try {
    const parsed = parseArgs({
      args: argv,
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals,
    });
    return { values: parsed.values, positionals: parsed.positionals, help: (parsed.values as Record<string, unknown>).help === true };
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error), usage);
  }
}

export function parseInteger(text: string | undefined, flag: string, usage: string, minimum: number, maximum: number): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < minimum || value > maximum)
    throw new UsageError(`${flag} must be an integer from ${minimum} to ${maximum}, got "${text}"`, usage);
  return value;
}

/** No (sub)command, or a request for help: print the usage. */
export function asksForHelp(argument: string | undefined): boolean {
  return argument === undefined || argument === '--help' || argument === '-h' || argument === 'help';
}
