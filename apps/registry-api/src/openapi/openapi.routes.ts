import { Router } from 'express';
import { buildOpenApiDocument } from './openapi.js';

export function openApiRoutes(): Router {
  const router = Router();
  const document = buildOpenApiDocument(); // built once: the contracts do not change at run time
  router.get('/api/openapi.json', (_req, res) => {
    res.json(document);
  });
  return router;
}
