import { REPOSITORY_PATTERN } from '@pkgreg/contracts';

// `owner/repo` of the git checkout's `origin`, in the forms git writes it: https://host/owner/repo(.git),
// ssh://git@host/owner/repo(.git), git@host:owner/repo(.git).

const FORMS = [
  /^(?:https?|ssh|git):\/\/(?:[^@/]+@)?[^/]+\/([^/]+\/[^/]+?)(?:\.git)?\/?$/,
  /^[^@/:]+@[^:/]+:([^/]+\/[^/]+?)(?:\.git)?\/?$/,
];

export function repositoryOfRemote(url: string): string | undefined {
  const text = url.trim();
  for (const form of FORMS) {
    const found = form.exec(text)?.[1];
    if (found && REPOSITORY_PATTERN.test(found)) return found;
  }
  return undefined;
}

/** What `git <args>` prints in `cwd`, or undefined when it fails (no git, not a checkout). */
function gitOutput(cwd: string, args: string[]): Promise<string | undefined> {
  const { execFile } = process.getBuiltinModule('node:child_process');
  return new Promise((resolve) => {
    execFile('git', args, { cwd, timeout: 5_000 }, (error, stdout) =>
      resolve(error ? undefined : String(stdout)),
    );
  });
}

/** `owner/repo` of `origin` in `cwd`, or undefined outside a checkout (or without an origin). */
export async function originRepository(cwd: string): Promise<string | undefined> {
  const url = await gitOutput(cwd, ['remote', 'get-url', 'origin']);
  return url === undefined ? undefined : repositoryOfRemote(url);
}

/** The folder `dir` in its git checkout (`skills/pdf`, '' at the root), or undefined outside one. */
export async function pathInCheckout(dir: string): Promise<string | undefined> {
  const prefix = await gitOutput(dir, ['rev-parse', '--show-prefix']);
  return prefix === undefined ? undefined : prefix.trim().replace(/\/+$/, '');
}
