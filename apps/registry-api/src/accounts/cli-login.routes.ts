import { createToken } from '@pkgreg/accounts';
import {
  CliAuthorizeFormSchema,
  CliAuthorizeQuerySchema,
  CliTokenRequestSchema,
  type CliTokenResponse,
} from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import express, { type Request } from 'express';
import type { Redis } from 'ioredis';
import { badRequest, forbidden, unauthorized } from '../http/api-error.js';
import { requestIdOf } from '../http/request-id.js';
import { parseBody } from '../http/validate.js';
import type { RegistryHandlers } from '../routes/route-table.js';
import { sendCliAuthorizePage } from './cli-login.page.js';
import { issueCliCode, redeemCliCode } from './cli-login.service.js';
import { sessionPerson } from './personal-session.js';
import type { ViewerOf } from './viewer.js';

// The CLI's browser sign-in (docs/cli-auth.md), OAuth's authorization code flow for a native app
// (RFC 8252, PKCE per RFC 7636) cut to what pkgreg needs:
// 1. GET /api/cli/authorize: a page asking the signed-in person to approve (or to sign in first);
// 2. POST /api/cli/authorize: their decision, with the session cookie; a one-time code sent back to the
//    CLI's loopback server by a 303;
// 3. POST /api/cli/token: the CLI trades the code and its PKCE verifier for a publish token.
// Only a session (a person in a browser) approves: a token, even a publish one, never mints a wider one.

export interface CliLoginRoutesDeps {
  db: Db;
  redis: Redis;
  viewerOf: ViewerOf;
  /** Where the web UI is (its /sign-in page). */
  webOrigin: string;
  /** The registry's public URL (this page's own address, for the sign-in page's `next`). */
  publicUrl: string;
  devSignIn: boolean;
  tokenMaxDays: number;
}

type Handlers = Pick<RegistryHandlers, 'cli-authorize-page' | 'cli-authorize' | 'cli-token'>;

/** The expiry of a CLI sign-in token: 90 days, or the registry's maximum when that is shorter. */
export const CLI_TOKEN_DAYS = 90;

const REFUSALS = {
  unknown: 'The code is unknown, already used or expired: run `pkgreg login` again',
  redirect_uri: 'The code was issued for another redirect_uri',
  code_verifier: 'code_verifier does not match the code_challenge',
} as const;

export function cliLoginRoutes(deps: CliLoginRoutesDeps): Handlers {
  /** The signed-in person of a browser: a session, never a token. */
  const sessionViewer = (req: Request) => sessionPerson(deps.db, deps.viewerOf, req);

  return {
    'cli-authorize-page': async (req, res) => {
      const parsed = CliAuthorizeQuerySchema.safeParse(req.query);
      if (!parsed.success) {
        sendCliAuthorizePage(
          res,
          { kind: 'invalid', message: parsed.error.issues[0]?.message ?? 'invalid request' },
          400,
        );
        return;
      }
      const person = await sessionViewer(req);
      if (!person) {
        const here = new URL(req.originalUrl, deps.publicUrl).toString();
        sendCliAuthorizePage(res, {
          kind: 'sign-in',
          signInUrl: `${deps.webOrigin}/sign-in?next=${encodeURIComponent(here)}`,
          devSignIn: deps.devSignIn,
        });
        return;
      }
      sendCliAuthorizePage(res, { kind: 'approve', query: parsed.data, email: person.email });
    },
    'cli-authorize': [
      express.urlencoded({ extended: false, limit: '4kb' }),
      async (req, res) => {
        // A browser's form never carries Authorization; a token may not approve a sign-in.
        if (req.headers.authorization !== undefined)
          throw forbidden('A CLI sign-in is approved in a browser, signed in, not with a token');
        const person = await sessionViewer(req);
        if (!person) throw unauthorized('Sign in to approve the CLI');
        const form = parseBody(CliAuthorizeFormSchema, req.body ?? {});
        const target = new URL(form.redirect_uri);
        if (form.decision === 'deny') {
          target.searchParams.set('error', 'access_denied');
        } else {
          const code = await issueCliCode(deps.redis, {
            accountId: person.accountId,
            email: person.email,
            redirectUri: form.redirect_uri,
            codeChallenge: form.code_challenge,
          });
          target.searchParams.set('code', code);
        }
        target.searchParams.set('state', form.state);
        res.redirect(303, target.toString());
      },
    ],
    'cli-token': async (req, res) => {
      const input = parseBody(CliTokenRequestSchema, req.body);
      const redeemed = await redeemCliCode(deps.redis, input.code, {
        redirectUri: input.redirect_uri,
        codeVerifier: input.code_verifier,
      });
      if (!redeemed.ok) throw badRequest(REFUSALS[redeemed.reason]);
      const { token, row } = await createToken(
        deps.db,
        redeemed.grant.accountId,
        {
          name: input.name,
          permission: 'publish',
          expiresInDays: Math.min(CLI_TOKEN_DAYS, deps.tokenMaxDays),
        },
        { maxDays: deps.tokenMaxDays, requestId: requestIdOf(res) },
      );
      const answer: CliTokenResponse = {
        token,
        id: row.id,
        expiresAt: row.expires_at.toISOString(),
        account: { email: redeemed.grant.email },
      };
      res.status(201).json(answer);
    },
  };
}
