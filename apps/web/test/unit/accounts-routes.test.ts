import { describe, expect, it } from 'vitest';
import { safeNext } from '../../src/next-path.js';
import { matchRoute } from '../../src/router.js';

// docs/web-accounts.md: the account pages' addresses, and where a sign-in may send the browser next.
describe('account routes', () => {
  it('matches the account pages', () => {
    expect(matchRoute('/sign-in')).toEqual({ page: 'sign-in' });
    expect(matchRoute('/settings')).toEqual({ page: 'settings-tokens' });
    expect(matchRoute('/settings/tokens/')).toEqual({ page: 'settings-tokens' });
    expect(matchRoute('/settings/sessions')).toEqual({ page: 'settings-sessions' });
    expect(matchRoute('/settings/connected-apps')).toEqual({ page: 'settings-connected-apps' });
    expect(matchRoute('/settings/orgs')).toEqual({ page: 'settings-orgs' });
    expect(matchRoute('/orgs/team-alpha')).toEqual({ page: 'org', slug: 'team-alpha' });
    expect(matchRoute('/invitations/0b7c5c1e-1111-4222-8333-444455556666')).toEqual({
      page: 'invitation',
      id: '0b7c5c1e-1111-4222-8333-444455556666',
    });
    expect(matchRoute('/device')).toEqual({ page: 'device' });
    expect(matchRoute('/packages/@acme/pdf/settings')).toEqual({
      page: 'package-settings',
      scope: 'acme',
      name: 'pdf',
    });
    expect(matchRoute('/packages/%40acme/pdf/settings')).toEqual({
      page: 'package-settings',
      scope: 'acme',
      name: 'pdf',
    });
  });

  it('keeps the package page and refuses what is not an address of ours', () => {
    expect(matchRoute('/@acme/settings')).toEqual({ page: 'package', scope: 'acme', name: 'settings' });
    expect(matchRoute('/orgs/%E0%A4%A')).toEqual({ page: 'not-found' });
    expect(matchRoute('/orgs/a/b')).toEqual({ page: 'not-found' });
    expect(matchRoute('/packages/acme/pdf/settings')).toEqual({ page: 'not-found' });
  });
});

describe('safeNext', () => {
  const origin = 'https://registry.example';

  it('follows a path of this site, with its query and fragment', () => {
    expect(safeNext('/settings/tokens', origin)).toBe('/settings/tokens');
    expect(safeNext('/invitations/x?a=1#b', origin)).toBe('/invitations/x?a=1#b');
  });

  it('sends anything else home', () => {
    for (const next of [
      null,
      undefined,
      '',
      'settings',
      'https://evil.example/',
      '//evil.example/x',
      '/\\evil.example',
      'javascript:alert(1)',
      'https://registry.example.evil.example/',
    ]) {
      expect({ next, to: safeNext(next, origin) }).toEqual({ next, to: '/' });
    }
  });
});
