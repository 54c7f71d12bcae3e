import type { Command } from 'commander';
import { z } from 'zod';
import { createContext, parseOptions } from '../context.js';
import { usageError } from '../errors.js';
import { parsePackageArg, parsePackageSpec } from '../names.js';
import { describeProof, resolveProof } from '../proof.js';

// Owners manage their packages with the proofs they publish with (docs/publishing.md):
// `pkgreg deprecate <@scope/name> [--message]`, `pkgreg undeprecate <@scope/name>`,
// `pkgreg yank <@scope/name@version> [--reason]`, `pkgreg unyank <@scope/name@version>`.

const ManageInputSchema = z.object({
  token: z.string().min(1, { error: 'must not be empty' }).optional(),
  json: z.boolean().default(false),
  yes: z.boolean().default(false),
  message: z.string().max(1024, { error: 'must be at most 1024 characters' }).optional(),
  reason: z.string().max(1024, { error: 'must be at most 1024 characters' }).optional(),
});

export async function setDeprecated(
  deprecated: boolean,
  name: string,
  options: Record<string, unknown>,
  command: Command,
): Promise<void> {
  const ref = parsePackageArg(name);
  const input = parseOptions(ManageInputSchema, options);
  const ctx = await createContext(command);
  const proof = await resolveProof(ctx, { token: input.token, yes: input.yes });
  ctx.debug(`proof: ${describeProof(proof)}`);
  const state = await ctx.client.setDeprecation(
    proof.token,
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
  spec: string,
  options: Record<string, unknown>,
  command: Command,
): Promise<void> {
  const parsed = parsePackageSpec(spec);
  if (parsed.spec.kind !== 'exact') {
    throw usageError(`${yanked ? 'yank' : 'unyank'} takes an exact version: @scope/name@1.2.0`);
  }
  const version = parsed.spec.version;
  const input = parseOptions(ManageInputSchema, options);
  const ctx = await createContext(command);
  const proof = await resolveProof(ctx, { token: input.token, yes: input.yes });
  ctx.debug(`proof: ${describeProof(proof)}`);
  const state = await ctx.client.setYank(
    proof.token,
    parsed.ref.scope,
    parsed.ref.name,
    version,
    yanked ? { ...(input.reason ? { reason: input.reason } : {}) } : null,
  );
  if (input.json) {
    ctx.json(state);
    return;
  }
  const full = `${parsed.ref.full}@${version}`;
  ctx.out(
    yanked
      ? `${full} is yanked: installs by exact version (lockfiles) still get it; ranges and latest skip it`
      : `${full} is no longer yanked`,
  );
  ctx.out(`latest is now ${state.latest ?? 'none (every version is yanked)'}`);
}
