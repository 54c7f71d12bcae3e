import { LogConsistencyQuerySchema, LogEntriesQuerySchema, LogInclusionQuerySchema } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { consistencyProof, inclusionProof, latestCheckpoint, logEntries } from '@pkgreg/registry';
import type { Request, Response } from 'express';
import { badRequest, notFound } from '../http/api-error.js';
import type { CachePolicy } from '../http/cache-policy.js';
import { answerIfNotModified, JSON_CONTENT_TYPE, strongEtagOf } from '../http/etag.js';
import { parseQuery } from '../http/validate.js';
import type { RegistryHandlers } from '../routes/route-table.js';

// The transparency log over HTTP (docs/provenance.md, "Transparency log"): the latest checkpoint, proofs
// and entries, for clients and witnesses. Everything is bounded by the latest checkpoint, so all that is
// served is covered by a signed tree head; proofs and entries of a size never change after it.

type LogRouteId = 'log-checkpoint' | 'log-inclusion-proof' | 'log-consistency-proof' | 'log-entries';

export function logRoutes(deps: { db: Db; caching: CachePolicy }): Pick<RegistryHandlers, LogRouteId> {
  const { db, caching } = deps;
  const signedSize = async () => (await latestCheckpoint(db))?.size ?? 0;
  const sendJson = (req: Request, res: Response, body: unknown) => {
    const text = JSON.stringify(body);
    if (answerIfNotModified(req, res, { etag: strongEtagOf(text), cacheControl: caching.moving })) return;
    res.set('Content-Type', JSON_CONTENT_TYPE);
    res.send(text);
  };
  const base64 = (hashes: Buffer[]) => ({ hashes: hashes.map((h) => h.toString('base64')) });
  return {
    'log-checkpoint': async (req, res) => {
      const latest = await latestCheckpoint(db);
      if (!latest) throw notFound('The log is empty: nothing is signed yet');
      if (answerIfNotModified(req, res, { etag: strongEtagOf(latest.note), cacheControl: caching.moving }))
        return;
      res.set('Content-Type', 'text/plain; charset=utf-8');
      res.send(latest.note);
    },
    'log-inclusion-proof': async (req, res) => {
      const { index, size } = parseQuery(LogInclusionQuerySchema, req.query);
      const signed = await signedSize();
      if (size > signed) throw badRequest(`size must be at most ${signed}, the latest checkpoint's size`);
      if (index >= size) throw badRequest('index must be below size');
      sendJson(req, res, base64(await inclusionProof(db, index, size)));
    },
    'log-consistency-proof': async (req, res) => {
      const { from, to } = parseQuery(LogConsistencyQuerySchema, req.query);
      const signed = await signedSize();
      if (to > signed) throw badRequest(`to must be at most ${signed}, the latest checkpoint's size`);
      if (from > to) throw badRequest('from must be at most to');
      sendJson(req, res, base64(await consistencyProof(db, from, to)));
    },
    'log-entries': async (req, res) => {
      const { start, limit } = parseQuery(LogEntriesQuerySchema, req.query);
      sendJson(req, res, { entries: await logEntries(db, start, limit, await signedSize()) });
    },
  };
}
