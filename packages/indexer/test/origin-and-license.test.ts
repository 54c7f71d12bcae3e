import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { detectLicenseText, hostedNameOf } from '../src/index.js';

// The helpers that name a repository and its license (the version rules beside them went to
// @pkgreg/registry's test/versioning.test.ts).

describe('origin names', () => {
  it.each([
    ['https://github.com/obra/superpowers.git', { owner: 'obra', name: 'superpowers' }],
    ['https://github.com/obra/superpowers', { owner: 'obra', name: 'superpowers' }],
    ['git@github.com:obra/superpowers.git', { owner: 'obra', name: 'superpowers' }],
    ['ssh://git@github.com/Obra/Super.Powers.git', { owner: 'Obra', name: 'Super.Powers' }],
    ['https://gitlab.com/obra/superpowers.git', null],
    ['/srv/mirrors/superpowers.git', null],
    ['https://github.com/obra', null],
  ])('%s', (url, expected) => {
    expect(hostedNameOf(url, 'https://github.com')).toEqual(expected);
  });
});

describe('license texts', () => {
  const full = createRequire(import.meta.url)('spdx-license-list/full') as Record<
    string,
    { licenseText: string }
  >;

  it.each(['MIT', 'Apache-2.0', 'BSD-3-Clause', 'ISC', 'GPL-3.0-only', 'MPL-2.0', 'Unlicense', 'CC0-1.0'])(
    'recognizes %s',
    (id) => {
      expect(detectLicenseText(full[id]?.licenseText ?? '')).toBe(id);
    },
  );

  it('Apache-2.0 without its appendix is still Apache-2.0; a bespoke text is nothing', () => {
    const apache = full['Apache-2.0']?.licenseText ?? '';
    expect(detectLicenseText(apache.slice(0, apache.indexOf('APPENDIX')))).toBe('Apache-2.0');
    expect(detectLicenseText('© Acme. Proprietary. You may not use or copy this skill.')).toBeNull();
  });
});
