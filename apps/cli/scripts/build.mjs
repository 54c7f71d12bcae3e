// Bundles the CLI into one file so the published tarball does not need the private workspace packages
// (@pkgreg/contracts is inlined). The package's real npm dependencies stay external: npm installs them,
// dedupes them with the user's other tools and `npm audit` sees them.
//
// Start-up time is mostly the loading of modules and the building of zod schemas, so the bundle does
// neither before a command needs it:
// - src/program.ts imports each command's module when that command runs. esbuild keeps such a module
//   in the bundle but evaluates it (and the modules only it imports) on that first import.
// - esbuild would hoist every `import … from 'zod'` to a static import at the top of the file, loaded
//   before anything runs. Each dependency is instead loaded with require() (Node >= 22.12 requires ES
//   modules too) in the module that imports it, so it loads only when that module is evaluated.
// - Node's own modules are taken with process.getBuiltinModule() the same way: an ES import of one
//   reads every export, which loads what its lazy ones stand for (node:http's WebSocket loads Node's
//   copy of undici, node:fs's ReadStream the stream and readline modules).
// - @pkgreg/contracts only declares things, so its modules are marked free of side effects: the ones
//   the CLI does not use (the MCP edge's schemas, jobs…) are left out instead of built at start-up.
import { readFile } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { build } from 'esbuild';

const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
const dependencies = Object.keys(pkg.dependencies ?? {});
const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const dependencyPattern = new RegExp(`^(?:${dependencies.map(escapeRegExp).join('|')})(?:/.*)?$`);

/**
 * `import { z } from 'zod'` becomes a require('zod') (process.getBuiltinModule() for Node's modules) run
 * where the importing module is evaluated. One ES module per dependency re-exports it, so its exports
 * are copied once, not once per module importing it.
 */
const loadWhereImported = {
  name: 'load-where-imported',
  setup(builder) {
    const isLoaded = (path) => isBuiltin(path) || dependencyPattern.test(path);
    builder.onResolve({ filter: /.*/ }, (args) => {
      if (args.namespace === 'loaded') return { path: args.path, namespace: 'required' };
      if (args.namespace === 'required') return { path: args.path, external: true };
      return isLoaded(args.path) ? { path: args.path, namespace: 'loaded' } : undefined;
    });
    builder.onLoad({ filter: /.*/, namespace: 'loaded' }, (args) => {
      const id = JSON.stringify(args.path);
      return { contents: `export * from ${id};\nexport default require(${id});`, loader: 'js' };
    });
    builder.onLoad({ filter: /.*/, namespace: 'required' }, (args) => {
      const id = JSON.stringify(args.path);
      const load = isBuiltin(args.path) ? `process.getBuiltinModule(${id})` : `require(${id})`;
      return { contents: `module.exports = ${load};`, loader: 'js' };
    });
  },
};

/** Every module of @pkgreg/contracts is pure declarations: unused ones are dropped. */
const contractsWithoutSideEffects = {
  name: 'contracts-without-side-effects',
  setup(builder) {
    let contractsDir;
    builder.onStart(async () => {
      const entry = await builder.resolve('@pkgreg/contracts', {
        kind: 'import-statement',
        resolveDir: new URL('../src', import.meta.url).pathname,
        pluginData: { plain: true },
      });
      if (entry.errors.length) throw new Error(entry.errors[0].text);
      contractsDir = entry.path.slice(0, entry.path.lastIndexOf('/') + 1);
    });
    builder.onResolve({ filter: /^(?:@pkgreg\/contracts$|\.)/ }, async (args) => {
      if (args.pluginData?.plain) return undefined;
      if (args.path.startsWith('.') && !args.importer.startsWith(contractsDir)) return undefined;
      const resolved = await builder.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: { plain: true },
      });
      if (resolved.errors.length) return { errors: resolved.errors };
      return { path: resolved.path, sideEffects: false };
    });
  },
};

await build({
  entryPoints: ['src/index.ts'],
  outfile: 'dist/index.js',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: `node${pkg.engines.node.replace(/^>=/, '')}`,
  // The `require` the dependencies are loaded with (an ES module has none of its own).
  banner: { js: "const require = process.getBuiltinModule('node:module').createRequire(import.meta.url);" },
  plugins: [loadWhereImported, contractsWithoutSideEffects],
  define: { PKGREG_CLI_VERSION: JSON.stringify(pkg.version) },
  legalComments: 'none',
  logLevel: 'warning',
});
