import { TRACK_NOT_FOUND_MESSAGE } from '@pkgreg/contracts';
import express, { Router } from 'express';
import { notFound } from '../http/api-error.js';
import { JSON_BODY_LIMIT } from '../http/body.js';
import { JSON_CONTENT_TYPE } from '../http/etag.js';
import { packageKeyFromParams } from '../packages/package-path.js';
import type { DownloadRecorder } from './download-recorder.js';
import { TRACK_OK, TRACK_OK_LENGTH, TRACK_OUTCOME, type WithTrackOutcome } from './track-response.js';

export function downloadsRoutes(deps: { recorder: DownloadRecorder }): Router {
  const router = Router();
  // Track takes no body; a malformed one is still a 400 (the parser only runs when a body is sent).
  router.post(
    '/api/packages/:scope/:name/track',
    express.json({ limit: JSON_BODY_LIMIT }),
    async (req, res) => {
      const key = packageKeyFromParams(req.params);
      const outcome = (req as WithTrackOutcome)[TRACK_OUTCOME];
      if (outcome && 'error' in outcome) throw outcome.error;
      const counted = outcome ? outcome.counted : await deps.recorder.record(key.scope, key.name);
      // registry-api.md: track's 404 body is `Not found` (not detail's `Package not found`).
      if (!counted) throw notFound(TRACK_NOT_FOUND_MESSAGE);
      res.statusCode = 200;
      res.setHeader('Content-Type', JSON_CONTENT_TYPE);
      res.setHeader('Content-Length', TRACK_OK_LENGTH);
      res.end(TRACK_OK);
    },
  );
  return router;
}
