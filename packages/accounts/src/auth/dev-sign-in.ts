import type { BetterAuthPlugin } from 'better-auth';
import { APIError, createAuthEndpoint } from 'better-auth/api';
import { setSessionCookie } from 'better-auth/cookies';
import { z } from 'zod';

// The development sign-in (docs/accounts.md): `npm run dev` signs anyone in as the account named,
// without an identity provider, so the stack works offline. createAuth adds it only when the app's
// env allows it, and every app's env refuses to start with it in production.

export const DEV_ACCOUNT_DOMAIN = 'dev.pkgreg.invalid';

const BodySchema = z.object({
  /** A handle; the account is `<handle>@dev.pkgreg.invalid`, created on first use. */
  handle: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,38}$/, 'handle: lowercase letters, digits and dashes, at most 39')
    .default('developer'),
});

export function devSignIn(): BetterAuthPlugin {
  return {
    id: 'pkgreg-dev-sign-in',
    endpoints: {
      devSignIn: createAuthEndpoint('/dev/sign-in', { method: 'POST', body: BodySchema }, async (ctx) => {
        const email = `${ctx.body.handle}@${DEV_ACCOUNT_DOMAIN}`;
        const found = await ctx.context.internalAdapter.findUserByEmail(email);
        const user =
          found?.user ??
          (await ctx.context.internalAdapter.createUser(
            { email, name: ctx.body.handle, emailVerified: true },
            { method: 'dev-sign-in' },
          ));
        if ((user as { banned?: boolean | null }).banned) {
          throw new APIError('FORBIDDEN', { message: 'This account is suspended' });
        }
        const session = await ctx.context.internalAdapter.createSession(user.id);
        await setSessionCookie(ctx, { session, user });
        return ctx.json({ user: { id: user.id, email: user.email, name: user.name } });
      }),
    },
  };
}
