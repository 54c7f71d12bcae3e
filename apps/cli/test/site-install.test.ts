import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { crc32, deflateRawSync } from 'node:zlib';
import { AGENT_SKILLS_INDEX_SCHEMA, CreatedTokenSchema } from '@pkgreg/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Roots } from '../src/agents.js';
import type { Context } from '../src/context.js';
import { CliError } from '../src/errors.js';
import { applyJobs, type FolderItem } from '../src/install/apply.js';
import type { InstallJob } from '../src/install/plan.js';
import type { InstallTarget } from '../src/install/targets.js';
import { parseLockfile } from '../src/lockfile/read.js';
import { silentProgress } from '../src/progress.js';
import { tgz } from './helpers/archive.js';
import { type CliResult, type RunOptions, runCli, tempDir } from './helpers/cli.js';
import { snapshot, tree } from './helpers/folders.js';
import type { SkillFixture } from './helpers/seed.js';
import { useSeededRegistry } from './helpers/seeded-registry.js';

// `pkgreg install <site> --skill <name>` (docs/discovery.md), end to end with the built CLI: from a
// running pkgreg registry's discovery indexes (the root's, a scope's, a package's), and from a plain
// static site of the test's own serving a hand-made index (skill-md, tar.gz and zip artifacts, a
// tampered digest, a hostile archive). Each install recorded in the lockfile's `sites`, restored,
// listed, verified and removed.

const PDF: SkillFixture = {
  owner: 'acme',
  repo: 'skills',
  path: 'pdf-kit',
  name: 'pdf-kit',
  description: 'Fill PDF forms',
  extraFiles: {
    'scripts/fill.sh': { content: '#!/bin/sh\necho fill "$@"\n', executable: true },
    'reference/forms.md': '# Forms\n\nEvery field.\n',
  },
};
const NOTES: SkillFixture = {
  owner: 'acme',
  repo: 'skills',
  path: 'notes',
  name: 'notes',
  description: 'Take notes',
};

const PLAN: SkillFixture = {
  owner: 'vault',
  repo: 'skills',
  path: 'plan',
  name: 'plan',
  description: 'Plan the vault work',
};

/** Registry packages a site's skill depends on. */
const BASE: SkillFixture = {
  owner: 'sitedeps',
  repo: 'lib',
  path: 'base',
  name: 'base',
  description: 'What site skills build on',
  version: '1.0.0',
};
const EXTRA: SkillFixture = { ...BASE, path: 'extra', name: 'extra', description: 'More of it' };

const { database, registry } = useSeededRegistry([PDF, NOTES, PLAN, BASE, EXTRA], { DEV_SIGN_IN: 'true' });
let home: string;

function cli(args: string[], cwd: string, options: Partial<RunOptions> = {}): Promise<CliResult> {
  return runCli(['--registry', registry.url, ...args], {
    cwd,
    home,
    ...options,
    env: { DO_NOT_TRACK: '1', ...options.env },
  });
}

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

// --- a static site of the test's own -------------------------------------------------------------------

interface Served {
  body: Buffer;
  type: string;
}

const SKILL_MD = (name: string, description: string, metadata = '') =>
  `---\nname: ${name}\ndescription: ${description}\n${metadata}---\n\n# ${name}\n\nDo it well.\n`;

/** `needs`: a site skill declaring registry packages, as a YAML list (one entry that is not one). */
const NEEDS_MD = SKILL_MD(
  'needs',
  'Needs registry packages.',
  'metadata:\n  dependencies:\n    - "@sitedeps/base@^1"\n    - "not a package"\n',
);

/** A .zip of stored and deflated entries with unix modes (APPNOTE.TXT), made here byte by byte. */
function zip(entries: { name: string; content: string; mode: number; deflate?: boolean }[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const raw = Buffer.from(entry.content);
    const data = entry.deflate ? deflateRawSync(raw) : raw;
    const name = Buffer.from(entry.name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6);
    local.writeUInt16LE(entry.deflate ? 8 : 0, 8);
    local.writeUInt32LE(crc32(raw), 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(raw.length, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(entry.deflate ? 8 : 0, 10);
    central.writeUInt32LE(crc32(raw), 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(raw.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((0o100000 | entry.mode) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, data);
    centrals.push(central, name);
    offset += local.length + name.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const site = {
  server: undefined as Server | undefined,
  url: '',
  files: new Map<string, Served>(),
  /** Every request's path and headers, to see what was sent where. */
  requests: [] as { path: string; headers: IncomingHttpHeaders }[],
  /** Every answer a 503: the site is down. */
  down: false,
};

const HELLO_PATH = '/.well-known/agent-skills/hello/SKILL.md';
const NEEDS_PATH = '/.well-known/agent-skills/needs/SKILL.md';

/** What a test changes on the site: it moves on, or its bytes are changed on the way. */
interface SiteChanges {
  /** New artifacts at these paths, listed by the index with their digests. */
  files?: Record<string, string>;
  /** Other bytes at these paths than the index lists (its digests made before they were changed). */
  tampered?: Record<string, string>;
  /** More skill-md skills the index lists, by name: their SKILL.md. */
  skills?: Record<string, string>;
}

/** Serves the index of `entries` (each with its artifact), at the root and under /moved (redirected). */
async function publishSite(changes: SiteChanges = {}): Promise<void> {
  const files = site.files;
  files.clear();
  const hello = Buffer.from(SKILL_MD('hello', 'Says hello.'));
  files.set(HELLO_PATH, { body: hello, type: 'text/markdown' });
  files.set(NEEDS_PATH, { body: Buffer.from(NEEDS_MD), type: 'text/markdown' });
  const bundle = await tgz([
    { name: 'SKILL.md', type: 'file', content: Buffer.from(SKILL_MD('bundle', 'A bundle.')) },
    { name: 'scripts/', type: 'directory' },
    { name: 'scripts/run.sh', type: 'file', mode: 0o755, content: Buffer.from('#!/bin/sh\necho run\n') },
    { name: 'docs/guide.md', type: 'file', content: Buffer.from('# Guide\n') },
  ]);
  files.set('/.well-known/agent-skills/bundle.tar.gz', { body: bundle, type: 'application/gzip' });
  const zipped = zip([
    { name: 'SKILL.md', content: SKILL_MD('zipped', 'A zipped skill.'), mode: 0o644, deflate: true },
    { name: 'tools/go.sh', content: '#!/bin/sh\necho go\n', mode: 0o755 },
  ]);
  files.set('/skills/zipped.zip', { body: zipped, type: 'application/zip' });
  const tampered = Buffer.from(SKILL_MD('tampered', 'Tampered on the way.'));
  files.set('/.well-known/agent-skills/tampered/SKILL.md', { body: tampered, type: 'text/markdown' });
  const evil = await tgz([
    { name: 'SKILL.md', type: 'file', content: Buffer.from(SKILL_MD('evil', 'Escapes.')) },
    { name: '../outside.txt', type: 'file', content: Buffer.from('gotcha\n') },
  ]);
  files.set('/.well-known/agent-skills/evil.tar.gz', { body: evil, type: 'application/gzip' });
  for (const [path, body] of Object.entries(changes.files ?? {}))
    files.set(path, { body: Buffer.from(body), type: 'text/markdown' });
  const digest = (path: string) => `sha256:${sha256((files.get(path) as Served).body)}`;
  const index = {
    $schema: AGENT_SKILLS_INDEX_SCHEMA,
    skills: [
      {
        name: 'hello',
        type: 'skill-md',
        description: 'Says hello.',
        url: '/.well-known/agent-skills/hello/SKILL.md',
        digest: digest('/.well-known/agent-skills/hello/SKILL.md'),
      },
      {
        name: 'needs',
        type: 'skill-md',
        description: 'Needs registry packages.',
        url: NEEDS_PATH,
        digest: digest(NEEDS_PATH),
      },
      // A relative URL, resolved against the index's (RFC 3986).
      {
        name: 'bundle',
        type: 'archive',
        description: 'A bundle.',
        url: 'bundle.tar.gz',
        digest: digest('/.well-known/agent-skills/bundle.tar.gz'),
      },
      // An absolute one elsewhere on the site, and a field the RFC does not know (ignored).
      {
        name: 'zipped',
        type: 'archive',
        description: 'A zipped skill.',
        url: `${site.url}/skills/zipped.zip`,
        digest: digest('/skills/zipped.zip'),
        homepage: 'https://example.com',
      },
      {
        name: 'tampered',
        type: 'skill-md',
        description: 'Tampered on the way.',
        url: '/.well-known/agent-skills/tampered/SKILL.md',
        digest: `sha256:${sha256('what the publisher signed off')}`,
      },
      {
        name: 'evil',
        type: 'archive',
        description: 'Escapes.',
        url: 'evil.tar.gz',
        digest: digest('/.well-known/agent-skills/evil.tar.gz'),
      },
      // An entry of a type this client does not know: skipped, not fatal.
      { name: 'future', type: 'plugin', description: 'Later.', url: 'x', digest: 'sha256:00' },
      ...Object.entries(changes.skills ?? {}).map(([name, body]) => {
        const path = `/.well-known/agent-skills/${name}/SKILL.md`;
        files.set(path, { body: Buffer.from(body), type: 'text/markdown' });
        return { name, type: 'skill-md', description: `The ${name} skill.`, url: path, digest: digest(path) };
      }),
    ],
  };
  files.set('/.well-known/agent-skills/index.json', {
    body: Buffer.from(JSON.stringify(index)),
    type: 'application/json',
  });
  for (const [path, body] of Object.entries(changes.tampered ?? {}))
    files.set(path, { body: Buffer.from(body), type: 'text/markdown' });
}

beforeAll(async () => {
  home = await tempDir('home');
  site.server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    site.requests.push({ path, headers: req.headers });
    if (site.down) {
      res.writeHead(503, { 'Content-Type': 'text/plain' }).end('down for maintenance');
      return;
    }
    if (path.startsWith('/moved/')) {
      res.writeHead(302, { Location: path.slice('/moved'.length) }).end();
      return;
    }
    const served = site.files.get(path);
    if (!served) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
      return;
    }
    res
      .writeHead(200, { 'Content-Type': served.type, 'Content-Length': served.body.length })
      .end(served.body);
  });
  await new Promise<void>((resolve) => site.server?.listen(0, '127.0.0.1', resolve));
  site.url = `http://127.0.0.1:${(site.server.address() as AddressInfo).port}`;
  await publishSite();
});

afterAll(async () => {
  await new Promise<void>((resolve) => (site.server ? site.server.close(() => resolve()) : resolve()));
});

async function lockOf(cwd: string) {
  const read = parseLockfile(
    await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8'),
    'pkgreg-lock.json',
    false,
  );
  if (read.version !== 2) throw new Error('expected a version 2 lockfile');
  return read.lock;
}

describe('from a pkgreg registry', () => {
  it("a scope's index: the archive's files byte for byte as `pkgreg install @scope/name` writes them", async () => {
    const fromSite = await tempDir('site-scope');
    const result = await cli(
      ['install', `${registry.url}/@acme`, '--skill', 'pdf-kit', '--agent', 'claude-code'],
      fromSite,
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`installed pdf-kit (${registry.url}/@acme) -> .claude/skills/pdf-kit\n`);
    const fromRegistry = await tempDir('site-registry');
    expect((await cli(['install', '@acme/pdf-kit', '--agent', 'claude-code'], fromRegistry)).code).toBe(0);
    const installed = await snapshot(join(fromSite, '.claude/skills/pdf-kit'));
    expect(installed.map((e) => `${e.path} ${e.kind}`)).toEqual([
      'SKILL.md file',
      'reference/forms.md file',
      'scripts/fill.sh exec',
    ]);
    expect(installed).toEqual(await snapshot(join(fromRegistry, '.claude/skills/pdf-kit')));
    // The lockfile records where it came from, the artifact and its digest, and every file.
    const lock = await lockOf(fromSite);
    expect(lock.packages).toEqual({});
    const entry = lock.sites?.[`${registry.url}/@acme#pdf-kit`];
    expect(entry).toMatchObject({
      source: { kind: 'well-known', url: `${registry.url}/@acme`, skill: 'pdf-kit' },
      index: `${registry.url}/@acme/.well-known/agent-skills/index.json`,
      type: 'archive',
      url: expect.stringMatching(
        /\/api\/packages\/@acme\/pdf-kit\/versions\/[^/]+\/agent-skill\.v2\.tar\.gz$/,
      ),
      digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      agents: ['claude-code'],
      dirs: ['.claude/skills/pdf-kit'],
    });
    expect(Object.keys(entry?.files ?? {})).toEqual(['SKILL.md', 'reference/forms.md', 'scripts/fill.sh']);
    expect(entry?.files['scripts/fill.sh']?.mode).toBe('100755');
  });

  it('the root index, and a package’s own address with no --skill', async () => {
    const cwd = await tempDir('site-root');
    const root = await cli(['install', registry.url, '--skill', 'notes', '--dir', 'skills'], cwd);
    expect(root.code, root.stderr).toBe(0);
    expect(await readFile(join(cwd, 'skills/notes/SKILL.md'), 'utf8')).toMatch(/^---\nname: notes\n/);
    const other = await tempDir('site-package');
    const own = await cli(['install', `${registry.url}/@acme/pdf-kit/`, '--dir', 'skills'], other);
    expect(own.code, own.stderr).toBe(0);
    expect((await lockOf(other)).sites).toHaveProperty([`${registry.url}/@acme/pdf-kit#pdf-kit`]);
    // A scope's index lists two skills: one must be chosen.
    const several = await cli(['install', `${registry.url}/@acme`], other);
    expect(several.code).toBe(2);
    expect(several.stderr).toContain('lists 2 skills: choose one with --skill (notes, pdf-kit)');
  });

  it('a skill the index does not list is exit 3; a scope the registry does not have too', async () => {
    const cwd = await tempDir('site-missing');
    const absent = await cli(['install', `${registry.url}/@acme`, '--skill', 'nope'], cwd);
    expect(absent.code).toBe(3);
    expect(absent.stderr).toContain('lists no skill nope (it lists notes, pdf-kit)');
    const scope = await cli(['install', `${registry.url}/@nobody`, '--skill', 'x'], cwd);
    expect(scope.code).toBe(3);
    expect(await tree(cwd)).toEqual([]);
  });
});

describe('from a plain static site', () => {
  it('a skill-md, a tar.gz and a zip in one install, modes kept, recorded in the lockfile', async () => {
    const cwd = await tempDir('static');
    const result = await cli(
      [
        'install',
        site.url,
        '--skill',
        'hello',
        '--skill',
        'bundle',
        '--skill',
        'zipped',
        '--agent',
        'universal',
      ],
      cwd,
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.split('\n').filter(Boolean).sort()).toEqual([
      `installed bundle (${site.url}) -> .agents/skills/bundle`,
      `installed hello (${site.url}) -> .agents/skills/hello`,
      `installed zipped (${site.url}) -> .agents/skills/zipped`,
    ]);
    expect((await snapshot(join(cwd, '.agents/skills'))).map((e) => `${e.path} ${e.kind}`)).toEqual([
      'bundle/SKILL.md file',
      'bundle/docs/guide.md file',
      'bundle/scripts/run.sh exec',
      'hello/SKILL.md file',
      'zipped/SKILL.md file',
      'zipped/tools/go.sh exec',
    ]);
    expect(await readFile(join(cwd, '.agents/skills/hello/SKILL.md'))).toEqual(
      site.files.get('/.well-known/agent-skills/hello/SKILL.md')?.body,
    );
    const lock = await lockOf(cwd);
    expect(lock.sites?.[`${site.url}#bundle`]).toMatchObject({
      type: 'archive',
      url: `${site.url}/.well-known/agent-skills/bundle.tar.gz`,
    });
    expect(lock.sites?.[`${site.url}#zipped`]?.url).toBe(`${site.url}/skills/zipped.zip`);
    // The lockfile is written in its stable form: packages, then the site skills by key.
    const text = await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8');
    expect(Object.keys(JSON.parse(text))).toEqual(['lockfileVersion', 'packages', 'sites']);
  });

  it('a digest that does not match is refused: exit 5, nothing written, no lockfile', async () => {
    const cwd = await tempDir('tampered');
    const result = await cli(['install', site.url, '--skill', 'hello', '--skill', 'tampered'], cwd);
    expect(result.code).toBe(5);
    expect(result.stderr).toMatch(
      /Digest mismatch: tampered .* is sha256:[0-9a-f]{64}, but the index lists sha256:[0-9a-f]{64}; nothing was written/,
    );
    expect(await tree(cwd)).toEqual([]);
  });

  it('an archive escaping the folder is exit 5; a type the client does not know is not installable', async () => {
    const cwd = await tempDir('evil');
    const evil = await cli(['install', site.url, '--skill', 'evil'], cwd);
    expect(evil.code).toBe(5);
    expect(evil.stderr).toContain('the archive holds "../outside.txt", which would escape the skill folder');
    const future = await cli(['install', site.url, '--skill', 'future'], cwd);
    expect(future.code).toBe(4);
    expect(await tree(cwd)).toEqual([]);
  });

  it('redirects are followed; the index URL itself is a site too', async () => {
    const cwd = await tempDir('moved');
    const moved = await cli(['install', `${site.url}/moved`, '--skill', 'hello', '--dir', 'a'], cwd);
    expect(moved.code, moved.stderr).toBe(0);
    const direct = await cli(
      ['install', `${site.url}/.well-known/agent-skills/index.json`, '--skill', 'hello', '--dir', 'b'],
      cwd,
    );
    expect(direct.code, direct.stderr).toBe(0);
    expect(await readFile(join(cwd, 'b/hello/SKILL.md'))).toEqual(
      await readFile(join(cwd, 'a/hello/SKILL.md')),
    );
  });

  it('sends the registry token to its registry only, never to another site', async () => {
    const cwd = await tempDir('token');
    site.requests.length = 0;
    const result = await cli(['install', site.url, '--skill', 'hello'], cwd, {
      env: { PKGREG_TOKEN: 'pkgreg_not-for-other-sites' },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(site.requests.length).toBeGreaterThan(0);
    expect(site.requests.every((r) => r.headers.authorization === undefined)).toBe(true);
  });

  it('refuses plain http to another machine, and --skill without a site (usage errors)', async () => {
    const cwd = await tempDir('usage');
    const http = await cli(['install', 'http://example.com', '--skill', 'x'], cwd);
    expect(http.code).toBe(2);
    expect(http.stderr).toContain('is not https');
    expect((await cli(['install', '@acme/notes', '--skill', 'x'], cwd)).code).toBe(2);
    expect((await cli(['install', site.url, '@acme/notes'], cwd)).code).toBe(2);
    expect((await cli(['install', site.url, '--skill', 'Not_A_Name'], cwd)).code).toBe(2);
  });
});

describe('the lockfile: restore, list, verify, remove', () => {
  it('`pkgreg install` restores site skills from their recorded artifacts; other bytes there now are exit 5', async () => {
    const cwd = await tempDir('restore');
    expect((await cli(['install', site.url, '--skill', 'hello', '--skill', 'bundle'], cwd)).code).toBe(0);
    const before = await snapshot(join(cwd, '.agents/skills'));
    await rm(join(cwd, '.agents/skills/bundle'), { recursive: true });
    await rm(join(cwd, '.agents/skills/hello/SKILL.md'));
    const restored = await cli(['install'], cwd);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toContain(`installed bundle (${site.url}) -> .agents/skills/bundle`);
    expect(await snapshot(join(cwd, '.agents/skills'))).toEqual(before);
    const again = await cli(['install', '--frozen'], cwd);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`up to date hello (${site.url})`);
    // The site moves on: the locked bytes are not there any more.
    const served = site.files.get('/.well-known/agent-skills/hello/SKILL.md') as Served;
    site.files.set('/.well-known/agent-skills/hello/SKILL.md', {
      ...served,
      body: Buffer.from(SKILL_MD('hello', 'Says hello, louder.')),
    });
    try {
      await rm(join(cwd, '.agents/skills/hello'), { recursive: true });
      const refused = await cli(['install'], cwd);
      expect(refused.code).toBe(5);
      expect(refused.stderr).toContain('but pkgreg-lock.json locks sha256:');
      expect(existsSync(join(cwd, '.agents/skills/hello'))).toBe(false);
    } finally {
      await publishSite();
    }
  });

  it('list and verify show site skills; a modified file fails verify (exit 5); remove takes them out', async () => {
    const cwd = await tempDir('manage');
    expect((await cli(['install', site.url, '--skill', 'bundle'], cwd)).code).toBe(0);
    const list = await cli(['list'], cwd);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(
      new RegExp(`bundle \\(${site.url.replace(/[.]/g, '\\.')}\\) +sha256:[0-9a-f]{12} +universal +ok`),
    );
    const json = JSON.parse((await cli(['list', '--json'], cwd)).stdout) as Record<string, unknown>[];
    expect(json).toMatchObject([
      {
        name: 'bundle',
        version: null,
        source: { kind: 'well-known', url: site.url, skill: 'bundle' },
        state: 'ok',
      },
    ]);
    const verified = await cli(['verify'], cwd);
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.stdout).toContain('1 site skill: 1 ok, 0 failed');
    await writeFile(join(cwd, '.agents/skills/bundle/docs/guide.md'), '# Changed\n');
    const failed = await cli(['verify'], cwd);
    expect(failed.code).toBe(5);
    expect(failed.stdout).toContain('modified: .agents/skills/bundle/docs/guide.md');
    expect((await cli(['remove', 'bundle'], cwd)).code).toBe(5);
    const removed = await cli(['remove', `${site.url}#bundle`, '--force'], cwd);
    expect(removed.code, removed.stderr).toBe(0);
    expect(existsSync(join(cwd, '.agents/skills/bundle'))).toBe(false);
    expect((await lockOf(cwd)).sites).toBeUndefined();
  });

  it('a site skill and a package of one name cannot share a folder', async () => {
    const cwd = await tempDir('owners');
    expect((await cli(['install', `${registry.url}/@acme`, '--skill', 'notes'], cwd)).code).toBe(0);
    const clash = await cli(['install', '@acme/notes'], cwd);
    expect(clash.code).toBe(1);
    expect(clash.stderr).toContain(`already belongs to ${registry.url}/@acme#notes`);
  });
});

describe('a private scope', () => {
  /** A read token of the owner of the organisation the `vault` scope turns private in. */
  async function vaultToken(): Promise<string> {
    const signIn = await fetch(`${registry.url}/api/auth/dev/sign-in`, {
      method: 'POST',
      headers: { origin: registry.url, 'content-type': 'application/json' },
      body: JSON.stringify({ handle: 'keeper' }),
    });
    expect(signIn.status).toBe(200);
    const cookie = signIn.headers
      .getSetCookie()
      .map((value) => value.split(';')[0])
      .join('; ');
    const post = (path: string, body: unknown) =>
      fetch(`${registry.url}${path}`, {
        method: 'POST',
        headers: { cookie, origin: registry.url, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const org = await post('/api/auth/organization/create', { name: 'Vault', slug: 'vault-org' });
    expect(org.status).toBe(200);
    await database.db
      .insertInto('scope_settings')
      .values({
        scope: 'vault',
        organization_id: ((await org.json()) as { id: string }).id,
        visibility: 'private',
      })
      .execute();
    const created = await post('/api/tokens', { name: 'ci', permission: 'read', expiresInDays: 1 });
    expect(created.status).toBe(201);
    return CreatedTokenSchema.parse(await created.json()).token;
  }

  it('installs and restores with a read token for the registry; without one it is not found (exit 3)', async () => {
    const token = await vaultToken();
    const cwd = await tempDir('private');
    const refused = await cli(['install', `${registry.url}/@vault`, '--skill', 'plan'], cwd);
    expect(refused.code).toBe(3);
    const installed = await cli(['install', `${registry.url}/@vault`, '--skill', 'plan'], cwd, {
      env: { PKGREG_TOKEN: token },
    });
    expect(installed.code, installed.stderr).toBe(0);
    expect(await readFile(join(cwd, '.agents/skills/plan/SKILL.md'), 'utf8')).toMatch(/^---\nname: plan\n/);
    await rm(join(cwd, '.agents/skills/plan'), { recursive: true });
    // The artifact is the private package's too: only the token gets it back.
    expect((await cli(['install'], cwd)).code).toBe(3);
    expect((await cli(['install'], cwd, { env: { PKGREG_TOKEN: token } })).code).toBe(0);
    expect(existsSync(join(cwd, '.agents/skills/plan/SKILL.md'))).toBe(true);
  });
});

describe('outdated and update', () => {
  const row = (name: string, state: string) =>
    new RegExp(
      `^${name} \\(${site.url.replace(/[.]/g, '\\.')}\\) +sha256:[0-9a-f]{12} +(sha256:[0-9a-f]{12}|-) +(sha256:[0-9a-f]{12}|-) +${state}$`,
      'm',
    );

  it('outdated shows a site skill whose index lists another digest, not an unchanged one; update moves it', async () => {
    const cwd = await tempDir('site-outdated');
    expect((await cli(['install', site.url, '--skill', 'hello', '--skill', 'bundle'], cwd)).code).toBe(0);
    const current = await cli(['outdated'], cwd);
    expect(current.code, current.stderr).toBe(0);
    expect(current.stdout).toMatch(row('hello', 'current'));
    expect(current.stdout).toContain('All packages and site skills are up to date.');
    const before = await lockOf(cwd);
    const louder = SKILL_MD('hello', 'Says hello, louder.');
    await publishSite({ files: { [HELLO_PATH]: louder } });
    try {
      const outdated = await cli(['outdated'], cwd);
      expect(outdated.code, outdated.stderr).toBe(0);
      expect(outdated.stdout).toMatch(row('hello', 'outdated'));
      expect(outdated.stdout).toMatch(row('bundle', 'current'));
      expect(outdated.stdout).toContain('1 site skill can be updated with "pkgreg update".');
      const newDigest = `sha256:${sha256(louder)}`;
      const json = JSON.parse((await cli(['outdated', '--json'], cwd)).stdout) as Record<string, unknown>[];
      expect(json).toEqual([
        {
          name: 'bundle',
          source: { kind: 'well-known', url: site.url, skill: 'bundle' },
          current: before.sites?.[`${site.url}#bundle`]?.digest,
          requested: null,
          wanted: before.sites?.[`${site.url}#bundle`]?.digest,
          latest: before.sites?.[`${site.url}#bundle`]?.digest,
          state: 'current',
          status: null,
        },
        {
          name: 'hello',
          source: { kind: 'well-known', url: site.url, skill: 'hello' },
          current: before.sites?.[`${site.url}#hello`]?.digest,
          requested: null,
          wanted: newDigest,
          latest: newDigest,
          state: 'outdated',
          status: null,
        },
      ]);
      // `update <name>` takes a site skill by its name; the files and the lockfile entry move together.
      const updated = await cli(['update', 'hello'], cwd);
      expect(updated.code, updated.stderr).toBe(0);
      const from = before.sites?.[`${site.url}#hello`]?.digest.slice(0, 19);
      expect(updated.stdout).toBe(`updated hello (${site.url}) ${from} -> ${newDigest.slice(0, 19)}\n`);
      expect(await readFile(join(cwd, '.agents/skills/hello/SKILL.md'), 'utf8')).toBe(louder);
      const after = await lockOf(cwd);
      expect(after.sites?.[`${site.url}#hello`]).toEqual({
        ...before.sites?.[`${site.url}#hello`],
        digest: newDigest,
        files: { 'SKILL.md': { mode: '100644', sha256: sha256(louder) } },
      });
      expect(after.sites?.[`${site.url}#bundle`]).toEqual(before.sites?.[`${site.url}#bundle`]);
      expect((await cli(['outdated'], cwd)).stdout).toContain('All packages and site skills are up to date.');
      const again = await cli(['update'], cwd);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toBe('All packages and site skills are up to date.\n');
    } finally {
      await publishSite();
    }
  });

  it('a digest mismatch on update is exit 5: the files and the lockfile stay as they were', async () => {
    const cwd = await tempDir('site-update-tampered');
    expect((await cli(['install', site.url, '--skill', 'hello'], cwd)).code).toBe(0);
    const files = await snapshot(join(cwd, '.agents'));
    const lock = await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8');
    await publishSite({
      files: { [HELLO_PATH]: SKILL_MD('hello', 'Says hello, louder.') },
      tampered: { [HELLO_PATH]: SKILL_MD('hello', 'Says something else entirely.') },
    });
    try {
      const result = await cli(['update'], cwd);
      expect(result.code).toBe(5);
      expect(result.stderr).toMatch(
        /Digest mismatch: hello \(http:\/\/127\.0\.0\.1:\d+\): \S+\/hello\/SKILL\.md is sha256:[0-9a-f]{64}, but the index lists sha256:[0-9a-f]{64}; nothing was written/,
      );
      expect(result.stdout).toBe('');
      expect(await snapshot(join(cwd, '.agents'))).toEqual(files);
      expect(await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8')).toBe(lock);
      expect((await tree(cwd)).filter((path) => path.includes('.pkgreg-') || path.endsWith('.tmp'))).toEqual(
        [],
      );
    } finally {
      await publishSite();
    }
  });

  it('a site that does not answer is a warning row and exit 4, the packages still compared', async () => {
    const cwd = await tempDir('site-down');
    expect((await cli(['install', site.url, '--skill', 'hello'], cwd)).code).toBe(0);
    expect((await cli(['install', '@acme/notes'], cwd)).code).toBe(0);
    const lock = await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8');
    site.down = true;
    try {
      const outdated = await cli(['outdated'], cwd);
      expect(outdated.code).toBe(4);
      expect(outdated.stdout).toMatch(/^@acme\/notes +\S+ +\S+ +\S+ +current$/m);
      expect(outdated.stdout).toMatch(row('hello', 'unreachable'));
      expect(outdated.stderr).toContain(
        `warning: hello (${site.url}) could not be checked: the discovery index: ${new URL(site.url).host} did not answer (HTTP 503) after 4 attempts`,
      );
      expect(outdated.stderr).toContain(`error: 1 site skill could not be checked: hello (${site.url})`);
      const json = await cli(['outdated', '--json'], cwd);
      expect(json.code).toBe(4);
      expect(JSON.parse(json.stdout)).toContainEqual(
        expect.objectContaining({ name: 'hello', state: 'unreachable', latest: null }),
      );
      const update = await cli(['update'], cwd);
      expect(update.code).toBe(4);
      expect(update.stdout).toBe('');
      expect(await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8')).toBe(lock);
    } finally {
      site.down = false;
    }
  });
});

describe('what a site skill depends on', () => {
  it('installs the registry packages its SKILL.md declares, locks them, restores and removes them with it', async () => {
    const cwd = await tempDir('site-deps');
    const key = `${site.url}#needs`;
    const result = await cli(['install', site.url, '--skill', 'needs'], cwd);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(
      `installed needs (${site.url}) -> .agents/skills/needs\ninstalled @sitedeps/base@1.0.0 -> .agents/skills/base (dependency of ${key})\n`,
    );
    expect(result.stderr).toContain(
      `warning: needs (${site.url}): dependency "not a package" is not @scope/name[@range]; it was ignored`,
    );
    expect(await readFile(join(cwd, '.agents/skills/base/SKILL.md'), 'utf8')).toMatch(/^---\nname: base\n/);
    const lock = await lockOf(cwd);
    expect(lock.sites?.[key]?.dependencies).toEqual({ '@sitedeps/base': '^1' });
    expect(lock.packages['@sitedeps/base']).toMatchObject({
      version: '1.0.0',
      dirs: ['.agents/skills/base'],
      dependencyOf: [key],
      direct: false,
    });
    // What a site skill needs stays while it is installed.
    const refused = await cli(['remove', '@sitedeps/base'], cwd);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`@sitedeps/base is needed by ${key}`);
    // A restore puts both back; a lockfile without what the site skill needs is refused.
    await rm(join(cwd, '.agents'), { recursive: true });
    const restored = await cli(['install'], cwd);
    expect(restored.code, restored.stderr).toBe(0);
    expect(existsSync(join(cwd, '.agents/skills/base/SKILL.md'))).toBe(true);
    expect(existsSync(join(cwd, '.agents/skills/needs/SKILL.md'))).toBe(true);
    // The site moves on: its skill needs another package instead, which update installs with it; the one
    // it no longer needs stays, with a warning.
    await publishSite({
      files: {
        [NEEDS_PATH]: SKILL_MD('needs', 'Needs more.', 'metadata:\n  dependencies: "@sitedeps/extra"\n'),
      },
    });
    try {
      const updated = await cli(['update', key], cwd);
      expect(updated.code, updated.stderr).toBe(0);
      expect(updated.stdout).toMatch(
        /^updated needs \(.+\) sha256:[0-9a-f]{12} -> sha256:[0-9a-f]{12}\ninstalled @sitedeps\/extra@1\.0\.0 -> \.agents\/skills\/extra \(dependency of .+#needs\)\n$/,
      );
      expect(updated.stderr).toBe(
        'warning: @sitedeps/base was installed as a dependency and nothing needs it now; "pkgreg remove @sitedeps/base" removes it\n',
      );
      const after = await lockOf(cwd);
      expect(after.sites?.[key]?.dependencies).toEqual({ '@sitedeps/extra': null });
      expect(after.packages['@sitedeps/extra']).toMatchObject({ dependencyOf: [key], direct: false });
      expect(after.packages['@sitedeps/base']).not.toHaveProperty('dependencyOf');
    } finally {
      await publishSite();
    }
    const removed = await cli(['remove', 'needs'], cwd);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toContain(
      `removed @sitedeps/extra (.agents/skills/extra): a dependency of ${key}`,
    );
    expect(Object.keys((await lockOf(cwd)).packages)).toEqual(['@sitedeps/base']);
    expect((await cli(['remove', '@sitedeps/base'], cwd)).code).toBe(0);
    expect(await tree(join(cwd, '.agents/skills'))).toEqual([]);
  });

  it('a dependency the registry does not have is exit 3 and nothing is written', async () => {
    const cwd = await tempDir('site-deps-missing');
    await publishSite({
      files: {
        [NEEDS_PATH]: SKILL_MD(
          'needs',
          'Needs what is not there.',
          'metadata:\n  dependencies: "@sitedeps/nowhere@^1"\n',
        ),
      },
    });
    try {
      const result = await cli(['install', site.url, '--skill', 'needs'], cwd);
      expect(result.code).toBe(3);
      expect(result.stderr).toContain(`needed by ${site.url}#needs`);
      expect(await tree(cwd)).toEqual([]);
    } finally {
      await publishSite();
    }
  });

  it("a dependency whose folder is a site skill's of the same install is refused: exit 1, nothing written", async () => {
    const cwd = await tempDir('site-deps-own-folder');
    // A lockfile already there, to see it left as it was.
    expect((await cli(['install', site.url, '--skill', 'hello'], cwd)).code).toBe(0);
    const files = await tree(cwd);
    const lock = await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8');
    // `base` declares @sitedeps/base, which would go beside it: into .agents/skills/base, its own folder.
    await publishSite({
      skills: {
        base: SKILL_MD('base', 'Builds on its namesake.', 'metadata:\n  dependencies: "@sitedeps/base"\n'),
      },
    });
    try {
      const own = await cli(['install', site.url, '--skill', 'base'], cwd);
      expect(own.code).toBe(1);
      expect(own.stdout).toBe('');
      expect(own.stderr).toContain(
        `@sitedeps/base (dependency of ${site.url}#base): .agents/skills/base is also where ${site.url}#base is installed in this run; two skills cannot share a folder`,
      );
      expect(own.stderr).not.toMatch(/ENOENT/);
      expect(await tree(cwd)).toEqual(files);
      expect(await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8')).toBe(lock);
      // `needs` declares @sitedeps/base too: its folder is the site skill `base`'s of the same run.
      await publishSite({ skills: { base: SKILL_MD('base', 'Needs nothing.') } });
      const other = await cli(['install', site.url, '--skill', 'needs', '--skill', 'base'], cwd);
      expect(other.code).toBe(1);
      expect(other.stdout).toBe('');
      expect(other.stderr).toContain(
        `@sitedeps/base (dependency of ${site.url}#needs): .agents/skills/base is also where ${site.url}#base is installed in this run; two skills cannot share a folder`,
      );
      expect(other.stderr).not.toMatch(/ENOENT/);
      expect(await tree(cwd)).toEqual(files);
      expect(await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8')).toBe(lock);
    } finally {
      await publishSite();
    }
  });

  it('applyJobs refuses two writers of one folder, site skills included, before anything is staged', async () => {
    const cwd = await tempDir('apply-shared');
    const target: InstallTarget = {
      base: cwd,
      lockPath: join(cwd, 'pkgreg-lock.json'),
      global: false,
      roots: {} as Roots,
    };
    const dir = '.agents/skills/pdf';
    const item = (owner: string): FolderItem => ({
      owner,
      plans: [{ dir, path: join(cwd, dir), write: true }],
      files: [{ path: 'SKILL.md', mode: '100644', content: Buffer.from(SKILL_MD('pdf', 'A pdf skill.')) }],
    });
    const job = { ref: { full: '@acme/pdf' }, entry: { dirs: [dir] } } as unknown as InstallJob;
    const apply = (jobs: InstallJob[], alsoWrite: FolderItem[]) =>
      applyJobs({} as Context, target, jobs, {
        force: false,
        modifiedHint: '',
        progress: silentProgress(),
        lockedDirs: [],
        verify: false,
        alsoWrite,
      }).then(
        () => undefined,
        (error: unknown) => error,
      );
    // A package job and a site skill (the site skill alone would ask nothing of the registry).
    const withJob = await apply([job], [item(`${site.url}#pdf`)]);
    expect(withJob).toBeInstanceOf(CliError);
    expect((withJob as CliError).exitCode).toBe(1);
    expect((withJob as CliError).message).toBe(
      `@acme/pdf: ${dir} is also where ${site.url}#pdf is installed in this run; two skills cannot share a folder`,
    );
    // Two site skills, one folder: not merged away as one.
    const sites = await apply([], [item(`${site.url}#pdf`), item(`${site.url}/other#pdf`)]);
    expect((sites as CliError).exitCode).toBe(1);
    expect((sites as CliError).message).toContain(`is also where ${site.url}/other#pdf is installed`);
    expect(await tree(cwd)).toEqual([]);
  });
});
