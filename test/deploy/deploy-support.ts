// Support of the deploy tier: the CRDs of every kind the controller may watch, the stack's project
// directory, and small readers of Kubernetes objects fetched with kubectl.
import { copyFile, mkdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { AdapterRegistry } from '../../services/controller/adapters/registry';
import { COMPANION_CANDIDATES } from '../../services/controller/sources/cluster/discovery';
import type { Cluster } from '../e2e/harness';
import { asJsonObject, isJsonObject, repositoryRoot, type JsonObject } from '../e2e/forewarn-support';

export interface CrdDescription {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
}

/** Groups kube-apiserver serves itself; every other group needs a CRD. */
function isBuiltInGroup(group: string): boolean {
  return group === '' || !group.includes('.') || group.endsWith('.k8s.io');
}

function defaultPlural(kind: string): string {
  const lower = kind.toLowerCase();
  if (lower.endsWith('s')) return `${lower}es`;
  if (lower.endsWith('y')) return `${lower.slice(0, -1)}ies`;
  return `${lower}s`;
}

/** The cluster-scoped issuer kinds; every other companion kind of a CRD group is namespaced. */
const CLUSTER_SCOPED_COMPANIONS = new Set(['ClusterIssuer']);

/**
 * CRDs of every kind the controller may watch (derived from the adapter registry and the companion
 * rules, so a new adapter is covered automatically), one Gatekeeper constraint kind for the dynamic
 * group, and cert-manager's Certificate for managed mode.
 */
export function watchedKindCrds(): CrdDescription[] {
  const registry = new AdapterRegistry();
  const crds: CrdDescription[] = registry
    .allKinds()
    .filter(({ kind }) => !isBuiltInGroup(kind.group))
    .map(({ kind }) => ({ ...kind, version: kind.versions[0] }));
  for (const candidate of COMPANION_CANDIDATES.filter((c) => !isBuiltInGroup(c.group))) {
    crds.push({
      group: candidate.group,
      version: candidate.versions[0],
      kind: candidate.kind,
      plural: defaultPlural(candidate.kind),
      namespaced: !CLUSTER_SCOPED_COMPANIONS.has(candidate.kind),
    });
  }
  for (const group of registry.adapters.flatMap((adapter) => adapter.dynamicGroups ?? [])) {
    crds.push({
      group,
      version: 'v1beta1',
      kind: 'K8sRequiredLabels',
      plural: 'k8srequiredlabels',
      namespaced: false,
    });
  }
  crds.push({
    group: 'cert-manager.io',
    version: 'v1',
    kind: 'Certificate',
    plural: 'certificates',
    namespaced: true,
  });
  return crds;
}

/**
 * A minimal structural CRD: any spec and status are stored (the controller only reads them), and
 * status is a subresource so the test can mark a Certificate Ready as cert-manager would. What the
 * component writes is checked against cert-manager's real schema separately
 * (@kubernetes-models/cert-manager), since these CRDs accept anything.
 */
export function crdManifest(crd: CrdDescription): JsonObject {
  const open = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${crd.plural}.${crd.group}` },
    spec: {
      group: crd.group,
      scope: crd.namespaced ? 'Namespaced' : 'Cluster',
      names: {
        kind: crd.kind,
        listKind: `${crd.kind}List`,
        plural: crd.plural,
        singular: crd.kind.toLowerCase(),
      },
      versions: [
        {
          name: crd.version,
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: open, status: open } } },
        },
      ],
    },
  };
}

/** kubectl that must succeed; returns stdout. */
export async function kubectlOk(
  cluster: Cluster,
  args: readonly string[],
  stdin?: string,
  timeoutMs = 60_000,
): Promise<string> {
  const result = await cluster.kubectl(args, { stdin, timeoutMs });
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}

export async function kubectlJson(cluster: Cluster, args: readonly string[]): Promise<JsonObject> {
  return asJsonObject(
    JSON.parse(await kubectlOk(cluster, [...args, '-o', 'json'])),
    `kubectl ${args.join(' ')}`,
  );
}

/** Whether `kubectl get` finds the object (false on NotFound, throws on other errors). */
export async function objectExists(cluster: Cluster, args: readonly string[]): Promise<boolean> {
  const result = await cluster.kubectl(['get', ...args, '-o', 'name']);
  if (result.code === 0) return true;
  if (/NotFound|not found/.test(result.stderr)) return false;
  throw new Error(`kubectl get ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
}

/** A nested field of a JSON value, e.g. at(obj, 'data', 'ca.crt') or at(obj, 'webhooks', '0', 'name'). */
export function at(value: unknown, ...keys: string[]): unknown {
  let current = value;
  for (const key of keys) {
    if (Array.isArray(current)) current = current[Number(key)];
    else current = isJsonObject(current) ? current[key] : undefined;
  }
  return current;
}

/**
 * The repository's stack as a Pulumi project in its own directory: the repository's Pulumi.yaml copied
 * as is, and links to dist/, node_modules/ and package.json, so `pulumi up` runs dist/infra/stack.js
 * exactly as in the repository while the stack files (Pulumi.<stack>.yaml) stay out of the checkout.
 */
export async function stackProjectDirectory(workDir: string): Promise<string> {
  const dir = path.join(workDir, 'stack-project');
  await mkdir(dir, { recursive: true });
  await copyFile(path.join(repositoryRoot, 'Pulumi.yaml'), path.join(dir, 'Pulumi.yaml'));
  for (const entry of ['dist', 'node_modules', 'package.json']) {
    await symlink(path.join(repositoryRoot, entry), path.join(dir, entry));
  }
  return dir;
}
