import { describe, expect, it } from 'vitest';
import { createLinkResolver, sourceBases } from '../../src/skill-links.js';

const files = new Set(['SKILL.md', 'references/guide.md', 'scripts/run.sh', 'assets/logo.png']);
const source = sourceBases('https://github.com/acme/skills', 'abc123', 'skills/pdf');
const options = {
  files,
  viewerHref: (path: string) => `/@acme/pdf?file=${path}`,
  rawUrl: (path: string) => `/api/packages/@acme/pdf/versions/1.0.0/files/${path}`,
  source,
};

describe('relative links of rendered Markdown', () => {
  it('opens files of the version in the page, and takes images from the registry', () => {
    const top = createLinkResolver({ ...options, dir: '' });
    expect(top.link('references/guide.md')).toBe('/@acme/pdf?file=references/guide.md');
    expect(top.link('./scripts/run.sh#L3')).toBe('/@acme/pdf?file=scripts/run.sh');
    expect(top.image('assets/logo.png')).toBe('/api/packages/@acme/pdf/versions/1.0.0/files/assets/logo.png');
    const nested = createLinkResolver({ ...options, dir: 'references' });
    expect(nested.link('../scripts/run.sh')).toBe('/@acme/pdf?file=scripts/run.sh');
    expect(nested.image('../assets/logo.png')).toBe(
      '/api/packages/@acme/pdf/versions/1.0.0/files/assets/logo.png',
    );
  });

  it('sends anything else to the source folder on the code host, at the file’s folder', () => {
    const nested = createLinkResolver({ ...options, dir: 'references' });
    expect(nested.link('missing.md')).toBe(
      'https://github.com/acme/skills/blob/abc123/skills/pdf/references/missing.md',
    );
    expect(nested.link('../../other/SKILL.md')).toBe(
      'https://github.com/acme/skills/blob/abc123/skills/other/SKILL.md',
    );
    expect(nested.image('pic.png')).toBe(
      'https://github.com/acme/skills/raw/abc123/skills/pdf/references/pic.png',
    );
  });

  it('resolves against the code host alone while the files are unknown, and leaves links as written without one', () => {
    const loading = createLinkResolver({ ...options, dir: '', files: null });
    expect(loading.link('references/guide.md')).toBe(
      'https://github.com/acme/skills/blob/abc123/skills/pdf/references/guide.md',
    );
    const nowhere = createLinkResolver({ ...options, dir: '', source: null });
    expect(nowhere.link('missing.md')).toBeNull();
    expect(nowhere.link('references/guide.md')).toBe('/@acme/pdf?file=references/guide.md');
  });

  it('makes GitHub-style folder URLs only for http(s) repositories', () => {
    expect(sourceBases('https://github.com/a/b/', 'main', '/x/y/')).toEqual({
      pageBase: 'https://github.com/a/b/blob/main/x/y/',
      rawBase: 'https://github.com/a/b/raw/main/x/y/',
    });
    expect(sourceBases('https://github.com/a/b', '', '')?.pageBase).toBe('https://github.com/a/b/blob/main/');
    expect(sourceBases(null, 'main', '')).toBeNull();
    expect(sourceBases('javascript:alert(1)', 'main', '')).toBeNull();
  });
});
