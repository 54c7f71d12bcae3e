import { TRACK_NOT_FOUND_MESSAGE, type TrackResponse } from '@pkgreg/contracts';
import { Router } from 'express';
import { notFound } from '../http/api-error.js';
import { packageKeyFromParams } from '../packages/package-path.js';
import type { DownloadRecorder } from './download-recorder.js';

export function downloadsRoutes(deps: { recorder: DownloadRecorder }): Router {
  const router = Router();
  router.post('/api/packages/:scope/:name/track', async (req, res) => {
    const key = packageKeyFromParams(req.params);
    // registry-api.md: track's 404 body is `Not found` (not detail's `Package not found`).
    if (!(await deps.recorder.record(key.scope, key.name))) throw notFound(TRACK_NOT_FOUND_MESSAGE);
    const body: TrackResponse = { ok: true };
    res.json(body);
  });
  return router;
}
