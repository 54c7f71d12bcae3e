import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

// A caller's X-Request-Id is kept (so one id follows a request across services) only when it is short
// and plain; anything else could smuggle control characters into logs, so it is replaced.
const ACCEPTED_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Id of this request, echoed in the X-Request-Id response header and on every log line. */
export function requestIdOf(res: Response): string {
  return String(res.locals.requestId ?? '');
}

export function requestId() {
  return (req: Request, res: Response, next: NextFunction) => {
    const incoming = req.get('x-request-id');
    const id = incoming && ACCEPTED_ID.test(incoming) ? incoming : randomUUID();
    res.locals.requestId = id;
    res.setHeader('X-Request-Id', id);
    next();
  };
}
