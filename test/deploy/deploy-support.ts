// Support of the deploy tier: the CRDs of every kind the controller may watch, the stack's project
// directory, and small readers of Kubernetes objects fetched with kubectl.
import { copyFile, mkdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { BUILT_IN_API_GROUPS } from '../../services/model/kubernetes';
import { generateSelfSignedBundle } from '../../services/webhook/certs/self-signed';
import { COMPANION_KINDS, INVENTORY_KINDS, POLICY_SOURCE_KINDS } from '../../services/model/watched-kinds';
import type { Cluster } from '../e2e/harness';
import { asJsonObject, isJsonObject, repositoryRoot, type JsonObject } from '../e2e/forewarn-support';

export interface CrdDescription {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
}

/**
 * CRDs of every kind the controller may watch, from the model's registry of watched kinds (so a new
 * policy source is covered automatically), one constraint kind for each dynamic group (Gatekeeper),
 * and cert-manager's Certificate for managed mode.
 */
export function watchedKindCrds(): CrdDescription[] {
  const sources = Object.values(POLICY_SOURCE_KINDS);
  const kinds = [...sources.flatMap((source) => source.kinds), ...INVENTORY_KINDS, ...COMPANION_KINDS];
  const crds: CrdDescription[] = kinds
    .filter((kind) => !BUILT_IN_API_GROUPS.has(kind.group))
    .map((kind) => ({ ...kind, version: kind.versions[0] }));
  for (const group of sources.flatMap((source) => source.dynamicGroups ?? [])) {
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
    metadata: {
      name: `${crd.plural}.${crd.group}`,
      // Groups under k8s.io (AdminNetworkPolicy) are protected: the API server wants an approval.
      annotations: /(^|\.)k8s\.io$/.test(crd.group)
        ? { 'api-approved.kubernetes.io': 'https://github.com/kubernetes-sigs/network-policy-api/pull/30' }
        : {},
    },
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

export interface CertManagerIssue {
  namespace: string;
  certificate: string;
  secretName: string;
  /** The Service the certificate serves (its DNS names go into the SANs). */
  serviceName: string;
  issuer: { name: string; kind: string };
}

/**
 * Does what cert-manager's controller does for a Certificate, since no cert-manager runs in the tier:
 * writes the `kubernetes.io/tls` Secret the Certificate names, with a serving certificate signed by a
 * CA (made here by the webhook's own generator), the CA in `ca.crt`, and the annotations cert-manager
 * puts on the Secrets it issues.
 */
export async function issueSecretAsCertManager(cluster: Cluster, issue: CertManagerIssue): Promise<void> {
  const bundle = await generateSelfSignedBundle({
    serviceName: issue.serviceName,
    namespace: issue.namespace,
    extraSans: [],
    now: new Date(),
  });
  const base64 = (text: string): string => Buffer.from(text).toString('base64');
  const secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: {
      name: issue.secretName,
      namespace: issue.namespace,
      annotations: {
        'cert-manager.io/certificate-name': issue.certificate,
        'cert-manager.io/issuer-name': issue.issuer.name,
        'cert-manager.io/issuer-kind': issue.issuer.kind,
        'cert-manager.io/issuer-group': 'cert-manager.io',
      },
    },
    data: {
      'tls.crt': base64(bundle.certPem),
      'tls.key': base64(bundle.keyPem),
      'ca.crt': base64(bundle.caPem),
    },
  };
  const result = await cluster.kubectl(['apply', '-f', '-'], { stdin: JSON.stringify(secret) });
  if (result.code !== 0) throw new Error(`issuing Secret ${issue.secretName} failed: ${result.stderr}`);
}
