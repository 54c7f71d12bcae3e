import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDb, type Db, migrateToLatest } from '@pkgreg/db';
import { TEST_REDIS_URL, testKeyPrefix } from '@pkgreg/db/testing';
import {
  createDbNonceStore,
  createLocalRuntime,
  createTunnelReceiver,
  type LocalRuntime,
  type NonceStore,
  tunnelReceiverRoutes,
} from '@pkgreg/runtime';
import { openQueueJobs } from '@pkgreg/tasks';
import express from 'express';
import type { Harness } from './helpers.js';

// A tunnel session's local runtime behind its HTTP receiver (a session's `target`), in this process: the
// real receiver and local runtime on a schema of the test's database. It listens before the harness
// exists (the session setting names its URL) and serves once the clients it allows are known.

export interface TestReceiver {
  /** The receiver's URL, for the session's `target`. */
  target: string;
  /** Requests that reached it, in order. */
  seen: IncomingMessage[];
  /** The runtime's store, runtime and nonces: set by `serve`. */
  db: Db;
  runtime: LocalRuntime;
  nonces: NonceStore;
  serve(
    h: Harness,
    options: {
      sessionId: string;
      secret: string;
      schema: string;
      allowedClients: readonly string[];
      servesOwners?: boolean;
    },
  ): Promise<void>;
  close(): Promise<void>;
}

export async function listenReceiver(): Promise<TestReceiver> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const seen: IncomingMessage[] = [];
  const receiver: TestReceiver = {
    target: `http://127.0.0.1:${(server.address() as AddressInfo).port}/tunnel/mcp`,
    seen,
    db: undefined as never,
    runtime: undefined as never,
    nonces: undefined as never,
    async serve(h, options) {
      receiver.db = createDb(h.t.url, { schema: options.schema });
      await migrateToLatest(h.t.db, { schema: options.schema });
      receiver.runtime = createLocalRuntime({
        db: receiver.db,
        jobs: () => openQueueJobs({ connection: TEST_REDIS_URL, prefix: testKeyPrefix('receiver-q') }),
        syncThresholdMs: 300,
        pollWindowSeconds: 300,
      });
      receiver.nonces = createDbNonceStore(receiver.db);
      const app = express();
      app.use((req, _res, next) => {
        seen.push(req);
        next();
      });
      app.use(
        tunnelReceiverRoutes(
          createTunnelReceiver({
            sessionId: options.sessionId,
            secret: options.secret,
            nonces: receiver.nonces,
            runtime: receiver.runtime,
            allowedClients: options.allowedClients,
            servesOwners: options.servesOwners ?? false,
            onError: () => {},
          }),
        ),
      );
      server.on('request', app);
    },
    async close() {
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
      await receiver.runtime?.close();
      await receiver.db?.destroy();
    },
  };
  return receiver;
}
