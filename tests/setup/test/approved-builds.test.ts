import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { parse } from 'yaml';

// pnpm 10 runs only the install scripts pnpm-workspace.yaml approves (onlyBuiltDependencies) and warns
// about every other one at each install: each installed package with an install script must be either
// approved or explicitly ignored (ignoredBuiltDependencies), so installs stay quiet and decided.

const root = fileURLToPath(new URL('../../..', import.meta.url));

/** Names of the installed packages (pnpm's virtual store) that declare an install script. */
function packagesWithInstallScripts(): string[] {
  const store = join(root, 'node_modules/.pnpm');
  const names = new Set<string>();
  for (const entry of readdirSync(store)) {
    const modules = join(store, entry, 'node_modules');
    if (!existsSync(modules)) continue;
    for (const top of readdirSync(modules)) {
      const dirs = top.startsWith('@') ? readdirSync(join(modules, top)).map((n) => join(top, n)) : [top];
      for (const dir of dirs) {
        const path = join(modules, dir);
        // Symlinks are this package's dependencies, read under their own store entry.
        if (lstatSync(path).isSymbolicLink() || !existsSync(join(path, 'package.json'))) continue;
        const manifest = JSON.parse(readFileSync(join(path, 'package.json'), 'utf8')) as {
          name?: string;
          scripts?: Record<string, string>;
        };
        const scripts = manifest.scripts ?? {};
        if (manifest.name && ['preinstall', 'install', 'postinstall'].some((s) => s in scripts))
          names.add(manifest.name);
      }
    }
  }
  return [...names].sort();
}

it('has every install script approved or explicitly ignored', () => {
  const workspace = parse(readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8')) as {
    onlyBuiltDependencies?: string[];
    ignoredBuiltDependencies?: string[];
  };
  const decided = new Set([
    ...(workspace.onlyBuiltDependencies ?? []),
    ...(workspace.ignoredBuiltDependencies ?? []),
  ]);
  const found = packagesWithInstallScripts();
  expect(found).toContain('esbuild');
  expect(found.filter((name) => !decided.has(name))).toEqual([]);
});
