import type { IncomingMessage } from 'node:http';
import ipaddr from 'ipaddr.js';
import proxyaddr from 'proxy-addr';

/** Whether the hop at `address` (`i` hops from the socket, 0 = the peer) may name the client. */
export type TrustProxy = (address: string, i: number) => boolean;

/**
 * TRUST_PROXY (env.ts: a hop count, or addresses, CIDRs and names) as the function Express compiles
 * from it, so track sees the client req.ip names on the Express routes (reports).
 */
export function compileTrustProxy(setting: number | string[]): TrustProxy {
  return typeof setting === 'number' ? (_address, i) => i < setting : proxyaddr.compile(setting);
}

/**
 * The client's address as Express's req.ip: X-Forwarded-For is believed only as far as the peers
 * TRUST_PROXY trusts; without the header it is the peer's address.
 */
export function clientAddress(req: IncomingMessage, trust: TrustProxy): string {
  if (req.headers['x-forwarded-for'] === undefined) return req.socket.remoteAddress ?? '';
  return proxyaddr(req, trust) ?? '';
}

/**
 * Who downloads, as far as an address tells: an IPv4 address, or an IPv6 address's /64 (one host or
 * one site owns a /64, and picks any address in it). IPv4-mapped IPv6 is the IPv4 address; spellings
 * of one address are one downloader. Anything else (only a trusted proxy can send it) is itself.
 */
export function downloaderAddress(address: string): string {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.process(address);
  } catch {
    return `?${address.trim().toLowerCase()}`;
  }
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const [a, b, c, d] = (parsed as ipaddr.IPv6).parts;
  return `${[a, b, c, d].map((part) => (part ?? 0).toString(16)).join(':')}::/64`;
}
