import type { Request, Response } from 'express';

// What a browser sees when a sign-in cannot go on here (its cookies are missing or belong to another
// sign-in, the hand-off was used or has expired): a plain page that says what to do, no redirect (the
// app's redirect_uri is only ever used by the provider, after it checked it). Clients that ask for JSON
// get the RFC 6749 shape.

const MESSAGE = 'This sign-in could not be completed in this browser. Start again from your app.';

const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign-in not completed · pkgreg</title></head>
<body><main><h1>Sign-in not completed</h1><p>${MESSAGE}</p></main></body>
</html>
`;

export function sendSignInFailure(req: Request, res: Response): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'");
  if (req.accepts(['json', 'html']) === 'html') {
    res.status(400).type('html').send(PAGE);
    return;
  }
  res.status(400).json({ error: 'invalid_request', error_description: MESSAGE });
}
