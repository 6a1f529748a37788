import { checkManifest } from './manifest-check';
import { indexLookup, type FindMissingCompanions } from './index-lookup';
import { buildConstraintList } from '../views/constraint-list';
import type { ConstraintDraft } from '../../model/constraint';
import type { KubernetesObject } from '../../model/kubernetes';
import { objectName, text } from '../../model/text';
import { buildWarnings } from '../../model/warnings';
import { buildAdmissionCheck } from '../verdicts/admission-check';
import { parseManifest } from '../sources/manifest-parsing';
import { demoClusterObjects, indexObjects } from '../../../test/support/controller-fixtures';

// The check core shared by the MCP tool and the command line: the webhook's query per object, the
// webhook's warnings, objects the webhook never sees skipped with a reason, companions via the hook.

const demo = indexObjects(demoClusterObjects());
const lookup = indexLookup(demo.index);

const deployment = (namespaceLine: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
${namespaceLine}spec:
  selector: { matchLabels: { app: frontend } }
  template:
    metadata: { labels: { app: frontend } }
    spec: { containers: [{ name: web, image: "registry.example.com/web:1" }] }
`;

// A quota on storage and a ValidatingAdmissionPolicy on Ingresses: the API server enforces both,
// though Forewarn's webhook is registered for workloads, Services and ConfigMaps only.
const STORAGE_QUOTA_AND_INGRESS_POLICY: KubernetesObject[] = [
  {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: 'storage', namespace: 'shop' },
    spec: { hard: { 'requests.storage': '1Gi' } },
  },
  {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: 'ingress-needs-tls' },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          {
            apiGroups: ['networking.k8s.io'],
            apiVersions: ['v1'],
            operations: ['CREATE', 'UPDATE'],
            resources: ['ingresses'],
          },
        ],
      },
      validations: [{ expression: 'has(object.spec.tls)', message: 'an Ingress needs tls' }],
    },
  },
  {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: 'ingress-needs-tls' },
    spec: { policyName: 'ingress-needs-tls', validationActions: ['Deny'] },
  },
];

describe('checkManifest', () => {
  it('gives each object the warnings of the admission check the webhook makes for it', async () => {
    const report = await checkManifest('web.yaml', deployment('  namespace: shop\n'), lookup);
    const object = parseManifest('web.yaml', deployment('  namespace: shop\n')).objects[0];
    const checked = buildAdmissionCheck(demo.index, { object, operation: 'CREATE' }).constraints;
    const expected = buildWarnings(checked.filter((constraint) => constraint.severity !== 'Info'));
    // Same constraints as the label query, only with verdicts: the quota that the pod fits passes.
    expect(checked.map((constraint) => constraint.name).sort()).toEqual(
      buildConstraintList(demo.index, {
        namespace: 'shop',
        resource: { group: 'apps', resource: 'deployments' },
        labels: { app: 'frontend' },
      })
        .constraints.map((constraint) => constraint.name)
        .sort(),
    );
    expect(report.objects[0].passed.map((finding) => finding.name)).toContain('compute');
    expect(report.objects).toHaveLength(1);
    expect(report.objects[0]).toMatchObject({
      kind: 'Deployment',
      namespace: 'shop',
      resource: 'apps/deployments',
    });
    expect(report.objects[0].warnings).toEqual(expected);
    // The CiliumNetworkPolicy selecting app=frontend applies (standing, once for the namespace);
    // the one for app=api does not.
    const standing = report.standing.flatMap((each) => each.constraints.map((finding) => finding.name));
    expect(standing).toContain('frontend-egress-fqdn');
    expect(standing).not.toContain('api-allow-frontend/egress');
    expect(report.objects[0].findings.map((finding) => finding.name)).not.toContain('frontend-egress-fqdn');
    expect(report.objects[0].findings.every((finding) => finding.severity !== 'Info')).toBe(true);
    expect(report.criticalCount + report.warningCount).toBe(expected.length);
    // Without `resources`, the container fails Kyverno's require-requests and the
    // ValidatingAdmissionPolicy (which fails closed), and without an `owner` label the Gatekeeper
    // constraint (its CEL template): three rejections, warned before the rest.
    expect(report.rejectionCount).toBe(3);
    expect(report.objects[0].warnings).toContainEqual(
      expect.stringMatching(
        /^\[CRITICAL\] will be rejected: you must provide labels: owner \(Gatekeeper K8sRequiredLabels "workloads-must-have-owner"\)/,
      ),
    );
    expect(report.objects[0].warnings.slice(0, 2)).toEqual([
      expect.stringMatching(
        /^\[CRITICAL\] will be rejected: container "web": .*\(Kyverno ClusterPolicy "require-requests" rule "validate-requests"\)/,
      ),
      expect.stringMatching(
        /^\[CRITICAL\] will be rejected: container "web": .*\(ValidatingAdmissionPolicy "require-resource-limits"\)/,
      ),
    ]);
  });

  it('keeps a dryrun constraint it could not evaluate among the findings, without a warning', async () => {
    const cluster = indexObjects([
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } },
      {
        apiVersion: 'constraints.gatekeeper.sh/v1beta1',
        kind: 'K8sRequiredProbes',
        metadata: { name: 'probes-dry-run' },
        spec: {
          enforcementAction: 'dryrun',
          match: { kinds: [{ apiGroups: ['apps'], kinds: ['Deployment'] }] },
        },
      },
    ]);
    const report = await checkManifest(
      'web.yaml',
      deployment('  namespace: shop\n'),
      indexLookup(cluster.index),
    );
    const [object] = report.objects;
    expect(object.findings).toEqual([
      expect.objectContaining({
        name: 'probes-dry-run',
        severity: 'Info',
        effect: 'audit',
        verdict: 'unknown',
        reason: expect.stringMatching(/ConstraintTemplate/) as string,
      }),
    ]);
    expect(object.warnings).toEqual([]);
    expect(report.criticalCount + report.warningCount + report.rejectionCount).toBe(0);
  });

  it('orders warnings Critical first, and within a severity what the object violates first (DESIGN 7)', async () => {
    const report = await checkManifest('web.yaml', deployment('  namespace: shop\n'), lookup);
    const warnings = report.objects[0].warnings;
    const severities = warnings.map((warning) => (warning.startsWith('[CRITICAL]') ? 0 : 1));
    expect(severities).toEqual([...severities].sort());
    // The Kyverno audit rule the container fails is a Warning: after every Critical, first of its own.
    const firstWarning = warnings.findIndex((warning) => warning.startsWith('[WARNING]'));
    expect(firstWarning).toBeGreaterThan(2);
    expect(warnings[firstWarning]).toMatch(/^\[WARNING\] will be recorded in the audit log: container "web"/);
    // The admission check answers in the same order, what the object passes last.
    const object = parseManifest('web.yaml', deployment('  namespace: shop\n')).objects[0];
    const checked = buildAdmissionCheck(demo.index, { object, operation: 'CREATE' }).constraints;
    const ranks = checked.map(
      (constraint) =>
        (constraint.verdict === 'passes' ? 10 : 0) +
        ['Critical', 'Warning', 'Info'].indexOf(constraint.severity) * 2 +
        (constraint.verdict === 'violates' ? 0 : 1),
    );
    expect(ranks).toEqual([...ranks].sort((left, right) => left - right));
  });

  it('gives what has nothing to evaluate `applies` with the reason, an opaque webhook included (DESIGN 7b)', async () => {
    const report = await checkManifest('web.yaml', deployment('  namespace: shop\n'), lookup);
    const findings = [...report.objects[0].findings, ...report.standing[0].constraints];
    expect(findings.find((finding) => finding.sourceKind === 'ValidatingWebhookConfiguration')).toMatchObject(
      {
        verdict: 'applies',
        reason: expect.stringMatching(/^nothing to evaluate: the admission webhook decides at request time/),
      },
    );
    // Network and mesh policies too: every verdict but `violates` says why, none is left bare.
    expect(
      findings.filter((finding) => finding.verdict === 'applies').map((finding) => finding.sourceKind),
    ).toEqual(expect.arrayContaining(['NetworkPolicy', 'AuthorizationPolicy', 'CiliumNetworkPolicy']));
    for (const finding of findings.filter((each) => each.verdict !== 'violates'))
      expect({ name: finding.name, reason: finding.reason }).toEqual({
        name: finding.name,
        reason: expect.stringMatching(/\w/),
      });
  });

  it('puts objects without a namespace where kubectl apply -n would, and refuses a conflicting one', async () => {
    const defaulted = await checkManifest('web.yaml', deployment(''), lookup, { namespace: 'payments' });
    expect(defaulted.objects[0].namespace).toBe('payments');
    const conflicting = await checkManifest('web.yaml', deployment('  namespace: shop\n'), lookup, {
      namespace: 'payments',
    });
    expect(conflicting.objects[0].skipped).toMatch(/sets namespace shop, not payments/);
    expect(conflicting.objects[0].warnings).toEqual([]);
    const unset = await checkManifest('web.yaml', deployment(''), lookup);
    expect(unset.objects[0].namespace).toBe('default');
  });

  it('checks every kind against the constraints that apply to it, whatever the webhook is registered for', async () => {
    const cluster = indexObjects([...demoClusterObjects(), ...STORAGE_QUOTA_AND_INGRESS_POLICY]);
    const report = await checkManifest(
      'mixed.yaml',
      `apiVersion: v1
kind: Namespace
metadata: { name: team }
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: web, namespace: shop }
spec: { rules: [{ host: shop.example.com }] }
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: { name: data, namespace: shop }
spec: { accessModes: [ReadWriteOnce], resources: { requests: { storage: 5Gi } } }
---
apiVersion: v1
kind: Secret
metadata: { name: token, namespace: shop }
---
apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: Service
    metadata: { name: web, namespace: shop }
`,
      indexLookup(cluster.index),
    );
    expect(report.objects.map((object) => [object.kind, object.skipped ?? 'checked'])).toEqual([
      ['Namespace', 'checked'],
      ['Ingress', 'checked'],
      ['PersistentVolumeClaim', 'checked'],
      ['Secret', 'checked'],
      ['Service', 'checked'],
    ]);
    const byKind = (kind: string) => report.objects.find((object) => object.kind === kind);
    expect(byKind('Ingress')?.findings).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'ingress-needs-tls', verdict: 'violates' })]),
    );
    expect(byKind('PersistentVolumeClaim')?.findings).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'storage', verdict: 'violates' })]),
    );
    // A Secret no constraint targets is checked and quiet: no finding invented for it.
    expect(byKind('Secret')?.findings).toEqual([]);
    expect(report.rejectionCount).toBeGreaterThanOrEqual(2);
  });

  it('reports documents that do not parse with file and line, and checks the rest', async () => {
    const report = await checkManifest(
      'broken.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: ok, namespace: shop }\n---\nkind: ConfigMap\nmetadata: { name: no-api-version }\n',
      lookup,
    );
    expect(report.problems).toEqual([
      { file: 'broken.yaml', line: 5, message: 'object has no apiVersion or kind' },
    ]);
    expect(report.objects.map((object) => object.name)).toEqual(['ok']);
  });

  it('adds missing companions from the hook, once, as warnings', async () => {
    const missingIssuer: ConstraintDraft = {
      id: 'issuer',
      name: 'missing-clusterissuer-web',
      type: 'MissingResource',
      severity: 'Critical',
      effect: 'missing',
      adapter: 'missingresource',
      source: { kind: 'Deployment', apiVersion: 'apps/v1', name: 'web', namespace: 'shop' },
      scope: { kind: 'namespace', namespace: 'shop' },
      tags: ['missing-resource'],
      displayName: text`missing-clusterissuer-web`,
      summary: text`Deployment ${objectName('web', 'shop')} references ClusterIssuer "letsencrypt", which does not exist`,
      remediationHint: text`create the ClusterIssuer or fix the annotation`,
      remediation: { summary: text`create the ClusterIssuer`, steps: [] },
    };
    const seen: string[] = [];
    const findMissingCompanions: FindMissingCompanions = (object, namespace) => {
      seen.push(`${object.kind}/${namespace}`);
      return [missingIssuer, missingIssuer];
    };
    const report = await checkManifest(
      'web.yaml',
      deployment('  namespace: shop\n'),
      indexLookup(demo.index, findMissingCompanions),
    );
    expect(seen).toEqual(['Deployment/shop']);
    const companions = report.objects[0].warnings.filter((warning) => warning.includes('ClusterIssuer'));
    expect(companions).toEqual([
      '[CRITICAL] Deployment web references ClusterIssuer "letsencrypt", which does not exist - create the ClusterIssuer or fix the annotation',
    ]);
  });
});

describe('checkManifest on cluster-scoped objects', () => {
  // Platform teams apply Namespaces: the rules that target them give verdicts, as for workloads.
  const policies = parseManifest(
    'namespace-policies.yaml',
    `apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: { name: namespaces-need-owner }
spec:
  validationFailureAction: Enforce
  rules:
    - name: require-owner
      match: { any: [{ resources: { kinds: [Namespace] } }] }
      validate:
        message: Namespaces need an owner label.
        pattern: { metadata: { labels: { owner: "?*" } } }
`,
  ).objects;
  const cluster = indexObjects([...demoClusterObjects(), ...policies]);
  const namespaceLookup = indexLookup(cluster.index);
  const namespace = (labels: string) =>
    `apiVersion: v1\nkind: Namespace\nmetadata: { name: team, labels: { ${labels} } }\n`;

  it('evaluates a Namespace against the cluster-wide rules that target Namespaces, with verdicts', async () => {
    const report = await checkManifest('namespace.yaml', namespace('env: dev'), namespaceLookup);
    const [object] = report.objects;
    expect(object.skipped).toBeUndefined();
    expect(object).toMatchObject({ kind: 'Namespace', namespace: null, resource: 'namespaces' });
    expect(object.findings).toEqual([
      expect.objectContaining({
        name: 'namespaces-need-owner/require-owner',
        verdict: 'violates',
        severity: 'Critical',
        evidence: [expect.objectContaining({ path: 'metadata.labels.owner' })],
      }),
    ]);
    expect(report.rejectionCount).toBe(1);
    expect(object.warnings).toEqual([expect.stringMatching(/^\[CRITICAL\] will be rejected: .*owner/)]);
    // Workload rules (quotas, network policies of a namespace) do not apply to the Namespace itself.
    expect(object.findings.every((finding) => finding.constraintType === 'Admission')).toBe(true);

    const owned = await checkManifest('namespace.yaml', namespace('owner: shop-team'), namespaceLookup);
    expect(owned.objects[0].findings).toEqual([]);
    expect(owned.objects[0].passed.map((finding) => finding.name)).toEqual([
      'namespaces-need-owner/require-owner',
    ]);
  });

  it('checks other cluster-scoped kinds against the rules that target them: none here', async () => {
    const report = await checkManifest(
      'role.yaml',
      'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: { name: viewer }\nrules: []\n',
      namespaceLookup,
    );
    expect(report.objects[0]).toMatchObject({ kind: 'ClusterRole', findings: [], passed: [], warnings: [] });
    expect(report.objects[0].skipped).toBeUndefined();
  });
});
