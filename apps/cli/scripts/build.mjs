// Bundles the CLI into one file so the published tarball does not need the private workspace packages
// (@pkgreg/contracts is inlined). The package's real npm dependencies stay external: npm installs them,
// dedupes them with the user's other tools and `npm audit` sees them.
import { readFile } from 'node:fs/promises';
import { build } from 'esbuild';

const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));

await build({
  entryPoints: ['src/index.ts'],
  outfile: 'dist/index.js',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: `node${pkg.engines.node.replace(/^>=/, '')}`,
  external: Object.keys(pkg.dependencies ?? {}),
  define: { PKGREG_CLI_VERSION: JSON.stringify(pkg.version) },
  legalComments: 'none',
  logLevel: 'warning',
});
