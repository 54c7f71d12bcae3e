import type { PackageSettings } from '@pkgreg/contracts';
import type { Command } from 'commander';
import type { TrustOptions } from '../commands/trust.js';
import { createContext } from '../context.js';
import { usageError } from '../errors.js';
import type { PackageRef } from '../names.js';
import { requireSecureRegistry } from '../proof.js';

// `pkgreg trust list|add|remove` (docs/publishing.md, "Trusted publishers"): the package settings
// routes, with an access token (--token, else PKGREG_TOKEN) of an admin of the package's scope.

function print(out: (line: string) => void, settings: PackageSettings): void {
  if (settings.trustedPublishers.length === 0) {
    out(`${settings.name}: no trusted publishers`);
    return;
  }
  for (const p of settings.trustedPublishers) {
    const parts = [
      p.repository,
      p.workflow ? `workflow ${p.workflow}` : 'any workflow',
      ...(p.environment ? [`environment ${p.environment}`] : []),
      p.package === null ? 'every package of the scope' : p.package,
    ];
    out(`${p.id}  ${p.issuer}  ${parts.join(', ')}`);
  }
}

export async function trust(
  action: 'list' | 'add' | 'remove',
  ref: PackageRef,
  id: string | undefined,
  input: TrustOptions,
  command: Command,
): Promise<void> {
  const ctx = await createContext(command);
  const token = input.token ?? ctx.credentials?.token;
  if (!token)
    throw usageError(
      'Run pkgreg login, pass --token or set PKGREG_TOKEN: an access token of an admin of the scope',
    );
  requireSecureRegistry(ctx.registry.url);
  let settings: PackageSettings;
  if (action === 'add') {
    if (!input.repository) throw usageError('--repository <owner/repo> is required');
    settings = await ctx.client.addTrustedPublisher(token, ref.scope, ref.name, {
      issuer: input.issuer,
      repository: input.repository,
      ...(input.workflow ? { workflow: input.workflow } : {}),
      ...(input.environment ? { environment: input.environment } : {}),
      ...(input.wholeScope ? { wholeScope: true } : {}),
    });
  } else if (action === 'remove') {
    settings = await ctx.client.removeTrustedPublisher(token, ref.scope, ref.name, id ?? '');
  } else {
    settings = await ctx.client.packageSettings(token, ref.scope, ref.name);
  }
  if (input.json) ctx.json(settings);
  else print(ctx.out, settings);
}
