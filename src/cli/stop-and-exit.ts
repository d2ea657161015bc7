/**
 * How a serving process ends on a signal: it logs why, lets the calls in
 * flight finish and the traces flush (`Taskgate.stop`), says how many traces
 * were written and dropped, and exits 0, or 1 when stopping failed.
 */
import { errorFields, type LogFields, type Logger } from '../log/logger.js';
import type { Taskgate } from '../main.js';

export function stopAndExit(gateway: Taskgate, logger: Logger, why: LogFields): void {
  logger.info('stopping: finishing calls in flight', why);
  gateway.stop().then(
    () => {
      const stats = gateway.traces.stats();
      logger.info('stopped', { traces_written: stats.written, traces_dropped: stats.dropped });
      process.exit(0);
    },
    (error: unknown) => {
      logger.error('shutdown failed', errorFields(error));
      process.exit(1);
    },
  );
}

/** Calls `stop` once, with the signal's name, on the first SIGTERM or SIGINT; a second signal finds it already stopping. */
export function onStopSignal(stop: (signal: string) => void): void {
  let stopping = false;
  const once = (signal: string) => {
    if (stopping) return;
    stopping = true;
    stop(signal);
  };
  process.once('SIGTERM', () => once('SIGTERM'));
  process.once('SIGINT', () => once('SIGINT'));
}
