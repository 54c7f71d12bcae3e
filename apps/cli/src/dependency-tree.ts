import type { VersionDetail } from '@pkgreg/contracts';
import type { Context } from './context.js';
import { CliError, EXIT } from './errors.js';
import { parsePackageArg, parseVersionSpec } from './names.js';
import { resolveVersion } from './versions.js';

// The dependency tree `pkgreg info` shows (README: Dependencies). Apart from install's resolution
// (install/resolve.ts), so info loads none of the install pipeline.

/** One dependency in `pkgreg info`'s tree: what its range resolves to now, and what that needs. */
export interface DependencyTreeNode {
  name: string;
  range: string | null;
  /** The version the range resolves to now (never a yanked one); null when it does not resolve. */
  version: string | null;
  /** Why it does not resolve, when it does not. */
  error: string | null;
  /** It leads back to a package above it on its own path (install refuses this). */
  cycle: boolean;
  /** Shown above already: its dependencies are not repeated. */
  deduped: boolean;
  dependencies: DependencyTreeNode[];
}

/**
 * The dependency tree below a package, each range resolved on its own as install would resolve it
 * alone (install also makes every package agree on one version). Each package version is expanded once.
 */
export async function dependencyTree(
  ctx: Context,
  root: string,
  dependencies: ReadonlyArray<{ name: string; range: string | null }>,
): Promise<DependencyTreeNode[]> {
  const resolved = new Map<string, Promise<VersionDetail | string>>();
  const expanded = new Set<string>();
  const resolve = (name: string, range: string | null): Promise<VersionDetail | string> => {
    const key = `${name} ${range ?? ''}`;
    let found = resolved.get(key);
    if (!found) {
      const ref = parsePackageArg(name);
      found = resolveVersion(
        ctx,
        ref,
        range === null ? { kind: 'latest' } : parseVersionSpec(range, name),
      ).catch((error: unknown) => {
        if (error instanceof CliError && (error.exitCode === EXIT.notFound || error.exitCode === EXIT.usage))
          return error.message;
        throw error;
      });
      resolved.set(key, found);
    }
    return found;
  };
  const walk = async (
    list: ReadonlyArray<{ name: string; range: string | null }>,
    path: ReadonlySet<string>,
  ): Promise<DependencyTreeNode[]> => {
    const nodes: DependencyTreeNode[] = [];
    for (const dependency of list) {
      const found = await resolve(dependency.name, dependency.range);
      const node: DependencyTreeNode = {
        name: dependency.name,
        range: dependency.range,
        version: typeof found === 'string' ? null : found.version,
        error: typeof found === 'string' ? found : null,
        cycle: path.has(dependency.name),
        deduped: false,
        dependencies: [],
      };
      nodes.push(node);
      if (typeof found === 'string' || node.cycle) continue;
      const id = `${dependency.name}@${found.version}`;
      if (expanded.has(id)) {
        node.deduped = found.dependencies.length > 0;
        continue;
      }
      expanded.add(id);
      node.dependencies = await walk(found.dependencies, new Set([...path, dependency.name]));
    }
    return nodes;
  };
  return walk(dependencies, new Set([root]));
}

/** The tree as `pkgreg info` prints it, two spaces per level. */
export function treeLines(nodes: readonly DependencyTreeNode[], depth = 1): string[] {
  const lines: string[] = [];
  for (const node of nodes) {
    const wanted = `${node.name} ${node.range ?? 'latest'}`;
    const got = node.version ?? `unresolved (${node.error})`;
    const marks = [node.cycle ? 'cycle: install refuses it' : '', node.deduped ? 'see above' : '']
      .filter(Boolean)
      .join(', ');
    lines.push(`${'  '.repeat(depth)}${wanted} -> ${got}${marks ? ` (${marks})` : ''}`);
    lines.push(...treeLines(node.dependencies, depth + 1));
  }
  return lines;
}
