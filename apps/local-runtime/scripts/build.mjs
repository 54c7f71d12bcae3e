// Bundles the local runtime into one file so the published tarball does not need the private workspace
// packages (@pkgreg/runtime, agents, memory, tasks, db, contracts, server-kit are inlined). Its real npm
// dependencies stay external: npm installs them (PGlite brings its WASM and data files), dedupes them and
// `npm audit` sees them. Workspace modules are marked free of side effects so what the runtime never uses
// (the BullMQ queue of @pkgreg/tasks, and with it bullmq and ioredis) is left out.
import { readFile } from 'node:fs/promises';
import { build } from 'esbuild';

const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
const NEVER_LOADED = ['bullmq', 'ioredis'];

const workspaceWithoutSideEffects = {
  name: 'workspace-without-side-effects',
  setup(builder) {
    builder.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData?.plain) return undefined;
      const resolved = await builder.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: { plain: true },
      });
      if (resolved.errors.length) return { errors: resolved.errors };
      if (resolved.external) return { path: args.path, external: true };
      const workspace = /\/packages\/[^/]+\/dist\//.test(resolved.path);
      return {
        path: resolved.path,
        namespace: resolved.namespace,
        sideEffects: workspace ? false : resolved.sideEffects,
      };
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
  // bullmq and ioredis are only reached through modules the runtime never uses: external so esbuild does
  // not parse them, and checked below never to be loaded.
  external: [...Object.keys(pkg.dependencies), ...NEVER_LOADED],
  // CommonJS dependencies (pg, express) are loaded with require from the bundle.
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module';\nconst require = __createRequire(import.meta.url);",
  },
  plugins: [workspaceWithoutSideEffects],
  legalComments: 'none',
  logLevel: 'warning',
});

const bundle = await readFile(new URL('../dist/index.js', import.meta.url), 'utf8');
for (const name of NEVER_LOADED) {
  if (bundle.includes(`from "${name}"`) || bundle.includes(`require("${name}")`)) {
    throw new Error(`the bundle loads ${name}, which is not a dependency of the local runtime`);
  }
}
