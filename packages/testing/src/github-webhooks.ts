import { createHmac, randomBytes, randomUUID } from 'node:crypto';

// What GitHub sends a webhook: the event's JSON body (the shapes of docs.github.com "Webhook events and
// payloads", the fields a receiver reads), `X-GitHub-Event`, `X-GitHub-Delivery` and
// `X-Hub-Signature-256: sha256=<HMAC-SHA256 of the raw body with the hook's secret>`.

export interface WebhookRepository {
  /** `owner/repo`. */
  fullName: string;
  id: number;
  ownerId: number;
  defaultBranch?: string;
}

function repositoryOf(repo: WebhookRepository) {
  const [login = '', name = ''] = repo.fullName.split('/');
  return {
    id: repo.id,
    name,
    full_name: repo.fullName,
    private: false,
    owner: { login, id: repo.ownerId, type: 'User' },
    html_url: `https://github.com/${repo.fullName}`,
    default_branch: repo.defaultBranch ?? 'main',
  };
}

/**
 * A `push` event to `ref` (default the default branch). Each push names a new head commit (`after`, a
 * random SHA unless given), so two pushes never have the same body, as on GitHub.
 */
export function pushEvent(repo: WebhookRepository, ref?: string, after?: string): Record<string, unknown> {
  return {
    ref: ref ?? `refs/heads/${repo.defaultBranch ?? 'main'}`,
    before: '0'.repeat(40),
    after: after ?? randomBytes(20).toString('hex'),
    created: false,
    deleted: false,
    forced: false,
    repository: repositoryOf(repo),
    pusher: { name: repo.fullName.split('/')[0], email: null },
    sender: { login: repo.fullName.split('/')[0], id: repo.ownerId, type: 'User' },
    commits: [],
    head_commit: null,
  };
}

/** The `ping` event GitHub sends when a hook is created. */
export function pingEvent(repo: WebhookRepository): Record<string, unknown> {
  return {
    zen: 'Design for failure.',
    hook_id: 123456,
    hook: {
      type: 'Repository',
      id: 123456,
      active: true,
      events: ['push'],
      config: { content_type: 'json' },
    },
    repository: repositoryOf(repo),
    sender: { login: repo.fullName.split('/')[0], id: repo.ownerId, type: 'User' },
  };
}

/** `sha256=<hex>`: GitHub's X-Hub-Signature-256 of `body` with `secret`. */
export function signWebhook(secret: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export interface Delivery {
  event: string;
  payload: unknown;
  /** Signs the body with it; omit to send no signature. */
  secret?: string;
  /** A signature header to send as is (overrides `secret`). */
  signature?: string;
  /** `X-GitHub-Delivery`; default a new GUID, as GitHub gives every delivery (a redelivery keeps it). */
  deliveryId?: string;
}

/** POSTs a delivery to `url` the way GitHub's hookshot does. */
export async function deliverWebhook(url: string, delivery: Delivery): Promise<Response> {
  const body = JSON.stringify(delivery.payload);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'GitHub-Hookshot/test',
    'x-github-event': delivery.event,
    'x-github-delivery': delivery.deliveryId ?? randomUUID(),
    'x-github-hook-id': '123456',
  };
  const signature = delivery.signature ?? (delivery.secret ? signWebhook(delivery.secret, body) : undefined);
  if (signature !== undefined) headers['x-hub-signature-256'] = signature;
  return fetch(url, { method: 'POST', headers, body });
}
