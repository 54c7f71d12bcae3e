import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import semver from 'semver';
import { Parser as TarParser } from 'tar';
import { extract } from 'tar-stream';
import { describe, expect, it } from 'vitest';
import {
  buildAgentSkillArchive,
  buildArchive,
  chooseVersion,
  gzipStored,
  type ManifestFile,
  manifestDigest,
  pseudoVersion,
} from '../src/index.js';

// docs/versions.md: the rules behind digests, version strings and archives.

const time = new Date('2026-11-25T12:34:56.789Z');
const digest = `sha256:${'0123456789ab'.repeat(5)}abcd`;

function file(path: string, overrides: Partial<ManifestFile> = {}): ManifestFile {
  return {
    path,
    mode: '100644',
    sha256: 'a'.repeat(64),
    gitSha1: 'b'.repeat(40),
    size: 1,
    linkTarget: null,
    ...overrides,
  };
}

describe('pseudo-versions', () => {
  it("take Go's three forms, all valid semver", () => {
    expect(pseudoVersion(null, time, digest)).toBe('0.0.0-20261125123456-0123456789ab');
    expect(pseudoVersion('1.2.3', time, digest)).toBe('1.2.4-0.20261125123456-0123456789ab');
    expect(pseudoVersion('2.0.0-beta.1', time, digest)).toBe('2.0.0-beta.1.0.20261125123456-0123456789ab');
    for (const base of [null, '1.2.3', '2.0.0-beta.1'])
      expect(semver.valid(pseudoVersion(base, time, digest))).not.toBeNull();
  });

  it('an all-digit hash with a leading zero still makes valid semver (one identifier with a hyphen)', () => {
    const digits = `sha256:${'0'.repeat(64)}`;
    expect(semver.valid(pseudoVersion('1.0.0', time, digits))).not.toBeNull();
  });

  it('sort after their base, before the next release, and by time', () => {
    const later = new Date(time.getTime() + 1000);
    const a = pseudoVersion('1.2.3', time, digest);
    const b = pseudoVersion('1.2.3', later, digest);
    expect(semver.gt(a, '1.2.3')).toBe(true);
    expect(semver.lt(a, '1.2.4')).toBe(true);
    expect(semver.lt(a, b)).toBe(true);
    expect(semver.satisfies(a, '^1.2.3', { includePrerelease: true })).toBe(true);
  });

  it('the declared version when new; a pseudo-version when it is taken or absent; never a used string', () => {
    const base = { used: new Set<string>(), lastDeclared: null, commit: null, time, digest };
    expect(chooseVersion({ ...base, declared: '1.0.0' })).toBe('1.0.0');
    expect(chooseVersion({ ...base, declared: '1.0.0', used: new Set(['1.0.0']) })).toBe(
      '1.0.1-0.20261125123456-0123456789ab',
    );
    expect(chooseVersion({ ...base, declared: null, lastDeclared: '3.1.0' })).toBe(
      '3.1.1-0.20261125123456-0123456789ab',
    );
    const taken = new Set(['0.0.0-20261125123456-0123456789ab']);
    expect(chooseVersion({ ...base, declared: null, used: taken })).toBe(
      '0.0.0-20261125123456-0123456789ab.1',
    );
  });

  it("from a known commit: Go's form, the committer time in UTC and the commit's 12 first hex", () => {
    // 14:21:07 at UTC+02:00 is 12:21:07 UTC.
    const commit = {
      hash: '8832A5817750c0ffee0123456789abcdef012345',
      time: new Date('2026-07-14T14:21:07+02:00'),
    };
    const base = { used: new Set<string>(), lastDeclared: null, commit, time, digest };
    expect(chooseVersion({ ...base, declared: null })).toBe('0.0.0-20260714122107-8832a5817750');
    expect(chooseVersion({ ...base, declared: null, lastDeclared: '1.2.3' })).toBe(
      '1.2.4-0.20260714122107-8832a5817750',
    );
    expect(chooseVersion({ ...base, declared: '2.0.0-beta.1', used: new Set(['2.0.0-beta.1']) })).toBe(
      '2.0.0-beta.1.0.20260714122107-8832a5817750',
    );
    // A declared version new to the package is still the version.
    expect(chooseVersion({ ...base, declared: '1.0.0' })).toBe('1.0.0');
    expect(
      chooseVersion({ ...base, declared: null, used: new Set(['0.0.0-20260714122107-8832a5817750']) }),
    ).toBe('0.0.0-20260714122107-8832a5817750.1');
    // A SHA-256 repository's 64-hex commit names it the same way.
    const sha256Commit = { hash: `abcdef012345${'0'.repeat(52)}`, time: commit.time };
    expect(chooseVersion({ ...base, commit: sha256Commit, declared: null })).toBe(
      '0.0.0-20260714122107-abcdef012345',
    );
  });

  it('a commit that is not a git object name, or an invalid time, falls back to the run time and digest', () => {
    const base = { used: new Set<string>(), lastDeclared: null, declared: null, time, digest };
    const runForm = '0.0.0-20261125123456-0123456789ab';
    const validTime = new Date('2026-07-14T12:21:07Z');
    expect(chooseVersion({ ...base, commit: { hash: 'HEAD', time: validTime } })).toBe(runForm);
    expect(chooseVersion({ ...base, commit: { hash: 'a'.repeat(40), time: new Date('nonsense') } })).toBe(
      runForm,
    );
  });
});

describe('digests and archives', () => {
  it('the digest covers path, mode and bytes, in any listing order', () => {
    const files = [file('b.md'), file('a.md')];
    expect(manifestDigest(files)).toBe(manifestDigest([...files].reverse()));
    expect(manifestDigest(files)).not.toBe(manifestDigest([file('b.md'), file('a.md', { mode: '100755' })]));
    expect(manifestDigest(files)).not.toBe(manifestDigest([file('b.md'), file('c.md')]));
    expect(manifestDigest(files)).not.toBe(
      manifestDigest([file('b.md'), file('a.md', { sha256: 'c'.repeat(64) })]),
    );
    expect(manifestDigest(files)).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('the same files make the same archive bytes, in any order', async () => {
    const files = [file('z.txt'), file('scripts/run.sh', { mode: '100755' }), file('SKILL.md')];
    const bytes = (f: ManifestFile) => Buffer.from(`content of ${f.path}\n`);
    const one = await buildArchive('skill', files, bytes);
    const two = await buildArchive('skill', [...files].reverse(), bytes);
    expect(Buffer.compare(one, two)).toBe(0);
  });
});

describe("the discovery RFC's archive (docs/discovery.md)", () => {
  const entryNames = async (tgz: Buffer) => {
    const names: string[] = [];
    const reader = extract();
    const done = (async () => {
      for await (const entry of reader) {
        names.push(`${entry.header.name} ${(entry.header.mode ?? 0).toString(8)} ${entry.header.type}`);
        entry.resume();
      }
    })();
    reader.end(gunzipSync(tgz));
    await done;
    return names;
  };

  it("holds the folder's files at its root, the same bytes whatever the order", async () => {
    const files = [
      file('z.txt'),
      file('scripts/run.sh', { mode: '100755' }),
      file('SKILL.md'),
      file('link.md', { mode: '120000', linkTarget: 'z.txt' }),
    ];
    const bytes = (f: ManifestFile) => Buffer.from(`content of ${f.path}\n`);
    const one = await buildAgentSkillArchive(files, bytes);
    const two = await buildAgentSkillArchive([...files].reverse(), bytes);
    expect(Buffer.compare(one, two)).toBe(0);
    expect(await entryNames(one)).toEqual([
      'SKILL.md 644 file',
      'link.md 777 symlink',
      'scripts/run.sh 755 file',
      'z.txt 644 file',
    ]);
  });

  // What a reader that skips PAX records sees (vercel's `skills` CLI 1.7.4, extractTarGz): each entry's
  // ustar prefix and name as UTF-8, and its typeflag.
  const ustarEntries = (tgz: Buffer) => {
    const tar = gunzipSync(tgz);
    const text = (at: number, length: number) => {
      const field = tar.subarray(at, at + length);
      const end = field.indexOf(0);
      return field.subarray(0, end === -1 ? length : end).toString('utf8');
    };
    const entries: string[] = [];
    for (let at = 0; at + 512 <= tar.length && tar.subarray(at, at + 512).some((b) => b !== 0); ) {
      const size = Number.parseInt(text(at + 124, 12).trim(), 8);
      const [name, prefix, type, link] = [
        text(at, 100),
        text(at + 345, 155),
        text(at + 156, 1),
        text(at + 157, 100),
      ];
      if (type !== 'x') entries.push(`${prefix ? `${prefix}/` : ''}${name}${link ? ` -> ${link}` : ''}`);
      at += 512 + Math.ceil(size / 512) * 512;
    }
    return entries;
  };
  const bytes = (f: ManifestFile) => Buffer.from(`content of ${f.path}\n`);
  const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
  const longAscii = `refs/${'a'.repeat(60)}/${'b'.repeat(60)}.md`;
  const longUtf8 = `références/${'é'.repeat(30)}/${'ü'.repeat(40)}.md`;
  const unsplittable = `refs/${'x'.repeat(120)}.md`;

  it('an archive whose paths ustar holds (ASCII, split when long) is byte for byte what it was', async () => {
    const files = [
      file('SKILL.md'),
      file('scripts/run.sh', { mode: '100755' }),
      file('link.md', { mode: '120000', linkTarget: 'z.txt' }),
      file('z.txt'),
      file(longAscii),
    ];
    // The digests these files had before PAX entries' headers were named: indexes and lockfiles recorded them.
    const before = '68e6cb4d46e169eee7e2cca3a8a63ece2a8149847b6b18e49d5fb3e17b6aa930';
    expect(sha256(await buildAgentSkillArchive(files, bytes))).toBe(before);
    expect(sha256(await buildAgentSkillArchive(files, bytes, 'v1'))).toBe(before);
    expect(sha256(gunzipSync(await buildArchive('skill', files, bytes)))).toBe(
      'd5ba7e162d32d98904e8706ccfc00bc00343ef6a87191cd83b1b021ba4eb62be',
    );
  });

  it("names a PAX entry's path in its own header where ustar holds its UTF-8 bytes, else leaves it empty", async () => {
    const files = [
      file('SKILL.md'),
      file('références/é.md'),
      file(longUtf8),
      file(unsplittable),
      file('lien-é.md', { mode: '120000', linkTarget: 'références/é.md' }),
    ];
    const current = await buildAgentSkillArchive(files, bytes);
    // A PAX reader (tar-stream, as pkgreg's CLI) reads every path from the records.
    const paths = ['SKILL.md', 'lien-é.md', unsplittable, 'références/é.md', longUtf8];
    expect((await entryNames(current)).map((line) => line.split(' ')[0])).toEqual(paths);
    // A reader of ustar fields alone gets the same paths, but an empty one for the path ustar cannot hold
    // (vercel's CLI refuses it: "Unsafe archive path"), never a cut one or `PaxHeader`.
    const ustar = ['SKILL.md', 'lien-é.md -> références/é.md', '', 'références/é.md', longUtf8];
    expect(ustarEntries(current)).toEqual(ustar);
    // archive.tgz alike, under `<name>/`.
    const tgz = await buildArchive('skill', files, bytes);
    expect(ustarEntries(tgz)).toEqual(ustar.map((path) => path && `skill/${path}`));
  });

  it("takes each header's path from the file, never from its PAX record: a line break forges no ustar name", async () => {
    // A record parser that splits lines reads `path=SKILL.md` out of this name (node-tar's Pax.parse).
    const forged = 'é\n17 path=SKILL.md';
    // Exactly 100 bytes: a ustar name holds it whole, with no prefix.
    const full = `${'é'.repeat(48)}.txt`;
    expect(Buffer.byteLength(full)).toBe(100);
    const files = [file('SKILL.md'), file(forged), file(full)];
    const archive = await buildAgentSkillArchive(files, bytes);
    expect(ustarEntries(archive)).toEqual(['SKILL.md', forged, full]);
    expect((await entryNames(archive)).map((line) => line.slice(0, line.lastIndexOf(' 644')))).toEqual([
      'SKILL.md',
      forged,
      full,
    ]);
  });

  it("a link whose target ustar cannot hold keeps tar-stream's placeholder: node-tar reads every entry", async () => {
    const target = `refs/${'x'.repeat(60)}/${'y'.repeat(60)}.md`;
    const files = [
      file('SKILL.md'),
      file('a-link', { mode: '120000', linkTarget: target }),
      file('b.md'),
      file(target),
    ];
    const entries: string[] = [];
    const parser = new TarParser({
      onReadEntry: (entry) => {
        entries.push(`${entry.path} ${entry.type}${entry.linkpath ? ` -> ${entry.linkpath}` : ''}`);
        entry.resume();
      },
    });
    const archive = await buildAgentSkillArchive(files, bytes);
    const ended = new Promise((resolve) => parser.on('end', resolve));
    parser.end(gunzipSync(archive));
    await ended;
    expect(entries).toEqual([
      'SKILL.md File',
      `a-link SymbolicLink -> ${target}`,
      'b.md File',
      `${target} File`,
    ]);
  });

  it('v1 (agent-skill.tar.gz) is the bytes served and locked before', async () => {
    const files = [file('SKILL.md'), file('références/é.md'), file(unsplittable)];
    const v1 = await buildAgentSkillArchive(files, bytes, 'v1');
    expect(sha256(v1)).toBe('772bad7eac50fbc1e7496e7d950017ebdf267b1a31db29517e3bc1f9faac321e');
    expect(ustarEntries(v1)).toEqual(['SKILL.md', 'PaxHeader', 'PaxHeader']);
    expect(sha256(await buildAgentSkillArchive(files, bytes))).not.toBe(sha256(v1));
  });

  it('gzip in stored blocks: any gunzip reads it back, across block boundaries and when empty', () => {
    for (const size of [0, 1, 65_535, 65_536, 200_000]) {
      const data = createHash('sha256').update(String(size)).digest();
      const bytes = Buffer.alloc(size, data);
      const gz = gzipStored(bytes);
      expect(gunzipSync(gz).equals(bytes)).toBe(true);
      expect(gz.length).toBe(10 + Math.max(1, Math.ceil(size / 65_535)) * 5 + size + 8);
    }
  });
});
