import { randomBytes } from 'node:crypto';
import { NamespaceSchema } from '@pkgreg/contracts';
import { createDb, type Db } from '@pkgreg/db';
import { listQuarantined, purgeNamespace, quarantineNamespace, releaseNamespace } from '@pkgreg/memory';
import { DELEGATION_LIFETIME_SECONDS } from '@pkgreg/server-kit';
import { Command, InvalidArgumentError } from 'commander';
import { clientNamespace } from './admission/access.js';
import { removeOwner, setOwner } from './admission/access.repository.js';
import {
  allowClient,
  type GrantTarget,
  listGrants,
  resolveClient,
  revokeClient,
  UnknownClientError,
} from './admission/access.service.js';
import { listAuditRows } from './audit/audit.repository.js';
import { loadEnv, type TunnelSession, TunnelSessionSchema } from './env.js';
import {
  createClient,
  disableClient,
  InvalidRedirectUriError,
  listClients,
  resetDemoClient,
  UnknownScopeError,
} from './oauth/clients.service.js';
import {
  ensureActiveKey,
  type KeyPurpose,
  listAllKeys,
  rotateSigningKey,
} from './oauth/signing-keys.service.js';

// Operator commands: `pnpm edge <command>`. They talk to the database directly; the running edge picks
// up key rotations and client changes on its own.

// Exit codes as the registry CLIs (README.md): 1 an error (bad configuration, a refused change), 2 a
// usage error (unknown command or option, invalid argument).
let env: ReturnType<typeof loadEnv>;
try {
  env = loadEnv();
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}

async function withDb(run: (db: Db) => Promise<void>): Promise<void> {
  const db = createDb(env.DATABASE_URL, { max: 2, applicationName: 'pkgreg-edge-cli' });
  try {
    await run(db);
  } finally {
    await db.destroy();
  }
}

function namespaceArg(value: string): string {
  if (!NamespaceSchema.safeParse(value).success) throw new InvalidArgumentError('expected app: + 64 hex');
  return value;
}

function nameArg(value: string): string {
  const name = value.trim();
  if (name === '' || name.length > 200) throw new InvalidArgumentError('expected a name of 1-200 characters');
  return name;
}

function scopesArg(value: string): string[] {
  const scopes = value.split(/[\s,]+/).filter(Boolean);
  if (scopes.length === 0) throw new InvalidArgumentError('expected at least one scope');
  return scopes;
}

function positive(value: string): number {
  const n = Number.parseInt(value, 10);
  if (!Number.isInteger(n) || n < 1 || n > 10_000) throw new InvalidArgumentError('expected 1..10000');
  return n;
}

const print = (value: unknown) => console.log(JSON.stringify(value, null, 2));
const issuer = () => `${env.PKGREG_PUBLIC_BASE_URL}/mcp`;

/** Commander's collector for a repeatable option. */
const collect = (value: string, previous: string[] = []) => [...previous, value];

/**
 * The tenant or tunnel session a grant command names, with the clients its seeded setting allows; an
 * unknown one is an error (a typo would otherwise grant nothing anyone notices).
 */
function grantTarget(mode: GrantTarget['mode'], backendId: string): GrantTarget & { seeded: string[] } {
  const seeded =
    mode === 'hosted'
      ? env.PKGREG_PUBLIC_MCP_HOSTED_BINDINGS_JSON.filter((b) => b.tenant === backendId)
      : env.PKGREG_PUBLIC_MCP_TUNNEL_SESSIONS_JSON.filter((s) => s.sessionId === backendId);
  if (!seeded.length) {
    program.error(
      mode === 'hosted'
        ? `no hosted tenant ${backendId} in PKGREG_PUBLIC_MCP_HOSTED_BINDINGS_JSON`
        : `no tunnel session ${backendId} in PKGREG_PUBLIC_MCP_TUNNEL_SESSIONS_JSON`,
    );
  }
  return { mode, backendId, seeded: seeded.flatMap((b) => b.clients) };
}

/** An owner named on the command line: an account by its email, an organisation by its slug. */
async function findOwner(
  db: Db,
  named: { account?: string; org?: string },
): Promise<{ accountId: string } | { organizationId: string } | undefined> {
  if (named.account !== undefined) {
    const row = await db
      .selectFrom('auth_user')
      .select('id')
      .where('email', '=', named.account.trim().toLowerCase())
      .executeTakeFirst();
    return row && { accountId: row.id };
  }
  const row = await db
    .selectFrom('auth_organization')
    .select('id')
    .where('slug', '=', String(named.org).trim())
    .executeTakeFirst();
  return row && { organizationId: row.id };
}

/**
 * `<kind>:allow`, `<kind>:revoke`, `<kind>:own`, `<kind>:disown` and `<kind>:clients` for hosted
 * tenants and tunnel sessions.
 */
function grantCommands(
  kind: 'tenants' | 'tunnels',
  mode: GrantTarget['mode'],
  what: string,
  arg: string,
): void {
  program
    .command(`${kind}:allow <${arg}> <client>`)
    .description(
      `let a client (its id, or app:<namespace> for a trusted issuer's) use a ${what}; every edge applies it at once`,
    )
    .action(async (id: string, client: string) =>
      withDb(async (db) => {
        const target = grantTarget(mode, id);
        try {
          const added = await allowClient(db, issuer(), target, client);
          console.log(added ? `allowed ${client} on ${id}` : `${client} was already allowed on ${id}`);
        } catch (error) {
          if (error instanceof UnknownClientError) program.error(error.message);
          throw error;
        }
      }),
    );
  program
    .command(`${kind}:revoke <${arg}> <client>`)
    .description(`stop a client using a ${what}; its requests there are refused at once`)
    .action(async (id: string, client: string) =>
      withDb(async (db) => {
        const target = grantTarget(mode, id);
        if (await revokeClient(db, issuer(), target, client)) {
          console.log(`revoked ${client} on ${id}`);
          return;
        }
        const namespace = clientNamespace(issuer(), client);
        if (target.seeded.some((c) => clientNamespace(issuer(), c) === namespace)) {
          program.error(
            `${client} is allowed by the ${id} setting itself: remove it there and restart the edge`,
          );
        }
        program.error(`${client} was not allowed on ${id}`);
      }),
    );
  program
    .command(`${kind}:own <${arg}>`)
    .description(
      `give a ${what} an owner, a person (--account <email>) or an organisation (--org <slug>): it then serves their apps too (every member's, for an organisation); every edge applies it at once`,
    )
    .option('--account <email>', 'the owning account')
    .option('--org <slug>', 'the owning organisation')
    .action(async (id: string, opts: { account?: string; org?: string }) =>
      withDb(async (db) => {
        const target = grantTarget(mode, id);
        if ((opts.account === undefined) === (opts.org === undefined))
          program.error('name one owner: --account <email> or --org <slug>', { exitCode: 2 });
        const owner = await findOwner(db, opts);
        if (!owner)
          program.error(`no ${opts.account ? 'account' : 'organisation'} ${opts.account ?? opts.org}`);
        await setOwner(db, { mode: target.mode, backendId: target.backendId, ...owner });
        console.log(`${id} now belongs to ${opts.account ?? opts.org}`);
      }),
    );
  program
    .command(`${kind}:disown <${arg}>`)
    .description(`leave a ${what} without an owner: it serves only the clients it names, at once`)
    .action(async (id: string) =>
      withDb(async (db) => {
        const target = grantTarget(mode, id);
        if (!(await removeOwner(db, target.mode, target.backendId))) program.error(`${id} has no owner`);
        console.log(`${id} has no owner now`);
      }),
    );
  program
    .command(`${kind}:clients <${arg}>`)
    .description(`clients allowed to use a ${what}: its setting's and the stored ones, and its owner`)
    .action(async (id: string) =>
      withDb(async (db) => {
        const target = grantTarget(mode, id);
        const owner = await db
          .selectFrom('edge_backend_owners as o')
          .leftJoin('auth_user as u', 'u.id', 'o.account_id')
          .leftJoin('auth_organization as g', 'g.id', 'o.organization_id')
          .select(['u.email as account', 'g.slug as organization'])
          .where('o.backend_mode', '=', target.mode)
          .where('o.backend_id', '=', target.backendId)
          .executeTakeFirst();
        print({
          owner: owner ? (owner.account ?? `org ${owner.organization}`) : null,
          setting: target.seeded,
          stored: (await listGrants(db, target)).map((g) => ({
            client: g.client_id ?? g.namespace,
            namespace: g.namespace,
            since: g.created_at,
          })),
        });
      }),
    );
}

interface TunnelCreateOptions {
  host?: string;
  handle?: string;
  target?: string;
  expiresInHours?: number;
  client: string[];
}

const program = new Command('edge')
  .description('pkgreg MCP edge operator commands')
  .showHelpAfterError()
  .exitOverride();

program
  .command('clients:create')
  .description(
    'register an OAuth client (client_credentials; with --redirect-uri also the sign-in flow); the secret is shown once',
  )
  .requiredOption('--name <name>', 'display name', nameArg)
  .requiredOption('--scopes <scopes>', 'space- or comma-separated scopes the client may request', scopesArg)
  .option(
    '--redirect-uri <uri>',
    'where people signing in through this client are sent back (repeatable)',
    (value: string, previous: string[] = []) => [...previous, value],
  )
  .action(async (opts: { name: string; scopes: string[]; redirectUri?: string[] }) =>
    withDb(async (db) => {
      try {
        const client = await createClient(db, {
          name: opts.name,
          scopes: opts.scopes,
          redirectUris: opts.redirectUri ?? [],
        });
        print(client);
        console.error('Store client_secret now: it is kept hashed and cannot be shown again.');
      } catch (error) {
        if (error instanceof UnknownScopeError || error instanceof InvalidRedirectUriError)
          program.error(error.message, { exitCode: 2 });
        throw error;
      }
    }),
  );

program
  .command('clients:demo')
  .description('development only: the demo client with every scope, with a fresh secret (printed)')
  .action(async () =>
    withDb(async (db) => {
      if (env.NODE_ENV === 'production') program.error('clients:demo is for development only');
      const demo = await resetDemoClient(db);
      console.log(
        [
          `  client id      ${demo.clientId}`,
          `  client secret  ${demo.clientSecret}`,
          `  token URL      ${env.PKGREG_PUBLIC_BASE_URL}/mcp/token (client_credentials)`,
          `  MCP endpoint   ${env.PKGREG_PUBLIC_BASE_URL}/mcp`,
        ].join('\n'),
      );
    }),
  );

program
  .command('clients:list')
  .description('list registered clients (never their secrets)')
  .action(async () => withDb(async (db) => print(await listClients(db))));

program
  .command('clients:disable <clientId>')
  .description('disable a client: it gets no new tokens, and the tokens it has stop working at once')
  .action(async (clientId: string) =>
    withDb(async (db) => {
      if (!(await disableClient(db, clientId))) program.error(`no enabled client ${clientId}`);
      console.log(`disabled ${clientId}`);
    }),
  );

program
  .command('tunnels:create')
  .description(
    'new local_tunnel session: prints its credentials once, the edge setting that adds it and the local runtime command',
  )
  .option('--host <host>', 'public host served by this session, e.g. alice.mcp.example.com')
  .option('--handle <handle>', 'first label of the hosts it serves, e.g. alice for alice.mcp.example.com')
  .option(
    '--target <url>',
    "the local runtime's HTTP receiver, when the edge can reach it (else WebSocket only)",
  )
  .option('--expires-in-hours <n>', 'the session ends after this many hours', positive)
  .requiredOption(
    '--client <id>',
    "a client the session serves (repeatable): its id, or app:<namespace> for a trusted issuer's; the user's own client",
    collect,
  )
  .action(async (opts: TunnelCreateOptions) => {
    // The clients must exist: a session serving no one by a typo would only show as refusals later.
    await withDb(async (db) => {
      for (const client of opts.client) {
        await resolveClient(db, issuer(), client).catch((error: unknown) => {
          if (error instanceof UnknownClientError) program.error(error.message);
          throw error;
        });
      }
    });
    const candidate = {
      ...(opts.host ? { host: opts.host } : {}),
      ...(opts.handle ? { handle: opts.handle } : {}),
      sessionId: `ts_${randomBytes(12).toString('base64url')}`,
      ...(opts.target ? { target: opts.target } : {}),
      secret: randomBytes(32).toString('base64url'),
      ...(opts.expiresInHours
        ? { expiresAt: new Date(Date.now() + opts.expiresInHours * 3_600_000).toISOString() }
        : {}),
      clients: [...new Set(opts.client)],
    };
    const parsed = TunnelSessionSchema.safeParse(candidate);
    if (!parsed.success) {
      program.error(
        parsed.error.issues.map((i) => `${i.path.join('.') || 'session'}: ${i.message}`).join('\n'),
        {
          exitCode: 2,
        },
      );
    }
    const session = parsed.data as TunnelSession;
    // The edge reads its sessions at start (PKGREG_PUBLIC_MCP_TUNNEL_SESSIONS_JSON): the new setting keeps
    // the sessions it has now and adds this one.
    const sessions = [...env.PKGREG_PUBLIC_MCP_TUNNEL_SESSIONS_JSON, session];
    const edgeUrl = env.PKGREG_PUBLIC_BASE_URL;
    console.log(
      [
        `session id   ${session.sessionId}`,
        `serves       ${session.host ?? `${session.handle}.<any domain>`}`,
        `clients      ${session.clients.join(' ')} (more: pnpm edge tunnels:allow ${session.sessionId} <client>)`,
        '',
        'Edge (restart it with):',
        `  PKGREG_PUBLIC_MCP_TUNNEL_SESSIONS_JSON='${JSON.stringify(sessions)}'`,
        '',
        'Local runtime:',
        `  PKGREG_TUNNEL_SESSION_ID=${session.sessionId} PKGREG_TUNNEL_SECRET=${session.secret} \\`,
        `  PKGREG_TUNNEL_CLIENTS=${session.clients.join(',')} \\`,
        `    pkgreg-runtime local --edge ${edgeUrl}`,
      ].join('\n'),
    );
    console.error('Store the secret now: the edge keeps it only in the setting above.');
  });

grantCommands('tenants', 'hosted', 'hosted tenant', 'tenant');
grantCommands('tunnels', 'local_tunnel', 'tunnel session', 'sessionId');

program
  .command('keys:rotate')
  .description(
    'new signing keys (access tokens and delegation assertions); old keys stay published until what they signed expires',
  )
  .action(async () =>
    withDb(async (db) => {
      await ensureActiveKey(db);
      await ensureActiveKey(db, 'delegation');
      const kid = await rotateSigningKey(db, env.EDGE_TOKEN_TTL_SECONDS);
      const delegationKid = await rotateSigningKey(db, DELEGATION_LIFETIME_SECONDS, 'delegation');
      console.log(`active signing key is now ${kid}\nactive delegation key is now ${delegationKid}`);
    }),
  );

program
  .command('keys:list')
  .description('list signing keys (access tokens, delegation assertions) and their state')
  .action(async () =>
    withDb(async (db) => {
      const keys = async (purpose: KeyPurpose) =>
        (await listAllKeys(db, purpose)).map((key) => ({ purpose, ...key }));
      print([...(await keys('access')), ...(await keys('delegation'))]);
    }),
  );

program
  .command('audit')
  .description('recent /mcp audit records, newest first')
  .option('--namespace <namespace>', 'only this namespace', namespaceArg)
  .option('--limit <n>', 'how many', positive, 50)
  .action(async (opts: { namespace?: string; limit: number }) =>
    withDb(async (db) => {
      const rows = await listAuditRows(db, opts);
      for (const r of rows) {
        console.log(
          [
            r.at.toISOString(),
            r.request_id,
            r.namespace ?? '-',
            r.client_id ?? '-',
            r.method ?? '-',
            r.tool ?? '-',
            r.reason ? `${r.outcome}:${r.reason}` : r.outcome,
            r.http_status,
            `${r.latency_ms.toFixed(1)}ms`,
            r.backend ?? '-',
          ].join('  '),
        );
      }
    }),
  );

program
  .command('quarantine <namespace>')
  .description('refuse memory writes, deletes, compactions and write-bound invokes of a namespace')
  .option('--reason <reason>', 'why (kept with the record)')
  .action(async (namespace: string, opts: { reason?: string }) =>
    withDb(async (db) => print(await quarantineNamespace(db, namespaceArg(namespace), opts.reason ?? null))),
  );

program
  .command('release <namespace>')
  .description('lift a quarantine or purge (purged memory stays deleted)')
  .action(async (namespace: string) =>
    withDb(async (db) => {
      const released = await releaseNamespace(db, namespaceArg(namespace));
      console.log(released ? `released ${namespace}` : `${namespace} was not quarantined`);
    }),
  );

program
  .command('purge <namespace>')
  .description('quarantine a namespace and soft-delete all of its memory')
  .option('--reason <reason>', 'why (kept with the record)')
  .action(async (namespace: string, opts: { reason?: string }) =>
    withDb(async (db) => print(await purgeNamespace(db, namespaceArg(namespace), opts.reason ?? null))),
  );

program
  .command('quarantine:list')
  .description('quarantined and purged namespaces')
  .action(async () => withDb(async (db) => print(await listQuarantined(db))));

try {
  await program.parseAsync(process.argv);
} catch (error) {
  const { code, exitCode } = error as { code?: string; exitCode?: number };
  if (typeof code !== 'string' || !code.startsWith('commander.')) throw error;
  // help and version are successes; program.error() carries its own code; the rest is usage.
  if (code === 'commander.helpDisplayed' || code === 'commander.version') process.exitCode = 0;
  else process.exitCode = code === 'commander.error' ? (exitCode ?? 1) : 2;
}
