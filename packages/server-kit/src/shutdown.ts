import type { Logger } from 'pino';

/**
 * Runs `close` once on SIGTERM or SIGINT, then exits. A second signal, or a close that takes longer
 * than `graceMs`, exits at once so an operator is never left waiting on a stuck shutdown.
 */
export function onShutdown(logger: Logger, close: () => Promise<void>, graceMs = 10_000): void {
  let closing = false;
  const handle = (signal: NodeJS.Signals) => {
    if (closing) {
      logger.warn({ signal }, 'second signal, exiting now');
      process.exit(1);
    }
    closing = true;
    logger.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      logger.error({ graceMs }, 'shutdown took too long, exiting');
      process.exit(1);
    }, graceMs);
    timer.unref();
    close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  // `on`, not `once`: with `once` a repeated SIGTERM finds no listener and kills the process by signal.
  process.on('SIGTERM', handle);
  process.on('SIGINT', handle);
}
