import { type Auth, createAuth, type RateLimitStore } from '@pkgreg/accounts';
import type { Db } from '@pkgreg/db';
import type { Logger } from '@pkgreg/server-kit';
import type { Redis } from 'ioredis';
import { authSecret, type Env, publishingSettings } from '../env.js';

// better-auth (packages/accounts) configured from the registry's env: its public URL, secret, sign-in
// providers and limits. Rate-limit counters live in Redis so every API process counts together.

const KEY_PREFIX = 'pkgreg:registry:auth-rate:';

export function redisRateLimitStore(redis: Redis): RateLimitStore {
  return {
    consume: async (key, rule) => {
      const redisKey = `${KEY_PREFIX}${key}`;
      const result = await redis
        .multi()
        .incr(redisKey)
        .pexpire(redisKey, rule.window * 1000, 'NX')
        .pttl(redisKey)
        .exec();
      const count = Number(result?.[0]?.[1] ?? 0);
      const ttlMs = Number(result?.[2]?.[1] ?? rule.window * 1000);
      if (count <= rule.max) return { allowed: true, retryAfter: null };
      return { allowed: false, retryAfter: Math.max(1, Math.ceil(ttlMs / 1000)) };
    },
  };
}

/** The origins whose cookie-authenticated writes are trusted: the registry's own and WEB_ORIGINS. */
export function trustedOrigins(env: Env): string[] {
  return [new URL(publishingSettings(env).publicUrl).origin, ...env.WEB_ORIGINS];
}

export function createRegistryAuth(deps: { db: Db; redis: Redis; env: Env; logger: Logger }): Auth {
  const { env } = deps;
  const { publicUrl } = publishingSettings(env);
  const webOrigin = env.WEB_ORIGINS[0] ?? new URL(publicUrl).origin;
  return createAuth({
    db: deps.db,
    baseUrl: publicUrl,
    secret: authSecret(env),
    trustedOrigins: trustedOrigins(env),
    deviceVerificationUrl: `${webOrigin}/device`,
    ...(env.GITHUB_OAUTH_CLIENT_ID && env.GITHUB_OAUTH_CLIENT_SECRET
      ? {
          github: {
            clientId: env.GITHUB_OAUTH_CLIENT_ID,
            clientSecret: env.GITHUB_OAUTH_CLIENT_SECRET,
            webUrl: env.GITHUB_WEB_URL,
            apiUrl: env.GITHUB_API_URL,
          },
        }
      : {}),
    ...(env.OIDC_SIGN_IN_DISCOVERY_URL && env.OIDC_SIGN_IN_CLIENT_ID && env.OIDC_SIGN_IN_CLIENT_SECRET
      ? {
          oidc: {
            name: env.OIDC_SIGN_IN_NAME,
            discoveryUrl: env.OIDC_SIGN_IN_DISCOVERY_URL,
            clientId: env.OIDC_SIGN_IN_CLIENT_ID,
            clientSecret: env.OIDC_SIGN_IN_CLIENT_SECRET,
          },
        }
      : {}),
    devSignIn: env.DEV_SIGN_IN && env.NODE_ENV !== 'production',
    organizationCreation: env.ORGANIZATION_CREATION,
    invitationTtlS: env.INVITATION_TTL_S,
    signInPerMinute: env.SIGN_IN_PER_MINUTE,
    rateLimitStore: redisRateLimitStore(deps.redis),
    log: (level, message) => deps.logger[level]({ component: 'auth' }, message),
  });
}
