import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubernetesObject } from '../../../services/model/kubernetes';
import { realworldDirectory } from '../../support/realworld-corpus';
import { corpusPolicies } from '../kyverno-oracle';
import { crdManifest } from '../../e2e/forewarn-crds';

// The inventory of the workloads-at-risk fidelity test (risks-agreement.test.ts): running workloads
// of every kind the risks evaluate, compliant and not, in three namespaces, and the policies of each
// engine that are applied after them, as a tightened policy would be. The realworld corpus
// (../shared/realworld) gives real workloads and policies; it is read from there, never copied.

export const NAMESPACES = ['shop', 'payments', 'tools'] as const;

/** Pod Security labels set after the workloads run (tools has none). */
export const POD_SECURITY_LEVELS: Record<string, 'baseline' | 'restricted' | undefined> = {
  shop: 'baseline',
  payments: 'restricted',
  tools: undefined,
};

type Manifest = KubernetesObject & Record<string, unknown>;

const RESTRICTED_CONTAINER_SECURITY = {
  allowPrivilegeEscalation: false,
  capabilities: { drop: ['ALL'] },
  runAsNonRoot: true,
  runAsUser: 1000,
  seccompProfile: { type: 'RuntimeDefault' },
};

const RESOURCES = {
  requests: { cpu: '100m', memory: '128Mi' },
  limits: { cpu: '500m', memory: '256Mi' },
};

function podSpec(container: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return { containers: [{ name: 'main', ...container }], ...extra };
}

function controller(
  kind: 'Deployment' | 'StatefulSet' | 'DaemonSet',
  name: string,
  labels: Record<string, string>,
  spec: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Manifest {
  return {
    apiVersion: 'apps/v1',
    kind,
    metadata: { name, labels },
    spec: {
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name, ...labels } }, spec },
      ...extra,
    },
  };
}

/** Jobs, bare Pods and Services of ownWorkloads. */
function jobsPodsAndServices(owned: Record<string, string>): Manifest[] {
  return [
    {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'migrate', labels: owned },
      spec: {
        template: {
          metadata: { labels: owned },
          spec: podSpec(
            { image: 'registry.example.com/migrate:latest', securityContext: RESTRICTED_CONTAINER_SECURITY },
            { restartPolicy: 'Never' },
          ),
        },
      },
    },
    {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'nightly' },
      spec: {
        schedule: '0 2 * * *',
        jobTemplate: {
          spec: {
            template: {
              spec: podSpec(
                { image: 'busybox', securityContext: { capabilities: { add: ['NET_ADMIN'] } } },
                { restartPolicy: 'OnFailure' },
              ),
            },
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'debug', labels: { run: 'debug' } },
      spec: podSpec({ image: 'busybox:latest', securityContext: { privileged: true } }),
    },
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'static-page', labels: owned },
      spec: podSpec({
        image: 'registry.example.com/static:3.1.0',
        resources: RESOURCES,
        securityContext: RESTRICTED_CONTAINER_SECURITY,
      }),
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'public', labels: owned },
      spec: { type: 'NodePort', selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'internal', labels: owned },
      spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
    },
  ];
}

/** The workloads written for this test: each namespace runs all of them. */
function ownWorkloads(): Manifest[] {
  const owned = { owner: 'team-a', 'app.kubernetes.io/name': 'shop' };
  return [
    // Compliant with every policy below.
    controller(
      'Deployment',
      'web',
      owned,
      podSpec({
        image: 'registry.example.com/web:1.4.2',
        resources: RESOURCES,
        securityContext: RESTRICTED_CONTAINER_SECURITY,
      }),
      { replicas: 3 },
    ),
    controller(
      'Deployment',
      'privileged-agent',
      {},
      podSpec({ image: 'docker.io/acme/agent:latest', securityContext: { privileged: true } }),
      { replicas: 1 },
    ),
    controller(
      'StatefulSet',
      'ledger',
      { owner: 'team-b' },
      podSpec({ image: 'registry.example.com/ledger:2.0.1', resources: RESOURCES }),
      { replicas: 1, serviceName: 'ledger' },
    ),
    controller(
      'DaemonSet',
      'node-exporter',
      { owner: 'platform' },
      podSpec(
        {
          image: 'quay.io/prometheus/node-exporter:v1.8.0',
          ports: [{ containerPort: 9100, hostPort: 9100, name: 'metrics' }],
          resources: RESOURCES,
        },
        { hostNetwork: true, hostPID: true },
      ),
    ),
    ...jobsPodsAndServices(owned),
  ];
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function requireRealworld(): string {
  const directory = realworldDirectory();
  if (!directory) throw new Error('the realworld corpus (../shared/realworld) is not on this machine');
  return directory;
}

function readDocuments(file: string): Manifest[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((document) => document.toJSON() as unknown)
    .flatMap((document) =>
      isRecord(document) && document.kind === 'List' && Array.isArray(document.items)
        ? document.items.filter(isRecord)
        : isRecord(document)
          ? [document]
          : [],
    )
    .map((document) => document as Manifest);
}

/** Realworld workloads and the namespace each runs in (two files both name a Deployment `my-nginx`). */
const REALWORLD_WORKLOADS: Array<{ file: string; namespace: string }> = [
  { file: 'workloads/application/deployment.yaml', namespace: 'shop' },
  { file: 'workloads/service/networking/run-my-nginx.yaml', namespace: 'shop' },
  { file: 'workloads/service/networking/nginx-secure-app.yaml', namespace: 'tools' },
];

const inNamespace = (object: Manifest, namespace: string): Manifest => ({
  ...object,
  metadata: { ...object.metadata, namespace },
});

export function workloads(): Manifest[] {
  const realworld = requireRealworld();
  return [
    ...NAMESPACES.flatMap((namespace) => ownWorkloads().map((object) => inNamespace(object, namespace))),
    ...REALWORLD_WORKLOADS.flatMap(({ file, namespace }) =>
      readDocuments(path.join(realworld, file)).map((object) => inNamespace(object, namespace)),
    ),
  ];
}

export function namespaces(withPodSecurity: boolean): Manifest[] {
  return NAMESPACES.map((name) => {
    const level = POD_SECURITY_LEVELS[name];
    return {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name,
        labels: {
          environment: name === 'tools' ? 'staging' : 'prod',
          ...(withPodSecurity && level ? { 'pod-security.kubernetes.io/enforce': level } : {}),
        },
      },
    };
  });
}

// ------------------------------------------------------------------ ValidatingAdmissionPolicies

/** Corpus admission policies and bindings: two on Pods, two on Deployments (k8s-website). */
export function admissionPolicies(): Manifest[] {
  const corpus = path.join(requireRealworld(), 'policies/k8s-website/access');
  const v1 = (object: Manifest): Manifest => ({ ...object, apiVersion: 'admissionregistration.k8s.io/v1' });
  const read = (file: string) => readDocuments(path.join(corpus, file)).map(v1);
  const binding = (policyName: string, actions: string[], matchResources?: unknown): Manifest => ({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: `${policyName}-risks` },
    spec: { policyName, validationActions: actions, ...(matchResources ? { matchResources } : {}) },
  });
  return [
    // Each with its own Deny binding (all namespaces but kube-system).
    ...read('manifest-admission-control/deny-privileged-policy.yaml'),
    ...read('manifest-admission-control/list-format-policy.yaml'),
    // Bound by us: in force in payments only; a warning everywhere.
    ...read('manifest-admission-control/vap-min-replicas.yaml'),
    binding('enforce-multiple-replicas-deployments', ['Deny'], {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'payments' } },
    }),
    ...read('image-matches-namespace-environment.policy.yaml'),
    binding('image-matches-namespace-environment.policy.example.com', ['Warn']),
  ];
}

// ------------------------------------------------------------------ Kyverno

/** Corpus Kyverno policies (validate rules only, as the Kyverno fidelity test reads them). */
const KYVERNO_FILES = [
  'kyverno/pod-security/baseline/disallow-privileged-containers.yaml',
  'kyverno/pod-security/baseline/disallow-host-namespaces.yaml',
  'kyverno/pod-security/baseline/disallow-host-ports.yaml',
  'kyverno/pod-security/baseline/disallow-capabilities.yaml',
  'kyverno/pod-security/restricted/require-run-as-nonroot.yaml',
  'kyverno/pod-security/restricted/disallow-privilege-escalation.yaml',
  'kyverno/best-practices-cel/disallow-latest-tag.yaml',
  'kyverno/best-practices-cel/require-pod-requests-limits.yaml',
  'kyverno/best-practices-cel/restrict-node-port.yaml',
  'kyverno/other/require-deployments-have-multiple-replicas.yaml',
];

/** The namespaced Policy: the corpus's require-labels ClusterPolicy as a Policy of `shop`. */
const NAMESPACED_KYVERNO_FILE = 'kyverno/best-practices-cel/require-labels.yaml';

export function kyvernoPolicies(): Manifest[] {
  const corpus = path.join(requireRealworld(), 'policies');
  const byFile = new Map(corpusPolicies(corpus).map((policy) => [policy.file, policy.object as Manifest]));
  const pick = (file: string): Manifest => {
    const policy = byFile.get(file);
    if (!policy) throw new Error(`the corpus has no Kyverno policy with validate rules in ${file}`);
    return policy;
  };
  const namespaced = pick(NAMESPACED_KYVERNO_FILE);
  return [
    ...KYVERNO_FILES.map(pick),
    { ...namespaced, kind: 'Policy', metadata: { ...namespaced.metadata, namespace: 'shop' } },
  ];
}

// ------------------------------------------------------------------ Gatekeeper

const GATEKEEPER_FIXTURES = path.join(__dirname, '../gatekeeper');

/** The Gatekeeper suite's templates (the realworld corpus has constraints only). */
export function gatekeeperTemplates(): Manifest[] {
  return readDocuments(path.join(GATEKEEPER_FIXTURES, 'templates.yaml')).filter(
    // K8sNamespaceOwner reads Gatekeeper's synced inventory, which gator test does not have.
    (template) => template.metadata?.name !== 'k8snamespaceowner',
  );
}

export function gatekeeperConstraints(): Manifest[] {
  return readDocuments(path.join(GATEKEEPER_FIXTURES, 'constraints.yaml')).filter(
    (constraint) => constraint.kind !== 'K8sNamespaceOwner',
  );
}

/** The CRD plural of a constraint kind (Gatekeeper's is the lower-cased kind). */
export const constraintPlural = (kind: string): string => kind.toLowerCase();

/** The CRDs of the policy kinds the API server must serve for them (Gatekeeper's, Kyverno's). */
export function crds(): string {
  const gatekeeperKinds = gatekeeperConstraints().map((constraint) => String(constraint.kind));
  return [
    {
      group: 'templates.gatekeeper.sh',
      version: 'v1',
      kind: 'ConstraintTemplate',
      plural: 'constrainttemplates',
    },
    ...[...new Set(gatekeeperKinds)].map((kind) => ({
      group: 'constraints.gatekeeper.sh',
      version: 'v1beta1',
      kind,
      plural: constraintPlural(kind),
    })),
    { group: 'kyverno.io', version: 'v1', kind: 'ClusterPolicy', plural: 'clusterpolicies' },
  ]
    .map((crd) => crdManifest({ ...crd, scope: 'Cluster' }))
    .concat(
      crdManifest({
        group: 'kyverno.io',
        version: 'v1',
        kind: 'Policy',
        plural: 'policies',
        scope: 'Namespaced',
      }),
    )
    .join('\n---\n');
}
