import { validateManifests } from './k8s.ts';

// `pnpm --filter @pkgreg/infra validate [folder]`: validates the manifests under the folder (default
// infra/k8s) and exits 1 with one line per issue.
const root = process.argv[2] ?? new URL('../k8s', import.meta.url).pathname;
const { docs, issues } = await validateManifests(root);
if (issues.length > 0) {
  for (const issue of issues) console.error(issue);
  console.error(`${issues.length} issue(s) in ${root}`);
  process.exit(1);
}
console.log(`${docs.length} objects under ${root}: valid`);
