import path from 'node:path';
import { AdapterParseError } from '../../../model/constraint';
import { renderFullText, renderText } from '../../../model/text';
import { renderConstraintTexts } from '../../../../test/support/render-constraint';
import { scopeAdmits } from '../../index/constraint-index';
import type { KubernetesObject } from '../../../model/kubernetes';
import { kyvernoPolicyToConstraints } from './kyverno';
import { parseKyvernoKind } from './kyverno-match';
import { policyEngineAdapter } from './policyengine';
import { AdapterRegistry } from '../registry';
import { expectNoLeaks, fixtureConstraints } from '../../../../test/support/adapter-fixtures';

const constraintsOf = fixtureConstraints(
  policyEngineAdapter.toConstraints,
  path.join(__dirname, 'fixtures/kyverno.yaml'),
);
const byName = (name: string) => {
  const [policy] = name.split('/');
  const found = constraintsOf(policy).find((constraint) => constraint.name === name);
  if (!found) throw new Error(`no constraint ${name}`);
  return found;
};

describe('policyengine adapter: Kyverno policies', () => {
  it('yields one constraint per rule of a ClusterPolicy, named <policy>/<rule>', () => {
    const constraints = constraintsOf('baseline');
    expect(
      constraints.map((constraint) => [
        constraint.name,
        constraint.id,
        constraint.severity,
        constraint.effect,
      ]),
    ).toEqual([
      ['baseline/require-team-label', 'rule:require-team-label', 'Critical', 'deny'],
      ['baseline/no-host-ports', 'rule:no-host-ports', 'Critical', 'deny'],
      ['baseline/add-default-seccomp', 'rule:add-default-seccomp', 'Info', 'mutate'],
    ]);
    expect(
      constraints.every(
        (constraint) => constraint.type === 'Admission' && constraint.adapter === 'policyengine',
      ),
    ).toBe(true);
    expect(renderFullText(constraints[0].displayName)).toBe('baseline/require-team-label');
  });

  it('reads Enforce from a legacy match: kinds, namespace selector, whole-namespace excludes, message', () => {
    const constraint = byName('baseline/require-team-label');
    expect(constraint).toMatchObject({
      scope: {
        kind: 'cluster',
        excludedNamespaces: ['kube-system', 'monitoring'],
        namespaceSelector: { matchLabels: { env: 'prod' } },
      },
      resourceTargets: [
        { group: '', resource: 'pods' },
        { group: 'apps', resource: 'deployments' },
      ],
      source: { kind: 'ClusterPolicy', namespace: null },
    });
    expect(constraint.workloadSelector).toBeUndefined();
    expect(constraint.tags).toEqual(['admission', 'policy-engine', 'kyverno', 'validate', 'enforce']);
    expect(renderFullText(constraint.summary)).toBe(
      'Kyverno ClusterPolicy "baseline" rule "require-team-label" rejects Deployments and Pods that fail validation in namespaces labelled env=prod except kube-system, monitoring: label team is required, see https://wiki.internal.example.com/labels',
    );
  });

  it('ORs match.any, ANDs match.all and ignores excludes that only cover some users', () => {
    const constraint = byName('baseline/no-host-ports');
    expect(constraint).toMatchObject({
      scope: { kind: 'cluster', namespaces: ['payments', 'shop'], excludedNamespaces: ['payments-sandbox'] },
      resourceTargets: [
        { group: '', resource: 'pods' },
        { group: 'apps', resource: 'statefulsets' },
      ],
    });
    // A StatefulSet is selected by its own labels, not its pods': the verdict reads them.
    expect(constraint.workloadSelector).toBeUndefined();
  });

  it('turns mutate rules into Info mutate, `*` kinds into any resource', () => {
    const constraint = byName('baseline/add-default-seccomp');
    expect(constraint.resourceTargets).toEqual([{ group: '*', resource: '*' }]);
    expect(constraint.tags).toEqual(['admission', 'policy-engine', 'kyverno', 'mutate']);
    expect(renderFullText(constraint.summary)).toBe(
      'Kyverno ClusterPolicy "baseline" rule "add-default-seccomp" mutates resources on admission in every namespace',
    );
  });

  it('reads Audit (lower-case too) as Warning audit, and a rule failureAction over the policy action', () => {
    expect(byName('supply-chain/check-probes')).toMatchObject({ severity: 'Warning', effect: 'audit' });
    const podSecurity = byName('supply-chain/block-privileged');
    expect(podSecurity).toMatchObject({ severity: 'Critical', effect: 'deny' });
    // The policy also has a generate rule: Kyverno auto-generates none of its rules for controllers.
    expect(renderFullText(podSecurity.summary)).toContain(
      'rejects Pods that break Pod Security level baseline',
    );
  });

  it('treats verifyImages like validate and generate as Info mutate', () => {
    const verify = byName('supply-chain/verify-signatures');
    expect(verify).toMatchObject({ severity: 'Warning', effect: 'audit' });
    expect(verify.tags).toEqual(['admission', 'policy-engine', 'kyverno', 'verifyImages', 'audit']);
    expect(renderFullText(verify.summary)).toContain(
      'whose images ghcr.io/example/* are not signed as required',
    );
    const generate = byName('supply-chain/default-network-policy');
    expect(generate).toMatchObject({
      severity: 'Info',
      effect: 'mutate',
      resourceTargets: [{ group: '', resource: 'namespaces' }],
    });
    expect(renderFullText(generate.summary)).toBe(
      'Kyverno ClusterPolicy "supply-chain" rule "default-network-policy" creates NetworkPolicy for new Namespaces in every namespace',
    );
  });

  it('scopes a namespaced Policy to its namespace, Audit by default, per-entry verifyImages actions; overrides only in ClusterPolicies', () => {
    const constraints = constraintsOf('team-rules');
    expect(
      constraints.map((constraint) => [constraint.name, constraint.severity, constraint.effect]),
    ).toEqual([
      ['team-rules/require-requests', 'Warning', 'audit'],
      ['team-rules/signed-images', 'Critical', 'deny'],
      ['team-rules/add-owner-annotation', 'Info', 'mutate'],
    ]);
    for (const constraint of constraints)
      expect(constraint.scope).toEqual({ kind: 'namespace', namespace: 'shop' });
    expect(constraints[2].resourceTargets).toEqual([
      { group: '', resource: 'pods/exec' },
      { group: '', resource: 'configmaps' },
    ]);
    const overridden = byName('prod-overrides/no-latest-tag');
    expect(overridden).toMatchObject({ severity: 'Warning', effect: 'audit' });
    expect(overridden.namespaceOutcomes).toMatchObject([
      { scope: { kind: 'cluster', namespaces: ['payments'] }, severity: 'Critical', effect: 'deny' },
    ]);
    expect(renderFullText(overridden.namespaceOutcomes?.[0].summary ?? [])).toContain('rejects Pods');
  });

  it('reads admission: false as audit only (background scans never reject)', () => {
    expect(byName('background-only/check-labels')).toMatchObject({ severity: 'Warning', effect: 'audit' });
  });

  it('evaluates excluded namespaces against the index scope', () => {
    const { scope } = byName('baseline/no-host-ports');
    expect(scopeAdmits(scope, 'shop', {})).toBe(true);
    expect(scopeAdmits(scope, 'payments-sandbox', {})).toBe(false);
    expect(scopeAdmits(scope, 'web', {})).toBe(false);
  });

  it('gives kubectl steps with the group-qualified resource and asks the owner with the right privilege', () => {
    const cluster = byName('baseline/require-team-label');
    expect(renderFullText(cluster.remediation.steps[0].command ?? [])).toBe(
      'kubectl get clusterpolicy.kyverno.io baseline -o yaml',
    );
    expect(cluster.remediation.steps[1]).toMatchObject({
      type: 'manual',
      requiresPrivilege: 'cluster-admin',
    });
    const namespaced = byName('team-rules/require-requests');
    expect(renderFullText(namespaced.remediation.steps[0].command ?? [])).toBe(
      'kubectl get policy.kyverno.io team-rules -n shop -o yaml',
    );
    expect(namespaced.remediation.steps[1].requiresPrivilege).toBe('namespace-admin');
  });

  it('hides cluster-scoped policy and rule names, namespaces, messages, images and labels at summary level', () => {
    const viewer = { level: 'summary', namespace: 'some-other-ns' } as const;
    const leaks = [
      'baseline',
      'supply-chain',
      'require-team-label',
      'no-host-ports',
      'verify-signatures',
      'kube-system',
      'monitoring',
      'payments',
      'shop',
      'env=prod',
      'tier=backend',
      '8080',
      'wiki.internal',
      'ghcr.io',
    ];
    expectNoLeaks(['baseline', 'supply-chain'].flatMap(constraintsOf), viewer, leaks);
    const full = renderConstraintTexts(byName('baseline/no-host-ports'), {
      level: 'full',
      namespace: 'some-other-ns',
    });
    for (const expected of [
      'baseline/no-host-ports',
      'payments',
      'shop',
      'payments-sandbox',
      'tier=backend',
      '8080',
    ])
      expect(full).toContain(expected);
  });

  it('shows a namespaced Policy its own names at summary, but no message', () => {
    const constraint = byName('team-rules/require-requests');
    const own = renderText(constraint.summary, { level: 'summary', namespace: 'shop' });
    expect(own).toContain('"team-rules" rule "require-requests"');
    expect(own).not.toContain('CPU and memory');
    expect(renderText(constraint.displayName, { level: 'summary', namespace: 'other' })).toBe(
      'redacted/redacted',
    );
  });

  it('parses Kyverno kind forms', () => {
    expect(parseKyvernoKind('Deployment', 'k')).toEqual({ group: 'apps', resource: 'deployments' });
    expect(parseKyvernoKind('v1/Pod', 'k')).toEqual({ group: '', resource: 'pods' });
    expect(parseKyvernoKind('networking.k8s.io/v1/Ingress', 'k')).toEqual({
      group: 'networking.k8s.io',
      resource: 'ingresses',
    });
    expect(parseKyvernoKind('apps/*/Deployment/scale', 'k')).toEqual({
      group: 'apps',
      resource: 'deployments/scale',
    });
    expect(parseKyvernoKind('Widget', 'k')).toEqual({ group: '*', resource: 'widgets' });
    expect(parseKyvernoKind('*', 'k')).toEqual({ group: '*', resource: '*' });
    expect(() => parseKyvernoKind('apps//Deployment', 'k')).toThrow(AdapterParseError);
  });

  it.each([
    'bad-action',
    'two-types',
    'no-match',
    'rules-map',
    'bad-kind',
    'duplicate-rules',
    'no-namespace',
    'nameless-rule',
  ])('rejects malformed %s with a parse error', (name) => {
    expect(() => constraintsOf(name)).toThrow(AdapterParseError);
  });

  it('is routed ClusterPolicy and Policy of kyverno.io, not other Policy kinds', () => {
    const registry = new AdapterRegistry();
    expect(registry.adapterFor('kyverno.io', 'ClusterPolicy')?.name).toBe('policyengine');
    expect(registry.adapterFor('kyverno.io', 'Policy')?.name).toBe('policyengine');
    expect(registry.adapterFor('kyverno.io', 'PolicyException')).toBeUndefined();
  });
});

describe('Kyverno auto-generation for pod controllers, decided per policy as Kyverno 1.19 does', () => {
  const podRule = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    match: { any: [{ resources: { kinds: ['Pod'] } }] },
    validate: { pattern: { spec: { hostNetwork: false } } },
    ...extra,
  });
  const policy = (rules: Array<Record<string, unknown>>): KubernetesObject => ({
    apiVersion: 'kyverno.io/v1',
    kind: 'ClusterPolicy',
    metadata: { name: 'p' },
    spec: { rules },
  });
  const controllersOf = (object: KubernetesObject) =>
    Object.fromEntries(
      kyvernoPolicyToConstraints(object).map((constraint) => [
        constraint.name,
        (constraint.resourceTargets ?? [])
          .map((target) => target.resource)
          .filter((resource) => resource !== 'pods'),
      ]),
    );
  const all = [
    'deployments',
    'statefulsets',
    'daemonsets',
    'replicasets',
    'jobs',
    'cronjobs',
    'replicationcontrollers',
  ];

  it('generates every Pod rule for the controllers when no rule narrows', () => {
    expect(controllersOf(policy([podRule('a'), podRule('b')]))).toEqual({ 'p/a': all, 'p/b': all });
  });

  it('generates none when one rule selects by labels, or a generate rule is in the policy', () => {
    const selecting = podRule('b', {
      match: { any: [{ resources: { kinds: ['Pod'], selector: { matchLabels: { app: 'x' } } } }] },
    });
    expect(controllersOf(policy([podRule('a'), selecting]))).toEqual({ 'p/a': [], 'p/b': [] });
    const generating = {
      name: 'g',
      match: { any: [{ resources: { kinds: ['Namespace'] } }] },
      generate: { kind: 'ConfigMap', name: 'c', namespace: '{{request.object.metadata.name}}', data: {} },
    };
    expect(controllersOf(policy([podRule('a'), generating]))['p/a']).toEqual([]);
  });

  it('does not generate a rule whose exclude names other kinds only', () => {
    const excluding = podRule('a', { exclude: { any: [{ resources: { kinds: ['Deployment'] } }] } });
    expect(controllersOf(policy([excluding, podRule('b')]))).toEqual({ 'p/a': [], 'p/b': all });
  });
});
