import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

// A caller's X-Request-Id is kept (so one id follows a request across services) only when it is short
// and plain; anything else could smuggle control characters into logs, so it is replaced.
const ACCEPTED_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Id of this request, echoed in the X-Request-Id response header and on every log line. */
export function requestIdOf(res: Response): string {
  return String(res.locals.requestId ?? '');
}

/** The caller's id when it is acceptable, else a fresh one. */
export function requestIdFor(incoming: string | string[] | undefined): string {
  return typeof incoming === 'string' && ACCEPTED_ID.test(incoming) ? incoming : randomUUID();
}

export function requestId() {
  return (req: Request, res: Response, next: NextFunction) => {
    const id = requestIdFor(req.headers['x-request-id']);
    res.locals.requestId = id;
    res.setHeader('X-Request-Id', id);
    next();
  };
}
