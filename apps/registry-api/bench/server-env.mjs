// The environment every benchmark gives the built server: production mode, quiet logs, and the
// publishing and accounts settings production requires (docs/publishing.md), though no bench publishes anything.
export function benchServerEnv(databaseUrl, port) {
  return {
    DATABASE_URL: databaseUrl,
    REGISTRY_PORT: String(port),
    REGISTRY_HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
    REGISTRY_PUBLIC_URL: `http://127.0.0.1:${port}`,
    WEBHOOK_SECRET_KEY: 'bench-only-webhook-key-never-used-for-a-real-publish',
    AUTH_SECRET: 'bench-only-auth-secret-never-signs-a-real-session',
    // The load comes from one address (loopback): no per-address track limit in the way. The limiter
    // still runs on every call, as in production.
    TRACK_PER_MINUTE: '10000000',
  };
}
