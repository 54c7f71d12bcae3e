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

/** `owner/repo` of `origin` in `cwd`, or undefined outside a checkout (or without an origin). */
export async function originRepository(cwd: string): Promise<string | undefined> {
  const { execFile } = process.getBuiltinModule('node:child_process');
  const url = await new Promise<string | undefined>((resolve) => {
    execFile('git', ['remote', 'get-url', 'origin'], { cwd, timeout: 5_000 }, (error, stdout) =>
      resolve(error ? undefined : String(stdout)),
    );
  });
  return url === undefined ? undefined : repositoryOfRemote(url);
}
