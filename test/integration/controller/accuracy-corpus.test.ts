import path from 'node:path';
import { realworldDirectory } from '../../support/realworld-corpus';
import { DETAIL_LEVELS, type DetailLevel } from '../../../services/model/api';
import type { LookedUpConstraint } from '../../../services/controller/check/manifest-check';
import type { KubernetesObject, Labels } from '../../../services/model/kubernetes';
import { assertReadableLine } from '../../../services/model/summary-rules';
import { groupOf } from '../../../services/model/kubernetes';
import { pluralOfKind } from '../../../services/model/resources';
import { loadOfflineCluster, type OfflineCluster } from '../../../services/cli/offline-index';
import { indexLookup } from '../../../services/controller/check/index-lookup';
import { buildNamespaceReport } from '../../../services/controller/views/report';
import { buildConstraintView, findConstraint } from '../../../services/controller/views/constraint-view';
import { buildConstraintList } from '../../../services/controller/views/constraint-list';
import { workloadLabels } from '../../../services/model/workload-kinds';

// The accuracy corpus (test/fixtures/real-world: about 150 policies written after the public policy
// libraries' shapes) run through the controller's own source, adapters, index and views: every text
// at every detail level is one readable line, and each class of wrong answer from issue 15 stays fixed.

const CORPUS = path.join(__dirname, '../../fixtures/real-world');
/** Third-party policies shared by the team (not in the repository); checked when present. */
const REALWORLD = realworldDirectory();
const SHARED_CORPUS = REALWORLD === undefined ? '' : path.join(REALWORLD, 'policies');

function assertEveryTextReadable(cluster: OfflineCluster): number {
  let checked = 0;
  const namespaces = cluster.index.knownNamespaces();
  for (const level of DETAIL_LEVELS)
    for (const namespace of namespaces) {
      const report = buildNamespaceReport(cluster.index, namespace, level, new Date(0));
      for (const entry of report.constraints) {
        const where = `${level}/${namespace}/${entry.name}`;
        assertReadableLine(entry.summary, `${where} summary`);
        const remediation = entry.remediation ?? { summary: '', steps: [] };
        if (remediation.summary) assertReadableLine(remediation.summary, `${where} remediation`);
        for (const step of remediation.steps) assertReadableLine(step.description, `${where} step`);
        checked++;
      }
      for (const constraint of cluster.index.constraintsForNamespace(namespace)) {
        const found = findConstraint(cluster.index, namespace, constraint.name, level);
        if (!found) continue;
        const view = buildConstraintView(cluster.index, namespace, found, level);
        assertReadableLine(view.summary, `${level}/${namespace}/${constraint.name} view`);
      }
    }
  for (const namespace of namespaces)
    for (const listed of buildConstraintList(cluster.index, { namespace }).constraints) {
      assertReadableLine(listed.summary, `list/${namespace}/${listed.name} summary`);
      assertReadableLine(listed.remediationHint, `list/${namespace}/${listed.name} hint`);
    }
  return checked;
}

/** What `forewarn check` and the webhook would list for the object: the same query, same index. */
async function constraintsFor(
  cluster: OfflineCluster,
  object: KubernetesObject,
): Promise<LookedUpConstraint[]> {
  const group = groupOf(object.apiVersion);
  const kind = object.kind ?? '';
  return [
    ...(await indexLookup(cluster.index)({
      namespace: object.metadata?.namespace ?? 'default',
      resource: { group, resource: pluralOfKind(kind) },
      labels: workloadLabels({ group, kind }, object),
      object,
    })),
  ];
}

function pod(namespace: string, labels: Labels = {}, spec: Record<string, unknown> = {}): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'probe', namespace, labels },
    spec: { containers: [{ name: 'app', image: 'nginx' }], ...spec },
  };
}

function controller(kind: string, namespace: string, labels: Labels = { app: 'web' }): KubernetesObject {
  const template = { metadata: { labels }, spec: { containers: [{ name: 'app', image: 'nginx' }] } };
  return {
    apiVersion: kind === 'CronJob' || kind === 'Job' ? 'batch/v1' : 'apps/v1',
    kind,
    metadata: { name: 'probe', namespace },
    spec: kind === 'CronJob' ? { jobTemplate: { spec: { template } } } : { template },
  };
}

function names(constraints: readonly LookedUpConstraint[]): string[] {
  return constraints.map((constraint) => constraint.name);
}

function severityOf(cluster: OfflineCluster, namespace: string, name: string): string | undefined {
  return buildNamespaceReport(cluster.index, namespace, 'full', new Date(0)).constraints.find(
    (entry) => entry.name === name,
  )?.severity;
}

function summaryOf(
  cluster: OfflineCluster,
  namespace: string,
  name: string,
  level: DetailLevel = 'full',
): string {
  const entry = buildNamespaceReport(cluster.index, namespace, level, new Date(0)).constraints.find(
    (candidate) => candidate.name === name,
  );
  if (!entry) throw new Error(`${name} is not in the report of ${namespace}`);
  return entry.summary;
}

function inAnyReport(cluster: OfflineCluster, name: string): boolean {
  return cluster.index
    .knownNamespaces()
    .some((namespace) => cluster.index.constraintsForNamespace(namespace).some((c) => c.name === name));
}

describe('the accuracy corpus (test/fixtures/real-world)', () => {
  let cluster: OfflineCluster;
  beforeAll(async () => {
    cluster = await loadOfflineCluster(CORPUS);
  });

  it('reads every policy document of the corpus without a problem', () => {
    expect(cluster.problems).toEqual([]);
    expect(cluster.index.totalConstraints()).toBeGreaterThanOrEqual(140);
  });

  it('renders every summary, hint and step as one readable line at every detail level', () => {
    expect(assertEveryTextReadable(cluster)).toBeGreaterThan(1000);
  });

  it('matches selectors by label: an unlabelled pod gets no policy that selects other labels', async () => {
    const unlabelled = names(await constraintsFor(cluster, pod('shop')));
    expect(unlabelled).not.toContain('victim-lockdown');
    expect(unlabelled).not.toContain('web-deny-all');
    expect(unlabelled).not.toContain('require-labels-on-selected-pods/check-owner-on-frontend');
    expect(unlabelled).toContain('default-deny-ingress');
    const victim = names(await constraintsFor(cluster, pod('shop', { role: 'victim' })));
    expect(victim).toContain('victim-lockdown');
    const frontend = names(await constraintsFor(cluster, pod('shop', { tier: 'frontend' })));
    expect(frontend).toContain('require-labels-on-selected-pods/check-owner-on-frontend');
  });

  it('applies Kyverno Pod rules to pod controllers unless the autogen annotation says otherwise', async () => {
    for (const kind of ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job', 'CronJob']) {
      const listed = names(await constraintsFor(cluster, controller(kind, 'shop')));
      expect(listed).toContain('require-requests-limits/validate-resources');
      expect(listed).not.toContain('disallow-privileged-no-autogen/privileged-containers');
      const limited = listed.includes('require-run-as-nonroot-deployments-only/run-as-non-root');
      expect([kind, limited]).toEqual([kind, kind === 'Deployment' || kind === 'StatefulSet']);
    }
    expect(names(await constraintsFor(cluster, pod('shop')))).toContain(
      'disallow-privileged-no-autogen/privileged-containers',
    );
    // Rules on other kinds, or filtering by labels, are not auto-generated.
    expect(names(await constraintsFor(cluster, controller('Deployment', 'shop')))).not.toContain(
      'restrict-node-port/validate-nodeport',
    );
    expect(summaryOf(cluster, 'shop', 'require-requests-limits/validate-resources')).toContain(
      'reports (audit only) Pods and their controllers',
    );
  });

  it('sets Kyverno severity per namespace from failure-action overrides', () => {
    expect(severityOf(cluster, 'shop', 'prod-enforced-probes/validate-probes')).toBe('Critical');
    expect(severityOf(cluster, 'payments', 'prod-enforced-probes/validate-probes')).toBe('Critical');
    expect(severityOf(cluster, 'dev', 'prod-enforced-probes/validate-probes')).toBe('Warning');
    expect(summaryOf(cluster, 'dev', 'prod-enforced-probes/validate-probes')).toContain(
      'reports (audit only)',
    );
    expect(severityOf(cluster, 'shop', 'rule-level-actions/enforce-team-label')).toBe('Critical');
    expect(severityOf(cluster, 'sandbox', 'rule-level-actions/enforce-team-label')).toBe('Warning');
    expect(severityOf(cluster, 'dev', 'rule-level-actions/audit-cost-center')).toBe('Warning');
  });

  it('reports a direction that allows everything as Info, an ALLOW without rules as deny-all', () => {
    expect(severityOf(cluster, 'shop', 'allow-all-egress')).toBe('Info');
    expect(summaryOf(cluster, 'shop', 'allow-all-egress')).toContain('allows all egress traffic');
    expect(severityOf(cluster, 'dev', 'allow-all-ingress')).toBe('Info');
    expect(severityOf(cluster, 'dev', 'allow-egress-deny-ingress/egress')).toBe('Info');
    expect(severityOf(cluster, 'dev', 'allow-egress-deny-ingress/ingress')).toBe('Warning');
    expect(severityOf(cluster, 'shop', 'web-allow-all')).toBe('Info');
    expect(severityOf(cluster, 'shop', 'egress-allow-all')).toBe('Info');
    expect(severityOf(cluster, 'dev', 'ingress-allow-all')).toBe('Info');
    expect(severityOf(cluster, 'dev', 'allow-all')).toBe('Info');
    expect(severityOf(cluster, 'payments', 'allow-nothing')).toBe('Critical');
    // A deny rule next to an allow-all still denies.
    expect(severityOf(cluster, 'payments', 'deny-metadata-endpoint')).toBe('Critical');
  });

  it('applies scoped quotas only to objects in their scope and says whose usage they count', async () => {
    expect(summaryOf(cluster, 'shop', 'pods-high')).toContain('counts only pods with PriorityClass high');
    expect(names(await constraintsFor(cluster, pod('shop')))).not.toContain('pods-high');
    expect(names(await constraintsFor(cluster, pod('shop', {}, { priorityClassName: 'high' })))).toContain(
      'pods-high',
    );
    const bestEffort = names(await constraintsFor(cluster, pod('dev')));
    expect(bestEffort).toContain('best-effort');
    expect(bestEffort).not.toContain('not-best-effort');
    const withRequests = pod(
      'dev',
      {},
      {
        containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '100m' } } }],
      },
    );
    const burstable = names(await constraintsFor(cluster, withRequests));
    expect(burstable).not.toContain('best-effort');
    expect(burstable).toContain('not-best-effort');
    expect(names(await constraintsFor(cluster, pod('payments')))).not.toContain('gold-volumes');
    expect(names(await constraintsFor(cluster, pod('payments')))).toContain('no-priority-class');
  });

  it('puts admission rules on cluster-scoped resources only in no namespace, mixed ones where they apply', async () => {
    for (const name of [
      'csr-approver/csr.platform.acme.example',
      'cluster-scope-guard/cluster.guard.acme.example',
      'crd-guard/crd-guard.acme.example',
      'rbac-guard/rbac-guard.acme.example',
      'service-cidr-guard-binding',
      'csr-validity-binding',
      'cluster-objects-labelled-binding',
      'restrict-csr-signers/allowed-signers',
      'restrict-clusterrole-binding/no-cluster-admin',
      'csr-signers',
      'block-endpoint-edit',
    ])
      expect([name, inAnyReport(cluster, name)]).toEqual([name, false]);
    expect(severityOf(cluster, 'shop', 'mixed-targets/mixed.acme.example')).toBe('Warning');
    const ingress = await indexLookup(cluster.index)({
      namespace: 'shop',
      resource: { group: 'networking.k8s.io', resource: 'ingresses' },
      labels: {},
      object: {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'Ingress',
        metadata: { name: 'x', namespace: 'shop' },
      },
    });
    expect(names(ingress)).toContain('mixed-targets/mixed.acme.example');
    expect(names(await constraintsFor(cluster, pod('shop')))).not.toContain(
      'mixed-targets/mixed.acme.example',
    );
  });

  it('applies Kyverno image verification only to pods running the referenced images', async () => {
    const rule = 'verify-image-signatures/check-image';
    expect(names(await constraintsFor(cluster, pod('shop')))).not.toContain(rule);
    const acme = pod('shop', {}, { containers: [{ name: 'api', image: 'ghcr.io/acme/api:1.4' }] });
    expect(names(await constraintsFor(cluster, acme))).toContain(rule);
    const sidecar = pod(
      'shop',
      {},
      {
        containers: [{ name: 'app', image: 'nginx' }],
        initContainers: [{ name: 'init', image: 'docker.io/acme/init@sha256:abc' }],
      },
    );
    expect(names(await constraintsFor(cluster, sidecar))).toContain(rule);
  });

  it('puts Cilium policies on reserved identities and nodes in no namespace', () => {
    for (const name of ['cluster-health-checks', 'host-firewall', 'reserved-host-egress'])
      expect([name, inAnyReport(cluster, name)]).toEqual([name, false]);
  });

  it('reads Cilium port "0" as every port and keeps TLS server names', () => {
    const allPorts = summaryOf(cluster, 'shop', 'all-ports-to-db');
    expect(allPorts).toContain('any TCP port');
    expect(allPorts).not.toContain('TCP/0');
    expect(summaryOf(cluster, 'shop', 'sni-only-api')).toContain('TLS SNI api.stripe.com, hooks.stripe.com');
  });

  it('summarises parameters and lists, and puts kinds in the plural', () => {
    const capabilities = summaryOf(cluster, 'shop', 'psp-capabilities');
    expect(capabilities).toContain(
      '(parameters: allowedCapabilities 13 values; requiredDropCapabilities ALL)',
    );
    expect(summaryOf(cluster, 'shop', 'block-node-port')).toContain('rejects Services that violate it');
    expect(summaryOf(cluster, 'shop', 'many-rules')).toContain('and 2 more rules');
    const principals = summaryOf(cluster, 'shop', 'many-principals', 'summary');
    expect(principals).not.toMatch(/a principal or a principal/);
    // Block-scalar messages read as one line.
    expect(summaryOf(cluster, 'shop', 'require-requests-limits/validate-resources')).toContain(
      'memory limits are required for every container of the Pod.',
    );
  });
});

describe('the demo cluster (examples/manifests, every adapter)', () => {
  it('renders every text as one readable line at every detail level', async () => {
    const cluster = await loadOfflineCluster(path.join(__dirname, '../../../examples/manifests'));
    expect(cluster.problems).toEqual([]);
    expect(assertEveryTextReadable(cluster)).toBeGreaterThan(100);
  });
});

const sharedCorpus = REALWORLD !== undefined ? describe : describe.skip;
sharedCorpus('the shared third-party corpus (../shared/realworld, when present)', () => {
  it('renders every text as one readable line at every detail level', async () => {
    const cluster = await loadOfflineCluster(SHARED_CORPUS);
    expect(assertEveryTextReadable(cluster)).toBeGreaterThan(5000);
  }, 60_000);
});
