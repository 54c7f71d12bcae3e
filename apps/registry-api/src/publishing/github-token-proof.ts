import { GitHubClient, IndexingError } from '@pkgreg/indexer';
import { z } from 'zod';
import { forbidden, notFound, unauthorized, unavailable } from '../http/api-error.js';
import type { ProofVerifier, ProvenIdentity } from './proof.js';

// A code-host user token (`pkgreg publish --token`, GITHUB_TOKEN, `gh auth token`): the registry asks
// GitHub's REST API, as that user, for the repository (GET /repos/{owner}/{repo}); GitHub answers with
// the user's `permissions` on it and the owner's account id. Push or admin is proof of control. The
// token is used for that one request: never stored, never logged, never put in a job.

export interface GitHubTokenProofOptions {
  /** The code host's REST base (the indexer's GITHUB_API_URL). */
  apiUrl: string;
  webUrl: string;
  timeoutMs?: number;
}

const RepositorySchema = z.object({
  id: z.number().int().positive(),
  full_name: z.string(),
  owner: z.object({ login: z.string(), id: z.number().int().positive() }),
  permissions: z.object({ admin: z.boolean(), push: z.boolean() }).partial().optional(),
});

export function createGitHubTokenProof(options: GitHubTokenProofOptions): ProofVerifier {
  return {
    async verify(token, target): Promise<ProvenIdentity> {
      const [owner = '', name = ''] = target.repository.split('/');
      // One client per check: its token lives as long as this request, and no rate-limit wait is sat out.
      const client = new GitHubClient({
        apiUrl: options.apiUrl,
        webUrl: options.webUrl,
        token,
        maxRateLimitWaitMs: 0,
        requestTimeoutMs: options.timeoutMs ?? 10_000,
        userAgent: 'pkgreg-registry',
      });
      let body: unknown;
      try {
        const result = await client.get(`/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}`);
        if (result.notModified) throw new IndexingError('source_error', 'unconditional request answered 304');
        body = result.body;
      } catch (error) {
        if (!(error instanceof IndexingError)) throw error;
        if (error.code === 'unauthorized') {
          throw unauthorized('GitHub refused the token (bad credentials, expired or revoked)');
        }
        if (error.code === 'not_found') {
          throw notFound(`Repository ${target.repository} not found on GitHub, or the token cannot see it`);
        }
        if (error.code === 'forbidden') {
          throw forbidden(`GitHub refused to show ${target.repository} to this token`);
        }
        throw unavailable(
          error.code === 'rate_limited'
            ? 'GitHub rate-limited the permission check; try again later'
            : 'GitHub could not be reached for the permission check; try again later',
        );
      }
      const parsed = RepositorySchema.safeParse(body);
      if (!parsed.success) throw unavailable('GitHub answered the permission check with an unexpected shape');
      const repo = parsed.data;
      if (!repo.permissions) {
        throw forbidden(
          `GitHub did not report this token's permissions on ${repo.full_name}: use a user token (gh auth token, a personal access token) or publish from GitHub Actions with OIDC`,
        );
      }
      if (!repo.permissions.push && !repo.permissions.admin) {
        throw forbidden(
          `The token's user cannot push to ${repo.full_name}: push or admin access is required`,
        );
      }
      return {
        proof: 'token',
        repository: repo.full_name,
        ownerLogin: repo.owner.login,
        ownerId: repo.owner.id,
        repositoryId: repo.id,
      };
    },
  };
}
