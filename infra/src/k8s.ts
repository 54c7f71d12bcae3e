import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

// Validates the Kubernetes manifests offline against the API's OpenAPI schemas, as published on npm by
// `kubernetes-models` (and `@kubernetes-models/keda` for KEDA's CRDs): each object's `validate()` checks
// types, formats and required fields; the same packages' TypeScript types then catch unknown fields (a
// misspelt `readinesProbe` passes the schemas, which allow extra properties, but not TypeScript's excess
// property check). Last, references between the objects: selectors, named ports, ConfigMaps, targets.

export interface ManifestDoc {
  /** Path relative to the validated folder. */
  file: string;
  /** Position of the document in its file, from 0. */
  index: number;
  /** The `namespace` of the kustomization listing the file (none: the one `kubectl -n` gives). */
  namespace?: string;
  object: Record<string, unknown> & {
    apiVersion?: string;
    kind?: string;
    metadata?: { name?: string; labels?: Record<string, string> };
  };
}

export interface ManifestSet {
  docs: ManifestDoc[];
  issues: string[];
}

const here = dirname(fileURLToPath(import.meta.url));
const packageRoot = resolve(here, '..');
const require = createRequire(import.meta.url);

/**
 * Only these keys: kustomize then emits the listed files unchanged but for the namespace, so what CI
 * validates is what is applied.
 */
const KUSTOMIZATION_KEYS = new Set(['apiVersion', 'kind', 'namespace', 'resources']);

/** A namespace name (RFC 1123 label), as the API server requires it. */
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return yamlFiles(path);
    return /\.ya?ml$/.test(entry.name) ? [path] : [];
  });
}

function parseFile(path: string, root: string, issues: string[]): ManifestDoc[] {
  const file = relative(root, path);
  const docs: ManifestDoc[] = [];
  parseAllDocuments(readFileSync(path, 'utf8')).forEach((doc, index) => {
    for (const error of doc.errors) issues.push(`${file}: YAML: ${error.message}`);
    const object = doc.toJS() as unknown;
    if (object === null || object === undefined) return;
    if (typeof object !== 'object' || Array.isArray(object)) {
      issues.push(`${file}#${index}: not a Kubernetes object`);
      return;
    }
    docs.push({ file, index, object: object as ManifestDoc['object'] });
  });
  return docs;
}

/**
 * Every kustomization under `root` with the files it lists, plus each `*.example.yaml`; any other YAML
 * file is an issue (it would be neither applied nor validated).
 */
export function loadManifests(root: string): ManifestSet {
  const issues: string[] = [];
  const docs: ManifestDoc[] = [];
  const covered = new Set<string>();
  const all = yamlFiles(root);
  for (const path of all.filter((p) => /(^|\/)kustomization\.ya?ml$/.test(p))) {
    covered.add(path);
    const name = relative(root, path);
    const [kustomization] = parseFile(path, root, issues);
    const object = kustomization?.object ?? {};
    if (object.kind !== 'Kustomization') issues.push(`${name}: kind must be Kustomization`);
    for (const key of Object.keys(object)) {
      if (!KUSTOMIZATION_KEYS.has(key))
        issues.push(`${name}: key ${key} is not validated here (keep it to an overlay of your own)`);
    }
    const namespace = object.namespace;
    if (namespace !== undefined && (typeof namespace !== 'string' || !NAMESPACE.test(namespace)))
      issues.push(`${name}: namespace must be a lowercase DNS label`);
    const resources = object.resources;
    if (!Array.isArray(resources)) {
      issues.push(`${name}: resources must be a list of files`);
      continue;
    }
    for (const resource of resources) {
      const target = resolve(dirname(path), String(resource));
      let isFile = false;
      try {
        isFile = statSync(target).isFile();
      } catch {}
      // A folder is a kustomization of its own, loaded above when it lies under root.
      if (!isFile) {
        if (!target.startsWith(root) || !all.some((p) => p.startsWith(`${target}/kustomization.`)))
          issues.push(`${name}: resource ${resource} is neither a file nor a kustomization under ${root}`);
        continue;
      }
      covered.add(target);
      for (const doc of parseFile(target, root, issues))
        docs.push(typeof namespace === 'string' ? { ...doc, namespace } : doc);
    }
  }
  for (const path of all) {
    if (covered.has(path)) continue;
    if (path.endsWith('.example.yaml')) docs.push(...parseFile(path, root, issues));
    else issues.push(`${relative(root, path)}: not listed in any kustomization.yaml (so never applied)`);
  }
  return { docs, issues };
}

/** The npm module holding the models of an apiVersion. */
function modelModule(apiVersion: string): string | undefined {
  if (apiVersion.startsWith('keda.sh/')) return `@kubernetes-models/keda/${apiVersion}`;
  const group = apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
  // The core group, the built-in groups without a dot, and the *.k8s.io ones.
  if (!group?.includes('.') || group.endsWith('.k8s.io')) return `kubernetes-models/${apiVersion}`;
  return undefined;
}

function describe(doc: ManifestDoc): string {
  return `${doc.file}#${doc.index} ${doc.object.kind ?? '?'}/${doc.object.metadata?.name ?? '?'}`;
}

/** Schema validation of each document (types, formats, required fields, enums). */
async function checkSchemas(docs: ManifestDoc[]): Promise<string[]> {
  const issues: string[] = [];
  for (const doc of docs) {
    const { apiVersion, kind } = doc.object;
    const module = typeof apiVersion === 'string' ? modelModule(apiVersion) : undefined;
    if (!module || typeof kind !== 'string') {
      issues.push(`${describe(doc)}: unknown apiVersion ${String(apiVersion)}`);
      continue;
    }
    let models: Record<string, unknown>;
    try {
      models = (await import(module)) as Record<string, unknown>;
    } catch {
      issues.push(`${describe(doc)}: unknown apiVersion ${apiVersion}`);
      continue;
    }
    const Model = models[kind] as (new (data: unknown) => { validate(): void }) | undefined;
    if (typeof Model !== 'function') {
      issues.push(`${describe(doc)}: unknown kind ${kind} in ${apiVersion}`);
      continue;
    }
    try {
      new Model(doc.object).validate();
    } catch (error) {
      issues.push(`${describe(doc)}: ${(error as Error).message}`);
    }
  }
  return issues;
}

/**
 * Unknown fields, by TypeScript's excess property check of each document against its model's type: the
 * documents as typed constants in a file of their own, checked by the repo's `tsc` (TypeScript 7 has no
 * stable compiler API to hand it a file in memory, docs/decisions.md), each error mapped back to its
 * document.
 */
function checkUnknownFields(docs: ManifestDoc[]): string[] {
  const typed = docs.filter(
    (d) => typeof d.object.apiVersion === 'string' && typeof d.object.kind === 'string',
  );
  const imports = new Map<string, string>();
  const declarations: { doc: ManifestDoc; line: number }[] = [];
  let body = '';
  let lines = 0;
  typed.forEach((doc, i) => {
    const module = modelModule(doc.object.apiVersion as string);
    if (!module || !/^[A-Za-z]+$/.test(doc.object.kind as string)) return;
    const alias = `T${imports.size}`;
    const key = `${module}#${doc.object.kind}`;
    if (!imports.has(key)) imports.set(key, alias);
    const declaration = `export const doc${i}: ${imports.get(key)} = ${JSON.stringify(doc.object, null, 1)};\n`;
    declarations.push({ doc, line: lines });
    body += declaration;
    lines += declaration.split('\n').length - 1;
  });
  const header = [...imports]
    .map(([key, alias]) => {
      const [module, kind] = key.split('#');
      return `import type { I${kind} as ${alias} } from '${module}';\n`;
    })
    .join('');
  // A folder in this package, so the models resolve from its node_modules; its own, so runs never collide.
  const folder = mkdtempSync(join(packageRoot, '.manifests-'));
  try {
    writeFileSync(join(folder, 'manifests.ts'), header + body);
    writeFileSync(
      join(folder, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          types: [],
        },
        files: ['manifests.ts'],
      }),
    );
    const tsc = join(dirname(require.resolve('typescript/package.json')), 'bin', 'tsc');
    const run = spawnSync(process.execPath, [tsc, '-p', folder, '--pretty', 'false'], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    if (run.error) return [`type check: ${run.error.message}`];
    const found = diagnosticsOf(run.stdout);
    // A tsc that failed without a diagnostic (killed, crashed) has checked nothing: never a pass.
    if (run.status !== 0 && found.length === 0) {
      return [`type check: tsc exited ${run.status ?? run.signal}: ${run.stderr.trim()}`];
    }
    const headerLines = header.split('\n').length - 1;
    return found.map(({ file, line, message }) => {
      if (!file.endsWith('manifests.ts')) return `type check: ${message}`;
      const owner = declarations.filter((d) => d.line <= line - 1 - headerLines).at(-1);
      return `${owner ? describe(owner.doc) : 'manifests'}: ${message}`;
    });
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/**
 * `tsc --pretty false` output: `file(line,col): error TSnnnn: message`, a message's chain continued on
 * indented lines (joined here with spaces); anything else tsc prints (a config error) as its own issue.
 */
function diagnosticsOf(output: string): { file: string; line: number; message: string }[] {
  const found: { file: string; line: number; message: string }[] = [];
  for (const text of output.split('\n')) {
    if (!text.trim()) continue;
    const head = /^(.+?)\((\d+),\d+\): error TS\d+: (.*)$/.exec(text);
    const last = found.at(-1);
    if (head) found.push({ file: head[1] as string, line: Number(head[2]), message: head[3] as string });
    else if (last && /^\s/.test(text)) last.message += ` ${text.trim()}`;
    else found.push({ file: '', line: 0, message: text.trim() });
  }
  return found;
}

// The documents passed the schemas above; the reference checks read them as loose JSON.
// biome-ignore lint/suspicious/noExplicitAny: walked by field name after schema validation
type Obj = Record<string, any>;

function podTemplate(doc: ManifestDoc): Obj | undefined {
  const kind = doc.object.kind;
  const spec = doc.object.spec as Obj | undefined;
  if (kind === 'Deployment' || kind === 'StatefulSet' || kind === 'DaemonSet') return spec?.template;
  if (kind === 'Job') return spec?.template;
  return undefined;
}

/**
 * The Service and namespace a `host:port` address names when written in full (`<service>.<namespace>.svc`,
 * optionally `.cluster.local`); undefined for a short or outside name.
 */
export function serviceAddress(address: string): { service: string; namespace: string } | undefined {
  const match = /^([a-z0-9-]+)\.([a-z0-9-]+)\.svc(?:\.cluster\.local)?:\d+$/.exec(address);
  return match ? { service: match[1] as string, namespace: match[2] as string } : undefined;
}

function matches(selector: Record<string, string> | undefined, labels: Record<string, string> | undefined) {
  if (!selector || Object.keys(selector).length === 0) return false;
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

/** References between objects that the schemas cannot see. */
function checkReferences(docs: ManifestDoc[]): string[] {
  const issues: string[] = [];
  const named = (kind: string, name: unknown) =>
    docs.find((d) => d.object.kind === kind && d.object.metadata?.name === name);
  const workloads = docs.filter((d) => podTemplate(d));
  for (const doc of workloads) {
    const template = podTemplate(doc) as Obj;
    const spec = doc.object.spec as Obj;
    if (doc.object.kind !== 'Job' && !matches(spec.selector?.matchLabels, template.metadata?.labels))
      issues.push(`${describe(doc)}: selector.matchLabels does not match the pod template's labels`);
    const volumes = new Set<string>(
      (template.spec?.volumes ?? [])
        .map((v: Obj) => v.name)
        .concat((spec.volumeClaimTemplates ?? []).map((v: Obj) => v.metadata?.name)),
    );
    for (const volume of template.spec?.volumes ?? []) {
      if (volume.configMap && !named('ConfigMap', volume.configMap.name))
        issues.push(
          `${describe(doc)}: volume ${volume.name} names a missing ConfigMap ${volume.configMap.name}`,
        );
    }
    for (const container of [
      ...(template.spec?.containers ?? []),
      ...(template.spec?.initContainers ?? []),
    ]) {
      const where = `${describe(doc)} container ${container.name}`;
      const ports = new Set<string>((container.ports ?? []).map((p: Obj) => p.name).filter(Boolean));
      for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
        const port = container[probe]?.httpGet?.port ?? container[probe]?.tcpSocket?.port;
        if (typeof port === 'string' && !ports.has(port))
          issues.push(`${where}: ${probe} names port ${port}, which the container does not declare`);
      }
      for (const mount of container.volumeMounts ?? []) {
        if (!volumes.has(mount.name)) issues.push(`${where}: volumeMount ${mount.name} has no volume`);
      }
      for (const source of container.envFrom ?? []) {
        const name = source.configMapRef?.name;
        if (name && !named('ConfigMap', name))
          issues.push(`${where}: envFrom names a missing ConfigMap ${name}`);
      }
      for (const variable of container.env ?? []) {
        const cm = variable.valueFrom?.configMapKeyRef;
        if (cm && !(named('ConfigMap', cm.name)?.object.data as Obj | undefined)?.[cm.key])
          issues.push(`${where}: env ${variable.name} names missing ConfigMap key ${cm.name}.${cm.key}`);
        const secret = variable.valueFrom?.secretKeyRef;
        if (secret) {
          const example = named('Secret', secret.name)?.object as Obj | undefined;
          if (!example)
            issues.push(`${where}: env ${variable.name} names Secret ${secret.name}, with no example`);
          else if (!(secret.key in { ...example.stringData, ...example.data }))
            issues.push(
              `${where}: env ${variable.name} reads key ${secret.key}, missing from the example Secret`,
            );
        }
      }
    }
  }
  for (const doc of docs) {
    const spec = doc.object.spec as Obj | undefined;
    switch (doc.object.kind) {
      case 'Service': {
        const target = workloads.find((w) => matches(spec?.selector, podTemplate(w)?.metadata?.labels));
        if (!target) {
          issues.push(`${describe(doc)}: selector matches no workload's pods`);
          break;
        }
        const declared = new Set(
          (podTemplate(target)?.spec?.containers ?? []).flatMap((c: Obj) =>
            (c.ports ?? []).map((p: Obj) => p.name),
          ),
        );
        for (const port of spec?.ports ?? []) {
          if (typeof port.targetPort === 'string' && !declared.has(port.targetPort))
            issues.push(
              `${describe(doc)}: targetPort ${port.targetPort} is not a port of ${describe(target)}`,
            );
        }
        break;
      }
      case 'PodDisruptionBudget':
        if (!workloads.some((w) => matches(spec?.selector?.matchLabels, podTemplate(w)?.metadata?.labels)))
          issues.push(`${describe(doc)}: selector matches no workload's pods`);
        break;
      case 'HorizontalPodAutoscaler':
      case 'ScaledObject': {
        const kind = spec?.scaleTargetRef?.kind ?? 'Deployment';
        const target = named(kind, spec?.scaleTargetRef?.name);
        if (!target) issues.push(`${describe(doc)}: scaleTargetRef names a missing ${kind}`);
        // A fixed count would be put back by every apply, fighting the autoscaler until it acts again.
        else if ((target.object.spec as Obj | undefined)?.replicas !== undefined)
          issues.push(`${describe(target)}: sets replicas, but ${describe(doc)} owns the count`);
        if (doc.object.kind === 'HorizontalPodAutoscaler') break;
        for (const trigger of spec?.triggers ?? []) {
          // KEDA's operator resolves the address from its own namespace: a short name misses our Redis.
          const address = trigger.metadata?.address;
          if (trigger.type === 'redis' && typeof address === 'string') {
            const where = `${describe(doc)}: trigger ${trigger.name} address ${address}`;
            const service = serviceAddress(address);
            const inCluster =
              !address.split(':')[0]?.includes('.') || /\.svc(\.cluster\.local)?:/.test(address);
            if (inCluster && !service)
              issues.push(
                `${where} must name the Service in full (<service>.<namespace>.svc.cluster.local:<port>)`,
              );
            else if (service && doc.namespace !== undefined && service.namespace !== doc.namespace)
              issues.push(
                `${where} names namespace ${service.namespace}, not the kustomization's ${doc.namespace}`,
              );
            else if (service && !named('Service', service.service))
              issues.push(`${where} names a missing Service ${service.service}`);
          }
          const auth = trigger.authenticationRef?.name;
          if (auth && !named('TriggerAuthentication', auth))
            issues.push(
              `${describe(doc)}: trigger ${trigger.name} names a missing TriggerAuthentication ${auth}`,
            );
        }
        break;
      }
    }
  }
  return issues;
}

/** Every issue found in the manifests under `root` (empty: all valid). */
export async function validateManifests(root: string): Promise<{ docs: ManifestDoc[]; issues: string[] }> {
  const absolute = resolve(root);
  const { docs, issues } = loadManifests(absolute);
  issues.push(...(await checkSchemas(docs)), ...checkUnknownFields(docs), ...checkReferences(docs));
  return { docs, issues };
}
