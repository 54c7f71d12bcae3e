import { TRACK_NOT_FOUND_MESSAGE, type TrackResponse } from '@pkgreg/contracts';
import { Router } from 'express';
import { notFound } from '../http/api-error.js';
import { packageKeyFromParams } from '../packages/package-path.js';
import type { DownloadRecorder } from './download-recorder.js';

// The one success body, encoded once (res.json would stringify and measure it on every call).
const TRACK_OK = Buffer.from(JSON.stringify({ ok: true } satisfies TrackResponse));
const TRACK_OK_LENGTH = String(TRACK_OK.length);

export function downloadsRoutes(deps: { recorder: DownloadRecorder }): Router {
  const router = Router();
  router.post('/api/packages/:scope/:name/track', async (req, res) => {
    const key = packageKeyFromParams(req.params);
    // registry-api.md: track's 404 body is `Not found` (not detail's `Package not found`).
    if (!(await deps.recorder.record(key.scope, key.name))) throw notFound(TRACK_NOT_FOUND_MESSAGE);
    res.statusCode = 200;
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', TRACK_OK_LENGTH);
    res.end(TRACK_OK);
  });
  return router;
}
