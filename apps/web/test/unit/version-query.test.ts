import { describe, expect, it } from 'vitest';
import {
  installCommand,
  packageViewHref,
  parseFilePath,
  parseVersion,
  parseVersionView,
  versionViewToSearch,
} from '../../src/version-query.js';

// Issue 17: a picked version and an opened file live in the URL, so a link reproduces the view.
describe('version view in the URL', () => {
  it('defaults to the latest version with no file open', () => {
    expect(parseVersionView('')).toEqual({ version: null, file: null });
    expect(parseVersionView('?version=latest')).toEqual({ version: null, file: null });
  });

  it('reads an exact version (pre-releases, build metadata and pseudo-versions) and a file path', () => {
    expect(parseVersionView('?version=1.2.0&file=scripts/run.sh')).toEqual({
      version: '1.2.0',
      file: 'scripts/run.sh',
    });
    expect(parseVersion('1.2.1-0.20261125124233-abcdef123456')).toBe('1.2.1-0.20261125124233-abcdef123456');
    expect(parseVersion('2.0.0-rc.1+build.5')).toBe('2.0.0-rc.1+build.5');
    expect(parseVersion('v1.2.0')).toBe('1.2.0');
  });

  it('falls back for values outside the rules instead of asking the API', () => {
    for (const bad of ['1.2', 'one', '1.2.0 ', '', '^1.2.0', `1.0.0-${'x'.repeat(260)}`]) {
      expect(parseVersion(bad), bad).toBeNull();
    }
    for (const bad of ['../etc/passwd', 'a//b', './a', 'a/./b', 'a/..', '/abs', 'a\\b', 'a\0b', 'dir/']) {
      expect(parseFilePath(bad), bad).toBeNull();
    }
    expect(parseFilePath('x'.repeat(4097))).toBeNull();
  });

  it('writes paths with readable slashes and escapes everything else; round-trips', () => {
    expect(versionViewToSearch({ version: null, file: null })).toBe('');
    expect(versionViewToSearch({ version: '1.2.0', file: 'scripts/run.sh' })).toBe(
      '?version=1.2.0&file=scripts/run.sh',
    );
    expect(versionViewToSearch({ version: null, file: 'a b/c&d=e#f?.md' })).toBe(
      '?file=a%20b/c%26d%3De%23f%3F.md',
    );
    for (const view of [
      { version: '1.0.0-rc.1+b.2', file: 'a+b/ü ñ.md' },
      { version: null, file: 'refs/100% sure.md' },
      { version: '3.0.0', file: null },
    ]) {
      expect(parseVersionView(versionViewToSearch(view))).toEqual(view);
    }
  });

  it('builds the page link and the install command, pinned only when a version is picked', () => {
    expect(packageViewHref('acme', 'pdf', { version: '1.0.0', file: 'SKILL.md' })).toBe(
      '/@acme/pdf?version=1.0.0&file=SKILL.md',
    );
    expect(installCommand('acme', 'pdf', null)).toBe('pkgreg install @acme/pdf');
    expect(installCommand('acme', 'pdf', '1.2.0')).toBe('pkgreg install @acme/pdf@1.2.0');
  });
});
