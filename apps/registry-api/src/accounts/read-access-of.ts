import type { IncomingMessage } from 'node:http';
import { PUBLIC_ONLY, type ReadAccess } from '@pkgreg/registry';
import { hasCredentials, type ViewerOf } from './viewer.js';

/** The read access of a request without credentials: resolved once, shared by every such request. */
const PUBLIC_ONLY_PROMISE: Promise<ReadAccess> = Promise.resolve(PUBLIC_ONLY);

export type ReadAccessOf = (req: IncomingMessage) => Promise<ReadAccess>;

/**
 * What the request may read (docs/accounts.md, "Private skills"): a request without credentials is
 * public-only at no cost (no I/O, no allocation); one with credentials is resolved by `viewerOf`, which
 * rejects with a 401 ApiError when they do not verify.
 */
export function readAccessOf(viewerOf: ViewerOf): ReadAccessOf {
  return (req) => (hasCredentials(req) ? viewerOf(req).then((viewer) => viewer.read) : PUBLIC_ONLY_PROMISE);
}
