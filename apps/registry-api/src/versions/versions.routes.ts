import { VersionListQuerySchema } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import type { AgentSkillArchiveForm } from '@pkgreg/registry';
import type { Request, Response } from 'express';
import mime from 'mime-types';
import type { ReadAccessOf } from '../accounts/read-access-of.js';
import { type CachePolicy, NO_STORE } from '../http/cache-policy.js';
import { answerIfNotModified, JSON_CONTENT_TYPE, strongEtagOf } from '../http/etag.js';
import { parseQuery } from '../http/validate.js';
import { packageKeyFromParams } from '../packages/package-path.js';
import type { RegistryHandlers } from '../routes/route-table.js';
import type { AgentSkillArchives } from '../well-known/agent-skill-archives.js';
import type { ContentCache } from './content-cache.js';
import {
  getAgentSkillArchive,
  getExactVersionArchive,
  getVersion,
  getVersionArchive,
  getVersionAttestations,
  getVersionFile,
  listVersions,
  type Moderated,
  parseFilePath,
  parseVersionParam,
  type VersionContent,
  type VersionRef,
} from './versions.service.js';

export interface VersionsRoutesDeps {
  db: Db;
  content: ContentCache;
  archives: AgentSkillArchives;
  caching: CachePolicy;
  readAccess: ReadAccessOf;
}

// A skill's HTML or SVG must never run as the registry's origin: no scripts, no plugins, no sniffing.
const FILE_SECURITY_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': "sandbox; default-src 'none'",
};

/**
 * An exact version's bytes never change; `latest` moves with the next indexing run. A quarantined
 * package's bytes are never served (410, no-store like every error: docs/caching.md).
 */
function bytesCacheControl(caching: CachePolicy, ref: VersionRef): string {
  return ref.exact === null ? caching.moving : caching.immutable;
}

function sendContent(
  req: Request,
  res: Response,
  content: VersionContent,
  cacheControl: string,
  headers: Record<string, string>,
  exact: boolean,
): void {
  // An exact version's bytes date from its creation; `latest` has no such date (it moves).
  const lastModified = exact ? content.createdAt : undefined;
  if (answerIfNotModified(req, res, { etag: content.etag, cacheControl, lastModified })) return;
  // Straight to node's response: the types are complete already (Express's res.set would look each up).
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.setHeader('Content-Length', content.bytes.length);
  res.statusCode = 200;
  res.end(content.bytes);
}

/**
 * Version metadata carries `yanked` and `risk`, which move, so even an exact version's is revalidated;
 * its ETag is its bytes' hash (the queries behind it are a few index probes).
 */
function sendJson(req: Request, res: Response, caching: CachePolicy, answer: Moderated<unknown>): void {
  const body = JSON.stringify(answer.value);
  const cacheControl = answer.moderated ? NO_STORE : caching.moving;
  if (answerIfNotModified(req, res, { etag: strongEtagOf(body), cacheControl })) return;
  res.set('Content-Type', JSON_CONTENT_TYPE);
  res.send(body);
}

function fileContentType(path: string, isLink: boolean): string {
  if (isLink) return 'text/plain; charset=utf-8';
  const type = mime.lookup(path);
  return (type && mime.contentType(type)) || 'application/octet-stream';
}

export function versionsRoutes(
  deps: VersionsRoutesDeps,
): Pick<
  RegistryHandlers,
  | 'versions'
  | 'version'
  | 'version-archive'
  | 'version-agent-skill'
  | 'version-agent-skill-v2'
  | 'version-file'
  | 'version-attestations'
> {
  const { db, content, archives, caching, readAccess } = deps;

  const versions: RegistryHandlers['versions'] = async (req, res) => {
    const query = parseQuery(VersionListQuerySchema, req.query);
    const key = packageKeyFromParams(req.params);
    sendJson(req, res, caching, await listVersions(db, key, query, await readAccess(req)));
  };

  const version: RegistryHandlers['version'] = async (req, res) => {
    const ref = parseVersionParam(req.params.version);
    const key = packageKeyFromParams(req.params);
    sendJson(req, res, caching, await getVersion(db, key, ref, await readAccess(req)));
  };

  const versionAttestations: RegistryHandlers['version-attestations'] = async (req, res) => {
    const ref = parseVersionParam(req.params.version);
    const key = packageKeyFromParams(req.params);
    sendJson(req, res, caching, await getVersionAttestations(db, key, ref, await readAccess(req)));
  };

  const versionArchive: RegistryHandlers['version-archive'] = async (req, res) => {
    const key = packageKeyFromParams(req.params);
    const ref = parseVersionParam(req.params.version);
    const access = await readAccess(req);
    const archive =
      ref.exact === null
        ? await getVersionArchive(db, content, key, ref, access)
        : await getExactVersionArchive(db, content, key, ref.exact, access);
    const headers = {
      'Content-Type': 'application/gzip',
      'Content-Disposition': `attachment; filename="${key.scope}-${key.name}-${archive.version}.tgz"`,
    };
    sendContent(req, res, archive, bytesCacheControl(caching, ref), headers, ref.exact !== null);
  };

  const versionAgentSkill =
    (form: AgentSkillArchiveForm): RegistryHandlers['version-agent-skill' | 'version-agent-skill-v2'] =>
    async (req, res) => {
      const key = packageKeyFromParams(req.params);
      const ref = parseVersionParam(req.params.version);
      const archive = await getAgentSkillArchive(db, archives, key, ref, await readAccess(req), form);
      const headers = {
        'Content-Type': 'application/gzip',
        'Content-Disposition': `attachment; filename="${key.name}-${archive.version}.tar.gz"`,
      };
      sendContent(req, res, archive, bytesCacheControl(caching, ref), headers, ref.exact !== null);
    };

  const versionFile: RegistryHandlers['version-file'] = async (req, res) => {
    const key = packageKeyFromParams({ scope: req.params.scope, name: req.params.name });
    const ref = parseVersionParam(req.params.version);
    const path = parseFilePath(req.params.path);
    const file = await getVersionFile(db, content, key, ref, path, await readAccess(req));
    const headers = {
      'Content-Type': fileContentType(file.path, file.linkTarget !== null),
      ...FILE_SECURITY_HEADERS,
    };
    sendContent(req, res, file, bytesCacheControl(caching, ref), headers, ref.exact !== null);
  };

  return {
    versions,
    version,
    'version-archive': versionArchive,
    'version-agent-skill': versionAgentSkill('v1'),
    'version-agent-skill-v2': versionAgentSkill('v2'),
    'version-file': versionFile,
    'version-attestations': versionAttestations,
  };
}
