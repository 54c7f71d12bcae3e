import { relative } from 'node:path';
import type { UploadResult } from '@pkgreg/contracts';
import type { Command } from 'commander';
import semver from 'semver';
import type { PublishOptions } from '../commands/publish.js';
import { type Context, createContext } from '../context.js';
import { CliError, EXIT, usageError } from '../errors.js';
import { pathInCheckout } from '../git-origin.js';
import { fetchActionsIdToken, requireAudience, requireSecureRegistry } from '../proof.js';
import { findSkillFolders, type LocalSkill, packSkill, readSkill } from '../skill-folder.js';
import { oneLine } from '../terminal-text.js';

// `pkgreg publish <folder>` (docs/publishing.md, "Uploading (hosted packages)"): packs the folder's
// skill (or each skill under it) and uploads it as a version of a hosted package (--set-version, else
// the SKILL.md's version). Credentials, first
// found wins: --token, PKGREG_TOKEN (a publish token); the variable --oidc-token-env names, then
// PKGREG_ID_TOKEN (a CI OIDC token, e.g. GitLab's `id_tokens:`); in GitHub Actions with
// `permissions: id-token: write`, an OIDC token the runner issues for the registry's URL. Exit 0 when
// every skill was uploaded, 6 when some were refused (each says why), the refusal's own code for one.

type Credential =
  | { kind: 'token'; token: string; source: string }
  | { kind: 'oidc-fixed'; token: string; source: string }
  | { kind: 'oidc-actions'; request: { url: string; token: string } };

function credentialOf(ctx: Context, input: PublishOptions): Credential {
  // --token, else PKGREG_TOKEN or the token `pkgreg login` stored for this registry (ctx.credentials).
  const token = input.token ?? ctx.credentials?.token;
  if (token)
    return {
      kind: 'token',
      token,
      source: input.token ? '--token' : (ctx.credentials?.source ?? 'PKGREG_TOKEN'),
    };
  if (input.oidcTokenEnv) {
    const value = ctx.env.variable(input.oidcTokenEnv);
    if (!value) throw usageError(`--oidc-token-env ${input.oidcTokenEnv}: that variable is empty or unset`);
    return { kind: 'oidc-fixed', token: value, source: input.oidcTokenEnv };
  }
  if (ctx.env.idToken) return { kind: 'oidc-fixed', token: ctx.env.idToken, source: 'PKGREG_ID_TOKEN' };
  if (ctx.env.actionsIdToken) return { kind: 'oidc-actions', request: ctx.env.actionsIdToken };
  throw usageError(
    'No credentials to upload with: run pkgreg login, pass --token or set PKGREG_TOKEN (an access token with the publish permission), or upload from CI as a trusted publisher (GitHub Actions: `permissions: id-token: write`; GitLab CI: an `id_tokens:` entry PKGREG_ID_TOKEN whose aud is the registry URL)',
  );
}

/** The bearer for one upload: an Actions OIDC token is asked for each time (each is accepted once). */
async function bearerFor(ctx: Context, credential: Credential): Promise<string> {
  if (credential.kind === 'oidc-actions') {
    ctx.debug('asking GitHub Actions for an OIDC token');
    return fetchActionsIdToken(credential.request, ctx.registry.url);
  }
  return credential.token;
}

function versionOf(skill: LocalSkill, given: string | undefined, shown: string): string {
  if (given !== undefined) {
    if (semver.valid(given) !== given)
      throw usageError(`--set-version ${given}: an exact semver version such as 1.2.0`);
    if (skill.declaredVersion !== null && skill.declaredVersion !== given) {
      throw usageError(
        `${shown}/SKILL.md declares version ${skill.declaredVersion}, not ${given}: change one of them (the registry refuses a version the SKILL.md contradicts)`,
      );
    }
    return given;
  }
  if (skill.declaredVersion === null) {
    throw usageError(
      `${shown}/SKILL.md declares no version: add \`version: 1.0.0\` (or metadata.version) to its frontmatter, or pass --set-version 1.0.0`,
    );
  }
  return skill.declaredVersion;
}

interface Outcome {
  skill: string;
  result?: UploadResult;
  error?: string;
}

export async function upload(folder: string, input: PublishOptions, command: Command): Promise<void> {
  const ctx = await createContext(command);
  const shown = (path: string) => relative(process.cwd(), path) || '.';
  const scope = input.scope;
  if (!scope)
    throw usageError('Name the scope to publish into: --scope <scope> (your account or organisation)');
  const dirs = findSkillFolders(folder);
  if (dirs.length === 0) throw usageError(`${shown(folder)} holds no SKILL.md`);
  const skills = dirs.map((dir) => readSkill(dir, shown));
  // Versions first: nothing is sent when one skill has none.
  const versions = skills.map((skill) => versionOf(skill, input.setVersion, shown(skill.dir)));
  requireSecureRegistry(ctx.registry.url);
  const credential = credentialOf(ctx, input);
  if (credential.kind === 'oidc-fixed') {
    requireAudience(credential.token, ctx.registry.url, credential.source);
    if (skills.length > 1) {
      throw usageError(
        `An OIDC token (${credential.source}) is accepted once: upload one skill per job, or use a publish token`,
      );
    }
  }
  const outcomes: Outcome[] = [];
  for (const [i, skill] of skills.entries()) {
    const version = versions[i] as string;
    const label = `@${scope}/${skill.name}@${version}`;
    try {
      const tgz = await packSkill(skill);
      ctx.debug(`${label}: ${skill.files.length} files, ${tgz.length} bytes packed`);
      // A CI upload's attestation names the folder in the repository its token names.
      const sourcePath = credential.kind === 'token' ? undefined : await pathInCheckout(skill.dir);
      const result = await ctx.client.uploadVersion(
        await bearerFor(ctx, credential),
        scope,
        skill.name,
        version,
        tgz,
        sourcePath ? { sourcePath } : {},
      );
      outcomes.push({ skill: shown(skill.dir), result });
      if (!input.json) {
        ctx.out(
          `published  ${result.name}@${result.version} (${result.fileCount} file${result.fileCount === 1 ? '' : 's'}, risk ${result.risk}${result.private ? ', private' : ''})`,
        );
        if (result.ciSource) {
          const { repository, commit, run } = result.ciSource;
          ctx.out(
            oneLine(`           from ${repository} at ${commit.slice(0, 12)}${run ? ` by ${run}` : ''}`),
          );
        }
        for (const warning of result.warnings) ctx.out(`warning    ${result.name}: ${warning}`);
      }
    } catch (error) {
      // One skill: its refusal is the command's (its own exit code). Several: the others still go.
      if (skills.length === 1 || !(error instanceof CliError) || error.detail === 'HTTP 401') throw error;
      outcomes.push({ skill: shown(skill.dir), error: error.message });
      if (!input.json) ctx.out(`refused    ${label}: ${error.message}`);
    }
  }
  if (input.json) ctx.json(outcomes);
  else if (skills.length > 1) {
    const refused = outcomes.filter((o) => o.error).length;
    ctx.out(
      `${skills.length} skills: ${skills.length - refused} published${refused ? `, ${refused} refused` : ''}`,
    );
  }
  if (outcomes.some((o) => o.error)) process.exitCode = EXIT.rejected;
}
