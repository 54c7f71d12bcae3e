import { RejectError } from '@pkgreg/contracts';

/** The token of an `Authorization: Bearer <token>` header (RFC 6750 §2.1), else token_invalid (401). */
export function bearerToken(header: string | undefined): string {
  if (!header) throw new RejectError('token_invalid', 'bearer token required', { tokenMissing: true });
  const match = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i.exec(header.trim());
  if (!match?.[1]) throw new RejectError('token_invalid', 'malformed Authorization header');
  return match[1];
}

/**
 * bearerToken with a memory: a client sends the same header on every call, so the regex over its whole
 * JWT runs once, and the token is then the same string object, whose hash the token cache's Map keeps.
 * The last header is compared first: a compare is a memcmp, where a Map lookup hashes each new header
 * string whole. Bounded (cleared when full); a refused header is never remembered.
 */
export function createBearerReader(): (header: string | undefined) => string {
  const tokenOfHeader = new Map<string, string>();
  let lastHeader = '';
  let lastToken = '';
  return function tokenOf(header) {
    if (header === undefined) return bearerToken(header);
    if (header === lastHeader) return lastToken;
    let token = tokenOfHeader.get(header);
    if (token === undefined) {
      token = bearerToken(header);
      if (tokenOfHeader.size >= 1024) tokenOfHeader.clear();
      tokenOfHeader.set(header, token);
    }
    lastHeader = header;
    lastToken = token;
    return token;
  };
}
