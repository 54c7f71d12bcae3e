import type { Auth } from '@pkgreg/accounts';
import { ConnectedAppParamsSchema } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import type { Request } from 'express';
import { notFound } from '../http/api-error.js';
import { requestIdOf } from '../http/request-id.js';
import { parseQuery } from '../http/validate.js';
import type { RegistryHandlers } from '../routes/route-table.js';
import { listConnectedApps, revokeConnectedApp } from './connected-apps.service.js';
import { personalSession } from './personal-session.js';

// The account's connected apps (docs/accounts.md, "Connected apps"): MCP clients allowed to use the edge
// as the account. Managed as sessions are, by the person signed in: an access token never lists or
// revokes them. Another account's app is as missing as an unknown one.

export interface ConnectedAppsRoutesDeps {
  db: Db;
  auth: Auth;
}

type Handlers = Pick<RegistryHandlers, 'connected-apps-list' | 'connected-apps-revoke'>;

export function connectedAppsRoutes(deps: ConnectedAppsRoutesDeps): Handlers {
  const personOf = (req: Request) => personalSession(deps.auth, req, 'Connected apps');

  return {
    'connected-apps-list': async (req, res) => {
      const { userId } = await personOf(req);
      res.json({ apps: await listConnectedApps(deps.db, userId) });
    },
    'connected-apps-revoke': async (req, res) => {
      const { userId } = await personOf(req);
      const { clientId } = parseQuery(ConnectedAppParamsSchema, req.params);
      const revoked = await revokeConnectedApp(deps.db, {
        accountId: userId,
        clientId,
        requestId: requestIdOf(res),
      });
      if (!revoked) throw notFound('Connected app not found');
      res.status(204).end();
    },
  };
}
