import type { Db } from '@pkgreg/db';
import {
  attestPendingVersions,
  checkpoint,
  logPendingVersions,
  type RegistrySigner,
  registerSigningKey,
  signPendingVersions,
} from '@pkgreg/registry';
import { type Logger, type PeriodicTask, startPeriodic } from '@pkgreg/server-kit';

// The registry's signer beside the API (docs/provenance.md): it publishes its key, then signs every
// version its key has not signed yet (as they are created, and the backlog at start), appends the public
// ones to the transparency log and signs a checkpoint when the log grew, and attests the versions built
// from a known commit (docs/provenance.md, "Provenance attestations"). Every API process runs it; one
// at a time signs, one at a time attests and one at a time appends (each step takes its own lock).

export async function startVersionSigner(
  db: Db,
  signer: RegistrySigner,
  options: {
    logger: Logger;
    intervalMs: number;
    logOrigin: string;
    /** The registry's public URL: the builder id its attestations name. */
    builderId: string;
  },
): Promise<PeriodicTask> {
  await registerSigningKey(db, signer);
  options.logger.info({ keyid: signer.keyId }, 'signing versions');
  return startPeriodic(
    async () => {
      // Drain the backlogs in batches within one tick; a tick with nothing new costs a few queries.
      for (;;) {
        const signed = await signPendingVersions(db, signer, { limit: 500 });
        if (signed === null || signed < 500) break;
      }
      for (;;) {
        const attested = await attestPendingVersions(db, signer, {
          limit: 500,
          builderId: options.builderId,
        });
        if (attested === null || attested < 500) break;
      }
      let appended = 0;
      for (;;) {
        const n = await logPendingVersions(db, { limit: 1000 });
        appended += n;
        if (n < 1000) break;
      }
      if (appended > 0) await checkpoint(db, signer, options.logOrigin);
    },
    { intervalMs: options.intervalMs, logger: options.logger, failureMessage: 'signing versions failed' },
  );
}
