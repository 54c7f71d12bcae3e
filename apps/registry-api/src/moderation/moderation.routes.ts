import { packageKeyFromParams } from '../packages/package-path.js';
import type { RegistryHandlers } from '../routes/route-table.js';
import { type ReportDeps, ReportRateLimited, submitReport } from './moderation.service.js';

export function moderationRoutes(deps: ReportDeps): Pick<RegistryHandlers, 'report'> {
  return {
    report: async (req, res) => {
      const key = packageKeyFromParams(req.params);
      const access = await deps.readAccess(req);
      try {
        // req.ip is the client as far as TRUST_PROXY's hops say (env.ts); an untrusted peer's X-Forwarded-For is ignored.
        const accepted = await submitReport(
          deps,
          key,
          req.body,
          req.ip ?? req.socket.remoteAddress ?? 'unknown',
          access,
        );
        res.status(201).json(accepted);
      } catch (error) {
        if (error instanceof ReportRateLimited) res.setHeader('Retry-After', String(error.retryAfterSeconds));
        throw error;
      }
    },
  };
}
