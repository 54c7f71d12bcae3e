import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpPackageFinder, runAgentInvoke, runMemoryCompact } from '@pkgreg/agents';
import { deleteExpiredIdempotencyRecords } from '@pkgreg/memory';
import {
  createDbNonceStore,
  createLocalRuntime,
  createTunnelReceiver,
  tunnelReceiverRoutes,
} from '@pkgreg/runtime';
import { closeServer, type Logger, type PeriodicTask, startPeriodic } from '@pkgreg/server-kit';
import { purgeExpiredTasks, startInProcessJobs } from '@pkgreg/tasks';
import express from 'express';
import { type DialOut, dialOut } from './dial-out.js';
import type { Config } from './env.js';
import { openStore } from './store.js';

// A tunnel session's local runtime: the edge admits and signs each call, this process checks the
// envelope (signature, session, body hash, expiry, nonce once) and runs the call on its own memory and
// tasks, with the edge's own local Runtime (@pkgreg/runtime) and the worker's own jobs (@pkgreg/agents)
// run in-process. It serves only the tunnel: the connection it dials out to the edge and, when asked
// for, the HTTP receiver for a session whose `target` points here.

export interface RunningRuntime {
  /** The HTTP receiver's address, when it listens. */
  address?: AddressInfo;
  close(): Promise<void>;
}

const SWEEP_EVERY_MS = 5 * 60_000;

export async function startLocalRuntime(
  config: Config,
  logger: Logger,
  events: { onReplaced(): void },
): Promise<RunningRuntime> {
  const store = await openStore(config.store);
  const { db } = store;
  const closers: (() => Promise<unknown>)[] = [() => store.close()];
  const closeAll = async () => {
    for (const close of closers.reverse())
      await close().catch((error: unknown) => logger.warn({ err: error }, 'close failed'));
  };
  try {
    const deps = {
      db,
      finder: createHttpPackageFinder(config.registry.url, config.registry.timeoutMs),
      model: config.model,
      pollWindowSeconds: config.pollWindowSeconds,
    };
    const jobs = await startInProcessJobs({
      db,
      handlers: {
        'agent.invoke': (payload) => runAgentInvoke(deps, payload),
        'memory.compact': (payload) => runMemoryCompact(deps, payload),
      },
      concurrency: config.concurrency,
      pollWindowSeconds: config.pollWindowSeconds,
      onFailure: (error, job) =>
        logger.warn({ err: error, job: job.name, attempt: job.attempt, final: job.final }, 'job failed'),
    });
    const runtime = createLocalRuntime({
      db,
      jobs: async () => jobs,
      syncThresholdMs: config.syncThresholdMs,
      pollWindowSeconds: config.pollWindowSeconds,
    });
    closers.push(() => runtime.close());
    const nonces = createDbNonceStore(db);
    const receiver = createTunnelReceiver({
      sessionId: config.sessionId,
      secret: config.secret,
      nonces,
      runtime,
      allowedClients: config.clients,
      servesOwners: config.servesOwners,
      onError: (error) => logger.error({ err: error }, 'tunnel call failed'),
    });

    // Expired nonces, tasks past their poll window and day-old idempotency records: the runtime worker's
    // purge job does this for the edge's database.
    const sweep: PeriodicTask = startPeriodic(
      async () => {
        await nonces.sweep();
        await purgeExpiredTasks(db);
        await deleteExpiredIdempotencyRecords(db);
      },
      { intervalMs: SWEEP_EVERY_MS, logger, failureMessage: 'sweep failed' },
    );
    closers.push(() => sweep.stop());

    let server: Server | undefined;
    if (config.listen) {
      const app = express();
      app.disable('x-powered-by');
      app.use(tunnelReceiverRoutes(receiver));
      const listening = createServer(app);
      await new Promise<void>((resolve, reject) => {
        listening.once('error', reject);
        listening.listen(config.listen?.port, config.listen?.host, resolve);
      });
      server = listening;
      closers.push(() => closeServer(listening));
    }

    let dial: DialOut | undefined;
    if (config.edgeUrl) {
      dial = dialOut({
        edgeUrl: config.edgeUrl,
        sessionId: config.sessionId,
        secret: config.secret,
        receiver,
        logger,
        heartbeat: config.heartbeat,
        reconnect: config.reconnect,
        onReplaced: events.onReplaced,
      });
      const opened = dial;
      closers.push(() => opened.close());
    }

    const address = server?.address() as AddressInfo | undefined;
    logger.info(
      {
        sessionId: config.sessionId,
        clients: config.clients,
        store: store.description,
        edge: config.edgeUrl ?? null,
        receiver: address ? `http://${address.address}:${address.port}/tunnel/mcp` : null,
      },
      'local runtime started',
    );
    return { ...(address ? { address } : {}), close: closeAll };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
