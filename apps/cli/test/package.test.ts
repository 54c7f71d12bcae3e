import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { runBinary, tempDir } from './helpers/cli.js';
import { useSeededRegistry } from './helpers/seeded-registry.js';

// The tarball npm would publish: self-contained (the private @pkgreg/contracts is bundled in), with
// only real npm dependencies, installable with a plain `npm install -g`.

const run = promisify(execFile);

// Under `pnpm test`, pnpm exports its own npm_config_* settings (catalogs, store, hooks); a user's npm
// never sees them, and npm misreads some, so npm runs here with them removed.
const npmEnv = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => !/^(npm_|pnpm_)/i.test(key)),
) as NodeJS.ProcessEnv;
const CLI_DIR = new URL('..', import.meta.url).pathname;
const ROOT = new URL('../../..', import.meta.url).pathname;

const { registry } = useSeededRegistry([
  {
    owner: 'acme',
    repo: 'skills',
    path: 'pdf-tools',
    name: 'pdf-tools',
    description: 'Extract text from PDF files',
  },
]);

describe('npm pack + npm install -g', () => {
  it('installs from the tarball and runs against a registry', async () => {
    const pkg = JSON.parse(await readFile(join(CLI_DIR, 'package.json'), 'utf8'));
    expect(pkg.private).toBeUndefined();
    const out = await tempDir('pack');
    const packed = await run('npm', ['pack', '--json', '--pack-destination', out], {
      cwd: CLI_DIR,
      env: npmEnv,
    });
    const [manifest] = JSON.parse(packed.stdout) as [{ filename: string; files: { path: string }[] }];
    expect(manifest.files.map((f) => f.path).sort()).toEqual(['README.md', 'dist/index.js', 'package.json']);

    const bundle = await readFile(join(CLI_DIR, 'dist/index.js'), 'utf8');
    expect(bundle.startsWith('#!/usr/bin/env node\n')).toBe(true);
    expect(bundle).not.toMatch(/from ['"]@pkgreg\//);

    const prefix = await tempDir('prefix');
    await run(
      'npm',
      ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', join(out, manifest.filename)],
      {
        cwd: out,
        env: npmEnv,
        timeout: 180_000,
      },
    );
    const home = await tempDir('home');
    const bin = join(prefix, 'bin/pkgreg');
    const version = await runBinary(bin, ['--version'], { cwd: out, home });
    expect(version).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });

    const search = await runBinary(bin, ['search', 'pdf'], {
      cwd: out,
      home,
      env: { PKGREG_REGISTRY: registry.url },
    });
    expect(search.code).toBe(0);
    expect(search.stdout).toContain('@acme/pdf-tools');
  }, 240_000);

  it("pins the real dependencies to exact versions: the workspace catalog's, and what pnpm installed (STYLE.md §12)", async () => {
    // npm cannot read pnpm's `catalog:` protocol, so the published manifest names versions; they must
    // stay the catalog's, and be the ones the tests ran with.
    const pkg = JSON.parse(await readFile(join(CLI_DIR, 'package.json'), 'utf8'));
    const workspace = await readFile(join(ROOT, 'pnpm-workspace.yaml'), 'utf8');
    const lock = await readFile(join(ROOT, 'pnpm-lock.yaml'), 'utf8');
    const importer = lock.slice(
      lock.indexOf('\n  apps/cli:\n'),
      lock.indexOf('\n  apps/', lock.indexOf('\n  apps/cli:\n') + 1),
    );
    for (const [name, version] of Object.entries(pkg.dependencies as Record<string, string>)) {
      expect(version, name).toMatch(/^\d+\.\d+\.\d+$/);
      const catalogued = new RegExp(`\n  "?${name}"?: (\\S+)\n`).exec(workspace)?.[1];
      if (catalogued !== undefined) expect(version, `${name} in the catalog`).toBe(catalogued);
      expect(importer, `${name} in pnpm-lock.yaml`).toMatch(
        new RegExp(
          `\n      ${name}:\n        specifier: ${version.replace(/\./g, '\\.')}\n        version: ${version.replace(/\./g, '\\.')}(\\(\\S+\\))?\n`,
        ),
      );
    }
    expect(Object.keys(pkg.dependencies).sort()).toEqual([
      'cli-progress',
      'commander',
      'semver',
      'tar-stream',
      'undici',
      'yaml',
      'yauzl',
      'zod',
    ]);
  });
});
