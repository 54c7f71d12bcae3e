import { resolve } from 'node:path';
import type { Db } from '@pkgreg/db';
import {
  checkpoint,
  logOrigin,
  logPendingVersions,
  noteVerifierKey,
  publicKeyBase64,
} from '@pkgreg/registry';
import { type Command, InvalidArgumentError } from 'commander';
import { type Env, publishingSettings, registrySigner } from '../env.js';
import { parseLogKey, runWitness } from './log-witness.js';

// `pnpm registry log:append`, `log:key` and `log:verify` (docs/provenance.md, "Transparency log").
// log:verify exits 0 when the log verified, 1 on an alarm (a fork, a bad signature, a missing or altered
// entry, a missing version), 2 on bad usage, 3 when the log could not be checked (unreachable).

type WithDb = <T>(env: Env, fn: (db: Db) => Promise<T>) => Promise<T>;

const APPEND_BATCH = 1000;

function seconds(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 86_400 * 30)
    throw new InvalidArgumentError('whole seconds, up to 30 days');
  return n;
}

export function configureLogCommands(program: Command, env: Env, withDb: WithDb): void {
  const origin = () => logOrigin(publishingSettings(env).publicUrl);

  program
    .command('log:append')
    .description(
      'append every public version not in the transparency log yet, then sign a checkpoint with REGISTRY_SIGNING_KEY',
    )
    .action(() =>
      withDb(env, async (db) => {
        let appended = 0;
        for (;;) {
          const n = await logPendingVersions(db, { limit: APPEND_BATCH });
          appended += n;
          if (n < APPEND_BATCH) break;
        }
        const counted = `${appended} ${appended === 1 ? 'version' : 'versions'} appended`;
        const signer = registrySigner(env);
        if (!signer) {
          console.error(`${counted}; no signing key (REGISTRY_SIGNING_KEY): no checkpoint signed`);
          process.exitCode = 1;
          return;
        }
        const made = await checkpoint(db, signer, origin());
        console.log(
          made
            ? `${counted}; checkpoint size ${made.size} root ${made.rootHash.toString('base64')}`
            : `${counted}; the log is empty`,
        );
      }),
    );

  program
    .command('log:key')
    .description(
      "print the log's origin and public key (REGISTRY_SIGNING_KEY's) for witnesses: --key takes either form",
    )
    .action(() => {
      const signer = registrySigner(env);
      if (!signer) {
        console.error('no signing key: set REGISTRY_SIGNING_KEY or REGISTRY_SIGNING_KEY_FILE');
        process.exitCode = 2;
        return;
      }
      console.log(`origin ${origin()}`);
      console.log(`key    ${publicKeyBase64(signer.publicKey)}`);
      console.log(`vkey   ${noteVerifierKey(origin(), signer.publicKey)}`);
    });

  program
    .command('log:verify')
    .description(
      "witness the transparency log: the latest checkpoint's signature, its consistency with the last one seen, and a replay of the new entries",
    )
    .requiredOption(
      '--state <file>',
      'where this witness keeps the last checkpoint it verified (made at the first run)',
    )
    .option('--registry <url>', 'the registry to watch (default REGISTRY_PUBLIC_URL, else the local one)')
    .option(
      '--key <key>',
      "the log's public key, base64 SPKI or a note verifier key (log:key prints both); default the state's, else GET /api/keys at the first run",
    )
    .option('--origin <origin>', "the log's name (default the state's, else the first checkpoint's)")
    .option('--db', 'also check in DATABASE_URL that every public version is in the log')
    .option(
      '--grace <seconds>',
      'how old an unlogged version must be to count as missing (default 600)',
      seconds,
    )
    .action(
      async (options: {
        state: string;
        registry?: string;
        key?: string;
        origin?: string;
        db?: boolean;
        grace?: number;
      }) => {
        const key = options.key === undefined ? undefined : parseLogKey(options.key);
        if (options.key !== undefined && !key) {
          console.error('--key is neither a base64 Ed25519 SPKI key nor a note verifier key');
          process.exitCode = 2;
          return;
        }
        const run = (db?: Db) =>
          runWitness({
            registry: options.registry ?? publishingSettings(env).publicUrl,
            statePath: resolve(env.INIT_CWD ?? process.cwd(), options.state),
            key: key?.publicKey,
            origin: options.origin ?? key?.origin,
            db,
            graceMs: (options.grace ?? 600) * 1000,
          });
        const result = options.db ? await withDb(env, run) : await run();
        if (!result) return;
        if (result.status === 'ok') {
          console.log(
            result.size === 0
              ? 'ok: the log is empty'
              : `ok ${result.origin} size ${result.size} root ${result.root} (${result.replayed} new entries replayed)`,
          );
          return;
        }
        console.error(
          result.status === 'alarm' ? `ALARM: ${result.reason}` : `cannot check the log: ${result.reason}`,
        );
        process.exitCode = result.status === 'alarm' ? 1 : 3;
      },
    );
}
