/**
 * How a serving process ends on a signal: it logs why, lets the calls in
 * flight finish and the traces flush (`Taskgate.stop`), says how many traces
 * were written and dropped, and exits 0, or 1 when stopping failed. Both the
 * `taskgate serve` process (`cli/`) and a worker of `serve --workers`
 * (`cluster/`) end this way, so it lives below both.
 */
import { errorFields, type LogFields, type Logger } from '../log/logger.js';

/** What stopping needs of a running gateway (`Taskgate` in `src/main.ts` has it). */
export interface StoppableGateway {
  /** Finishes the calls in flight, flushes the traces and closes everything. */
  stop(): Promise<void>;
  /** The trace writer's totals, read once stopped. */
  readonly traces: { stats(): { written: number; dropped: number } };
}

export function stopAndExit(gateway: StoppableGateway, logger: Logger, why: LogFields): void {
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

/**
 * Calls `stop` once, with the signal's name, on the first SIGTERM or SIGINT;
 * later ones find it already stopping. They are still listened for: one
 * Ctrl-C reaches this process twice when `taskgate serve` relaunched it
 * (`cli/relaunch-with-flags.ts`: from the terminal, and passed on), as under
 * `npm start`, and a second SIGINT unheard would end it at once.
 *
 * A process started with an IPC channel (the relaunched one is) also stops
 * when the channel closes, that is when its parent is gone, even killed
 * with SIGKILL: it does not serve on, orphaned, holding the port.
 */
export function onStopSignal(stop: (signal: string) => void): void {
  let stopping = false;
  const once = (signal: string) => {
    if (stopping) return;
    stopping = true;
    stop(signal);
  };
  process.on('SIGTERM', () => once('SIGTERM'));
  process.on('SIGINT', () => once('SIGINT'));
  if (process.channel !== undefined) {
    // Gone already, while this process started: stop once the caller has set up.
    if (!process.connected) setImmediate(() => once('parent process gone'));
    else process.once('disconnect', () => once('parent process gone'));
    // Listening for 'disconnect' holds the event loop open; the channel must not keep the process alive.
    process.channel.unref();
  }
}
