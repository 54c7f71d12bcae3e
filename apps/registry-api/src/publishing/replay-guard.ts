import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

// What publishing accepts once (docs/publishing.md): an OIDC token, by its `jti`, until it expires; a
// webhook delivery, by its `X-GitHub-Delivery` and by its signed body, for a day. The id header is not
// covered by the signature, so a captured delivery sent again under a new id is caught by its body.
// Kept in Redis with an expiry: a replay the registry would only miss after losing Redis re-indexes a
// repository from the code host, which is what a push does anyway.

/** How long a webhook delivery is remembered. */
export const DELIVERY_MEMORY_MS = 24 * 60 * 60 * 1000;

/** Claims the delivery's id and body together, or neither when either was seen. */
const CLAIM_DELIVERY = `
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
redis.call('SET', KEYS[2], '1', 'PX', ARGV[1])
return 1`;

type WithClaimCommand = Redis & {
  pkgregClaimDelivery(idKey: string, bodyKey: string, ttlMs: number): Promise<number>;
};

export interface DeliveryClaim {
  /** Forgets the delivery, so GitHub's redelivery of one that failed here is taken. */
  release(): Promise<void>;
}

export interface ReplayGuard {
  /** True the first time `jti` of `issuer` is presented; remembered until `expiresAtMs`. */
  useJti(issuer: string, jti: string, expiresAtMs: number): Promise<boolean>;
  /** The claim of a delivery not seen in the last day; null for one that was. */
  claimDelivery(delivery: {
    repositoryId: number;
    deliveryId: string;
    body: Buffer;
  }): Promise<DeliveryClaim | null>;
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

export function createReplayGuard(redis: Redis): ReplayGuard {
  const client = redis as WithClaimCommand;
  if (typeof client.pkgregClaimDelivery !== 'function') {
    redis.defineCommand('pkgregClaimDelivery', { numberOfKeys: 2, lua: CLAIM_DELIVERY });
  }
  return {
    async useJti(issuer, jti, expiresAtMs) {
      const ttlMs = Math.max(1_000, Math.ceil(expiresAtMs - Date.now()));
      const key = `pkgreg:registry:oidc-jti:${sha256(`${issuer}\n${jti}`)}`;
      return (await redis.set(key, '1', 'PX', ttlMs, 'NX')) === 'OK';
    },
    async claimDelivery({ repositoryId, deliveryId, body }) {
      const base = `pkgreg:registry:hook:${repositoryId}`;
      const keys = [`${base}:delivery:${sha256(deliveryId)}`, `${base}:body:${sha256(body)}`] as const;
      const fresh = await client.pkgregClaimDelivery(keys[0], keys[1], DELIVERY_MEMORY_MS);
      if (fresh !== 1) return null;
      return {
        async release() {
          await redis.del(...keys);
        },
      };
    },
  };
}
