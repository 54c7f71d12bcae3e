import { fetch, type Response } from 'undici';

// What a browser does between an authorization request and the relying party's callback, over plain
// HTTP: follow each 30x, keeping the cookies each origin sets (the provider's session and interaction
// cookies), so a test can run a sign-in end to end without a browser.

/** Cookies by origin (path and expiry attributes are not modelled beyond deletion). */
export class CookieJar {
  private readonly byOrigin = new Map<string, Map<string, string>>();

  /** Stores the response's Set-Cookie headers for `url`'s origin. */
  store(url: string, response: Response): void {
    const origin = new URL(url).origin;
    const cookies = this.byOrigin.get(origin) ?? new Map<string, string>();
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const at = pair.indexOf('=');
      if (at <= 0) continue;
      const name = pair.slice(0, at).trim();
      const expired = attributes.some((a) => {
        const [key = '', value = ''] = a.trim().split('=');
        if (key.toLowerCase() === 'max-age') return Number(value) <= 0;
        if (key.toLowerCase() === 'expires') return Date.parse(a.trim().slice(8)) <= Date.now();
        return false;
      });
      if (expired) cookies.delete(name);
      else cookies.set(name, pair.slice(at + 1).trim());
    }
    this.byOrigin.set(origin, cookies);
  }

  /** The Cookie header to send to `url`'s origin, or undefined when it set none. */
  header(url: string): string | undefined {
    const cookies = this.byOrigin.get(new URL(url).origin);
    if (!cookies?.size) return undefined;
    return [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  /** The cookie's value at `url`'s origin. */
  get(url: string, name: string): string | undefined {
    return this.byOrigin.get(new URL(url).origin)?.get(name);
  }
}

export interface FollowRedirectsOptions {
  /** Carries cookies across calls (e.g. a second sign-in on the same provider session). Default: a new one. */
  cookieJar?: CookieJar;
  /** Most requests made before giving up. Default 10. */
  maxHops?: number;
  /** A URL this matches is not requested: the walk ends there (e.g. the relying party's callback). */
  stopAt?: (url: string) => boolean;
  /** Extra request headers sent on every hop. */
  headers?: Record<string, string>;
}

export interface FollowedRedirects {
  /** The last response received: the redirect pointing at `url` when it stopped, else the final answer. */
  response: Response;
  /** The URL `stopAt` matched, or the URL of the final (non-30x) response. */
  url: string;
  /** True when `stopAt` ended the walk. */
  stopped: boolean;
  /** Every URL requested, in order. */
  hops: string[];
  cookieJar: CookieJar;
}

/** GETs `url` and follows 30x Location headers with cookies until a non-30x answer or `stopAt`. */
export async function followRedirects(
  url: string | URL,
  options: FollowRedirectsOptions = {},
): Promise<FollowedRedirects> {
  const cookieJar = options.cookieJar ?? new CookieJar();
  const maxHops = options.maxHops ?? 10;
  const hops: string[] = [];
  let current = String(url);
  while (hops.length < maxHops) {
    hops.push(current);
    const cookie = cookieJar.header(current);
    const response = await fetch(current, {
      redirect: 'manual',
      headers: { ...options.headers, ...(cookie ? { cookie } : {}) },
    });
    cookieJar.store(current, response);
    const location = response.headers.get('location');
    if (response.status < 300 || response.status > 399 || !location) {
      return { response, url: current, stopped: false, hops, cookieJar };
    }
    const target = new URL(location, current).href;
    if (options.stopAt?.(target)) return { response, url: target, stopped: true, hops, cookieJar };
    // The body is not read; releasing it frees the connection for the next hop.
    await response.body?.cancel();
    current = target;
  }
  throw new Error(`followRedirects: more than ${maxHops} hops: ${hops.join(' -> ')}`);
}
