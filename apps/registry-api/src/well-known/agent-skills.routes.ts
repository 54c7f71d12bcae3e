import {
  INVALID_PACKAGE_PATH_MESSAGE,
  OrganizationParamsSchema,
  PackagePathParamsSchema,
  ScopePathParamsSchema,
} from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import type { Request, Response } from 'express';
import type { ReadAccessOf } from '../accounts/read-access-of.js';
import { badRequest } from '../http/api-error.js';
import type { CachePolicy } from '../http/cache-policy.js';
import { answerIfNotModified, JSON_CONTENT_TYPE, strongEtagOf } from '../http/etag.js';
import { parseQuery } from '../http/validate.js';
import type { RegistryHandlers } from '../routes/route-table.js';
import type { AgentSkillArchives } from './agent-skill-archives.js';
import type { IndexSelection } from './agent-skills.repository.js';
import { agentSkillsIndex } from './agent-skills.service.js';

// The discovery indexes (docs/discovery.md): `/.well-known/agent-skills/index.json` at the root, below
// `/orgs/<slug>`, `/@scope` and `/@scope/name`, so that an organisation's, a scope's or a package's web
// address is a site vercel's `skills add` and `pkgreg install` read. They move like the list
// (revalidated after max-age, ETag of the body); one asked with credentials may hold private skills, so
// no shared cache keeps it.

export interface AgentSkillsRoutesDeps {
  db: Db;
  archives: AgentSkillArchives;
  caching: CachePolicy;
  readAccess: ReadAccessOf;
}

export function agentSkillsRoutes(
  deps: AgentSkillsRoutesDeps,
): Pick<
  RegistryHandlers,
  | 'agent-skills-index'
  | 'organization-agent-skills-index'
  | 'scope-agent-skills-index'
  | 'package-agent-skills-index'
> {
  const { db, archives, caching, readAccess } = deps;

  const answer = async (req: Request, res: Response, selection: IndexSelection) => {
    const index = await agentSkillsIndex(db, archives, selection, await readAccess(req));
    const body = JSON.stringify(index);
    if (answerIfNotModified(req, res, { etag: strongEtagOf(body), cacheControl: caching.moving })) return;
    res.set('Content-Type', JSON_CONTENT_TYPE);
    res.send(body);
  };

  return {
    'agent-skills-index': (req, res) => answer(req, res, { kind: 'root' }),
    'organization-agent-skills-index': async (req, res) => {
      const { slug } = parseQuery(OrganizationParamsSchema, req.params);
      await answer(req, res, { kind: 'organization', slug });
    },
    // A segment that cannot be a scope (or name) is the API's invalid package path, as under /api.
    'scope-agent-skills-index': async (req, res) => {
      const params = ScopePathParamsSchema.safeParse(req.params);
      if (!params.success) throw badRequest(INVALID_PACKAGE_PATH_MESSAGE);
      await answer(req, res, { kind: 'scope', scope: params.data.scope.slice(1) });
    },
    'package-agent-skills-index': async (req, res) => {
      const params = PackagePathParamsSchema.safeParse(req.params);
      if (!params.success) throw badRequest(INVALID_PACKAGE_PATH_MESSAGE);
      const { scope, name } = params.data;
      await answer(req, res, { kind: 'package', scope: scope.slice(1), name });
    },
  };
}
