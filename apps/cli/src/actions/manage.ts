import type { Command } from 'commander';
import type { DeprecateOptions } from '../commands/deprecate.js';
import type { YankOptions } from '../commands/yank.js';
import { type Context, createContext } from '../context.js';
import type { PackageRef } from '../names.js';
import { describeProof, resolveProof } from '../proof.js';

// Owners manage their packages with their pkgreg credentials (PKGREG_TOKEN or `pkgreg login`'s: an
// account's hosted packages and organisation scopes), else with the proofs they publish with
// (docs/publishing.md); --token sends the token given instead:
// `pkgreg deprecate <@scope/name> [--message]`, `pkgreg undeprecate <@scope/name>`,
// `pkgreg yank <@scope/name@version> [--reason]`, `pkgreg unyank <@scope/name@version>`.

export async function setDeprecated(
  deprecated: boolean,
  ref: PackageRef,
  input: DeprecateOptions,
  command: Command,
): Promise<void> {
  const ctx = await createContext(command);
  const state = await ctx.client.setDeprecation(
    await ownerProof(ctx, input),
    ref.scope,
    ref.name,
    deprecated ? { ...(input.message ? { message: input.message } : {}) } : null,
  );
  if (input.json) {
    ctx.json(state);
    return;
  }
  if (deprecated) {
    const message = state.deprecationMessage ? `: ${state.deprecationMessage}` : '';
    ctx.out(`${ref.full} is deprecated${message}`);
  } else {
    ctx.out(
      state.status === 'deprecated'
        ? `${ref.full}: the deprecation is lifted, but its SKILL.md still says metadata.status: deprecated`
        : `${ref.full} is no longer deprecated`,
    );
  }
}

export async function setYanked(
  yanked: boolean,
  ref: PackageRef,
  version: string,
  input: YankOptions,
  command: Command,
): Promise<void> {
  const ctx = await createContext(command);
  const state = await ctx.client.setYank(
    await ownerProof(ctx, input),
    ref.scope,
    ref.name,
    version,
    yanked ? { ...(input.reason ? { reason: input.reason } : {}) } : null,
  );
  if (input.json) {
    ctx.json(state);
    return;
  }
  const full = `${ref.full}@${version}`;
  ctx.out(
    yanked
      ? `${full} is yanked: installs by exact version (lockfiles) still get it; ranges and latest skip it`
      : `${full} is no longer yanked`,
  );
  ctx.out(`latest is now ${state.latest ?? 'none (every version is yanked)'}`);
}

/** The proof an owner action sends; undefined when the client's own credentials speak for the account. */
async function ownerProof(ctx: Context, input: { token?: string | undefined; yes: boolean }) {
  if (!input.token && ctx.credentials) {
    ctx.debug(`acting as the account of the token from ${ctx.credentials.source}`);
    return undefined;
  }
  const proof = await resolveProof(ctx, { token: input.token, yes: input.yes });
  ctx.debug(`proof: ${describeProof(proof)}`);
  return proof.token;
}
