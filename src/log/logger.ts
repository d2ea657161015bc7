/**
 * Structured JSON logs, one object a line on stderr (stdout stays for command
 * output such as a new key). Callers pass fields, never secrets: no key text,
 * no Authorization header, no prompt or reply content ever goes in a field.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /** A logger that adds `fields` to every line. */
  child(fields: LogFields): Logger;
}

export type LogFields = Record<string, string | number | boolean | null | undefined>;

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export function createLogger(options: { level: LogLevel; write?: (line: string) => void; fields?: LogFields }): Logger {
  const threshold = rank[options.level];
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  const base = options.fields ?? {};

  function log(level: Exclude<LogLevel, 'silent'>, message: string, fields?: LogFields): void {
    if (rank[level] < threshold) return;
    write(`${JSON.stringify({ time: new Date().toISOString(), level, msg: message, ...base, ...fields })}\n`);
  }

  return {
    debug: (message, fields) => log('debug', message, fields),
    info: (message, fields) => log('info', message, fields),
    warn: (message, fields) => log('warn', message, fields),
    error: (message, fields) => log('error', message, fields),
    child: (fields) => createLogger({ ...options, fields: { ...base, ...fields } }),
  };
}

/** A logger that drops everything; for tests and library use. */
export const silentLogger: Logger = createLogger({ level: 'silent' });

/** An error as log fields: its class, code and message, never its cause's payload. */
export function errorFields(error: unknown): LogFields {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return { error: error.name, error_message: error.message, error_code: typeof code === 'string' ? code : undefined };
  }
  return { error: String(error) };
}
