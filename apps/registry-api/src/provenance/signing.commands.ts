import { generateKeyPairSync } from 'node:crypto';
import type { Db } from '@pkgreg/db';
import {
  keyIdOf,
  publishedKeys,
  registerSigningKey,
  retireSigningKey,
  signAllVersions,
} from '@pkgreg/registry';
import type { Command } from 'commander';
import { type Env, registrySigner } from '../env.js';

// `pnpm registry keys:*` and `signatures:backfill` (docs/provenance.md, "Registry signatures").

type WithDb = <T>(env: Env, fn: (db: Db) => Promise<T>) => Promise<T>;

export function configureSigningCommands(program: Command, env: Env, withDb: WithDb): void {
  program
    .command('keys:generate')
    .description(
      'print a new Ed25519 signing key (PKCS#8 PEM) on stdout for REGISTRY_SIGNING_KEY(_FILE); its key id on stderr',
    )
    .action(() => {
      const { privateKey, publicKey } = generateKeyPairSync('ed25519');
      process.stdout.write(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
      console.error(
        `key id ${keyIdOf(publicKey)}: keep the PEM secret; the registry publishes the public key`,
      );
    });

  program
    .command('keys:list')
    .description('every key that signed versions, as GET /api/keys publishes them')
    .action(() => withDb(env, async (db) => console.log(JSON.stringify(await publishedKeys(db), null, 2))));

  program
    .command('keys:retire')
    .description(
      'stop trusting a key for new signatures (after its successor is configured); its signatures stay valid',
    )
    .argument('<keyid>')
    .option('--at <time>', 'from when (ISO 8601); now when not given')
    .action((keyid: string, options: { at?: string }) =>
      withDb(env, async (db) => {
        const at = options.at === undefined ? new Date() : new Date(options.at);
        if (Number.isNaN(at.getTime())) {
          console.error(`--at ${options.at} is not a time (ISO 8601)`);
          process.exitCode = 2;
          return;
        }
        if (!(await retireSigningKey(db, keyid, at))) {
          console.error(`no current key ${keyid} (keys:list shows them)`);
          process.exitCode = 1;
          return;
        }
        console.log(`${keyid} signs nothing from ${at.toISOString()}`);
      }),
    );

  program
    .command('signatures:backfill')
    .description(
      'sign every version the configured key (REGISTRY_SIGNING_KEY) has not signed, old ones included',
    )
    .action(() =>
      withDb(env, async (db) => {
        const signer = registrySigner(env);
        if (!signer) {
          console.error('no signing key: set REGISTRY_SIGNING_KEY or REGISTRY_SIGNING_KEY_FILE');
          process.exitCode = 1;
          return;
        }
        await registerSigningKey(db, signer);
        const signed = await signAllVersions(db, signer);
        console.log(`${signed} ${signed === 1 ? 'version' : 'versions'} signed with ${signer.keyId}`);
      }),
    );
}
