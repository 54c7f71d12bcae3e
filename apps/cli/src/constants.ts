// Names the command tree shows in its help, kept apart from the modules that use them so that building
// the tree loads nothing else (program.ts).

export const DEFAULT_REGISTRY = 'https://registry.pkgreg.dev';

export const LOCKFILE_NAME = 'pkgreg-lock.json';

/** How publish, deprecate and yank find the proof they send (proof.ts). */
export const PROOF_HELP = `Proof of ownership, first found wins:
  --token <token>; in GitHub Actions with "permissions: id-token: write", an OIDC token for the
  registry URL (trusted publishing, no secret to store); GITHUB_TOKEN; \`gh auth token\`.
  A proof goes only to an https registry (or http on this machine). GITHUB_TOKEN or gh's token goes
  to a registry other than ${DEFAULT_REGISTRY} only once you confirm, or with --yes.`;

export const UPLOAD_HELP = `Uploading a folder (a hosted package), credentials first found wins:
  --token <token> or PKGREG_TOKEN (an access token with the publish permission); the variable
  --oidc-token-env names, then PKGREG_ID_TOKEN (a CI OIDC token, GitLab's id_tokens); in GitHub
  Actions with "permissions: id-token: write", an OIDC token for the registry URL. CI tokens are
  checked against the package's trusted publishers. The version is --set-version, else the SKILL.md's.`;

export const YES_HELP = "send GITHUB_TOKEN or gh's token to a registry other than the default without asking";
