/**
 * A worker of `taskgate serve --workers N`, forked by the primary
 * (`worker-fleet.ts`). It waits for the primary's start message (the settings
 * the primary loaded, so every worker serves the same config), then runs the
 * whole gateway as a lone process would, but for what the primary does once
 * for all: it makes no admin key, its memory rate limits are the primary's
 * (`limits/cluster/`), its `/metrics` answers with every worker's sum, and
 * the first start's download is the primary's. Its log lines carry `worker`
 * (its slot).
 *
 * It stops, finishing its calls in flight, when the primary says so, and on
 * SIGTERM or SIGINT (Ctrl-C reaches every process of the group). When the
 * primary itself goes away, node:cluster ends the worker at once, so no
 * worker outlives it.
 */
import { createClusterRateLimiter } from '../limits/cluster/cluster-rate-limiter.js';
import { createLogger, type Logger } from '../log/logger.js';
import { startTaskgate, type Taskgate } from '../main.js';
import { createModelDownloads } from '../models/model-downloads.js';
import { stopAndExit } from '../process/stop-and-exit.js';
import { asToWorker, type ToPrimary, type ToWorker } from './fleet-messages.js';
import { channelToPrimary } from '../ipc/message-channel.js';
import { createWorkerMetrics } from './worker-metrics.js';

const channel = channelToPrimary();
const waitForStart = channel.subscribe((raw) => {
  const message = asToWorker(raw);
  if (message?.type !== 'fleet:start') return;
  waitForStart();
  void serve(message);
});
channel.send({ type: 'fleet:hello' } satisfies ToPrimary);

async function serve(start: Extract<ToWorker, { type: 'fleet:start' }>): Promise<void> {
  const { settings, slot } = start;
  const logger = createLogger({ level: settings.config.logging.level, fields: { worker: slot } });
  const downloads = createModelDownloads();
  for (const [path, progress] of start.downloads) downloads.update(path, progress);
  let gateway: Taskgate | null = null;
  let stopReason: string | null = null;

  const stop = (reason: string) => {
    if (stopReason !== null) return;
    stopReason = reason;
    // Asked during the start: the start finishes first, then stops (below).
    if (gateway !== null) finish(gateway, reason, logger);
  };
  channel.subscribe((raw) => {
    const message = asToWorker(raw);
    if (message?.type === 'fleet:stop') stop('asked by the primary');
    else if (message?.type === 'fleet:download') {
      if (message.progress === null) downloads.end(message.path);
      else downloads.update(message.path, message.progress);
    }
  });
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));

  const limiter =
    settings.limits.type === 'memory' ? createClusterRateLimiter({ channel, logger: logger.child({ part: 'limits' }) }) : undefined;
  try {
    gateway = await startTaskgate(settings, logger, {
      downloads,
      limiter,
      bootstrapAdminKey: false,
      metrics: (local) => createWorkerMetrics({ local, channel, slot }),
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | null)?.code;
    const syscall = (error as NodeJS.ErrnoException | null)?.syscall;
    const failed: ToPrimary = {
      type: 'fleet:start-failed',
      message: error instanceof Error ? error.message : String(error),
      code: typeof code === 'string' ? code : null,
      syscall: typeof syscall === 'string' ? syscall : null,
    };
    // Exit once the message is on its way: the primary explains the failure.
    if (process.send === undefined || !process.connected) process.exit(1);
    process.send(failed, undefined, {}, () => process.exit(1));
    return;
  }
  channel.send({ type: 'fleet:listening', port: gateway.port } satisfies ToPrimary);
  logger.info('worker listening', { pid: process.pid, port: gateway.port });
  if (stopReason !== null) finish(gateway, stopReason, logger);
}

function finish(gateway: Taskgate, reason: string, logger: Logger): void {
  stopAndExit(gateway, logger, { reason });
}
