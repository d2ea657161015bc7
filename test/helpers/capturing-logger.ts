/** A logger whose lines tests can read back as parsed JSON. */
import { createLogger, type Logger } from '../../src/log/logger.js';

export interface LogLine {
  level: string;
  msg: string;
  [field: string]: unknown;
}

export function capturingLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const logger = createLogger({ level: 'debug', write: (line) => lines.push(JSON.parse(line) as LogLine) });
  return { logger, lines };
}
