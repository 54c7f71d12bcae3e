import { VersionListQuerySchema } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { type Request, type Response, Router } from 'express';
import mime from 'mime-types';
import { JSON_CONTENT_TYPE, matchesIfNoneMatch } from '../http/etag.js';
import { parseQuery } from '../http/validate.js';
import { packageKeyFromParams } from '../packages/package-path.js';
import type { ContentCache } from './content-cache.js';
import {
  getVersion,
  getVersionArchive,
  getVersionFile,
  listVersions,
  parseFilePath,
  parseVersionParam,
  type VersionContent,
  type VersionRef,
} from './versions.service.js';

export interface VersionsRoutesDeps {
  db: Db;
  content: ContentCache;
}

/** An exact version never changes; `latest` moves with the next indexing run. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
const LATEST = 'public, max-age=60, must-revalidate';

// A skill's HTML or SVG must never run as the registry's origin: no scripts, no plugins, no sniffing.
const FILE_SECURITY_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': "sandbox; default-src 'none'",
};

function cacheControl(ref: VersionRef): string {
  return ref.exact === null ? LATEST : IMMUTABLE;
}

function sendContent(
  req: Request,
  res: Response,
  content: VersionContent,
  headers: Record<string, string>,
): void {
  res.set({ ETag: content.etag, ...headers });
  if (matchesIfNoneMatch(req.headers['if-none-match'], content.etag)) {
    res.status(304).end();
    return;
  }
  res.set('Content-Length', String(content.bytes.length));
  res.status(200).end(content.bytes);
}

function fileContentType(path: string, isLink: boolean): string {
  if (isLink) return 'text/plain; charset=utf-8';
  const type = mime.lookup(path);
  return (type && mime.contentType(type)) || 'application/octet-stream';
}

export function versionsRoutes(deps: VersionsRoutesDeps): Router {
  const { db, content } = deps;
  const router = Router();
  const base = '/api/packages/:scope/:name/versions';

  router.get(base, async (req, res) => {
    const query = parseQuery(VersionListQuerySchema, req.query);
    res.json(await listVersions(db, packageKeyFromParams(req.params), query));
  });

  router.get(`${base}/:version`, async (req, res) => {
    const ref = parseVersionParam(req.params.version);
    const detail = await getVersion(db, packageKeyFromParams(req.params), ref);
    res.set({ 'Cache-Control': cacheControl(ref), 'Content-Type': JSON_CONTENT_TYPE });
    res.send(JSON.stringify(detail));
  });

  router.get(`${base}/:version/archive.tgz`, async (req, res) => {
    const key = packageKeyFromParams(req.params);
    const ref = parseVersionParam(req.params.version);
    const archive = await getVersionArchive(db, content, key, ref);
    sendContent(req, res, archive, {
      'Cache-Control': cacheControl(ref),
      'Content-Type': 'application/gzip',
      'Content-Disposition': `attachment; filename="${key.scope}-${key.name}-${archive.version}.tgz"`,
    });
  });

  router.get(`${base}/:version/files/*path`, async (req, res) => {
    const key = packageKeyFromParams({ scope: req.params.scope, name: req.params.name });
    const ref = parseVersionParam(req.params.version);
    const path = parseFilePath(req.params.path);
    const file = await getVersionFile(db, content, key, ref, path);
    sendContent(req, res, file, {
      'Cache-Control': cacheControl(ref),
      'Content-Type': fileContentType(file.path, file.linkTarget !== null),
      ...FILE_SECURITY_HEADERS,
    });
  });

  return router;
}
