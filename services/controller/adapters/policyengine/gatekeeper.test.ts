import path from 'node:path';
import { AdapterParseError } from '../../../model/constraint';
import { renderFullText } from '../../../model/text';
import { renderConstraintTexts, testAdapterContext } from '../../../../test/support/render-constraint';
import { fixture, loadFixtureObjects } from '../../../../test/support/yaml-fixtures';
import { scopeAdmits } from '../../index/constraint-index';
import { policyEngineAdapter } from './policyengine';
import { AdapterRegistry } from '../registry';
import { fixtureConstraints } from '../../../../test/support/adapter-fixtures';

const fixtures = loadFixtureObjects(path.join(__dirname, 'fixtures/gatekeeper.yaml'));
const constraintsOf = fixtureConstraints(policyEngineAdapter.toConstraints, fixtures);

describe('policyengine adapter: Gatekeeper constraints', () => {
  it('turns the default action (deny) into Critical deny, with kinds, exclusions and labels', () => {
    const [constraint, ...rest] = constraintsOf('must-have-owner');
    expect(rest).toHaveLength(0);
    expect(constraint).toMatchObject({
      id: 'constraint',
      name: 'must-have-owner',
      type: 'Admission',
      severity: 'Critical',
      effect: 'deny',
      adapter: 'policyengine',
      source: { kind: 'K8sRequiredLabels', apiVersion: 'constraints.gatekeeper.sh/v1beta1', namespace: null },
      scope: { kind: 'cluster', excludedNamespaces: ['gatekeeper-system', 'kube-*'] },
      resourceTargets: [
        { group: 'apps', resource: 'deployments' },
        { group: 'apps', resource: 'statefulsets' },
        { group: '', resource: 'pods' },
      ],
    });
    // The selector reads each object's own labels, a Deployment's not being its pods': no pod selector.
    expect(constraint.workloadSelector).toBeUndefined();
    expect(constraint.tags).toEqual([
      'admission',
      'policy-engine',
      'gatekeeper',
      'K8sRequiredLabels',
      'deny',
    ]);
    expect(renderFullText(constraint.summary)).toBe(
      'Gatekeeper K8sRequiredLabels constraint "must-have-owner" rejects Deployments, Pods and StatefulSets labelled team=payments that violate it in every namespace except gatekeeper-system, kube-* (parameters: labels owner)',
    );
  });

  it('excludes namespaces by a kube-* prefix pattern when the index evaluates the scope', () => {
    const [constraint] = constraintsOf('must-have-owner');
    expect(scopeAdmits(constraint.scope, 'kube-system', {})).toBe(false);
    expect(scopeAdmits(constraint.scope, 'kube-public', {})).toBe(false);
    expect(scopeAdmits(constraint.scope, 'gatekeeper-system', {})).toBe(false);
    expect(scopeAdmits(constraint.scope, 'shop', {})).toBe(true);
  });

  it('turns warn into Warning warn, with namespaces, a namespace selector and wildcard targets', () => {
    const [constraint] = constraintsOf('trusted-registries');
    expect(constraint).toMatchObject({
      severity: 'Warning',
      effect: 'warn',
      scope: {
        kind: 'cluster',
        namespaces: ['payments', 'shop'],
        namespaceSelector: { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] },
      },
      resourceTargets: [{ group: '*', resource: '*' }],
    });
    expect(constraint.workloadSelector).toBeUndefined();
    expect(renderFullText(constraint.summary)).toBe(
      'Gatekeeper K8sAllowedRepos constraint "trusted-registries" warns about resources that violate it in namespaces payments, shop labelled env in (prod) (parameters: repos registry.internal.example.com/)',
    );
    expect(renderFullText(constraint.remediationHint)).toContain('it may be switched to deny');
  });

  it('turns dryrun into Info audit; no match means every resource in every namespace', () => {
    const [constraint] = constraintsOf('limits-audit');
    expect(constraint).toMatchObject({ severity: 'Info', effect: 'audit', scope: { kind: 'cluster' } });
    expect(constraint.resourceTargets).toBeUndefined();
    expect(constraint.tags).toContain('dryrun');
    expect(renderFullText(constraint.remediationHint)).toMatch(/^nothing is blocked yet/);
  });

  it('reads a constraint without spec as deny everywhere', () => {
    expect(constraintsOf('block-node-port')[0]).toMatchObject({ severity: 'Critical', effect: 'deny' });
  });

  it('takes the strongest scoped action at the admission enforcement point', () => {
    expect(constraintsOf('no-latest')[0]).toMatchObject({ severity: 'Critical', effect: 'deny' });
    expect(constraintsOf('latest-audit-only')[0]).toMatchObject({ severity: 'Info', effect: 'audit' });
  });

  it('yields nothing for constraints on cluster-scoped resources only', () => {
    expect(constraintsOf('namespaces-need-owner')).toEqual([]);
  });

  it('gives kubectl steps for the constraint (plural = lower-cased kind) and its template, and asks the cluster admins', () => {
    const [constraint] = constraintsOf('must-have-owner');
    const [inspect, template, ask] = constraint.remediation.steps;
    expect(renderFullText(inspect.command ?? [])).toBe(
      'kubectl get k8srequiredlabels must-have-owner -o yaml',
    );
    expect(renderFullText(template.command ?? [])).toBe(
      'kubectl get constrainttemplate k8srequiredlabels -o yaml',
    );
    expect(ask).toMatchObject({ type: 'manual', requiresPrivilege: 'cluster-admin', automated: false });
  });

  it('hides the constraint name, namespaces, labels and parameters at summary level; shows them at full', () => {
    for (const name of ['must-have-owner', 'trusted-registries']) {
      const [constraint] = constraintsOf(name);
      const summary = renderConstraintTexts(constraint, { level: 'summary', namespace: 'some-other-ns' });
      for (const leak of [
        name,
        'payments',
        'shop',
        'kube-',
        'gatekeeper-system',
        'team=',
        'env',
        'registry.internal',
        'owner@',
      ])
        expect(summary).not.toContain(leak);
      // The template kind is the source kind: visible at every level.
      expect(summary).toContain(constraint.source.kind);
    }
    const full = renderConstraintTexts(constraintsOf('must-have-owner')[0], {
      level: 'full',
      namespace: 'some-other-ns',
    });
    for (const expected of [
      'must-have-owner',
      'gatekeeper-system',
      'kube-*',
      'team=payments',
      'labels owner',
      'Deployments',
    ])
      expect(full).toContain(expected);
  });

  it.each(['bad-action', 'bad-kinds', 'bad-label-selector', 'bad-excluded'])(
    'rejects malformed %s with a parse error',
    (name) => {
      expect(() => constraintsOf(name)).toThrow(AdapterParseError);
    },
  );

  it('rejects a constraint without a name, and an object of another group, with a parse error', () => {
    const nameless = { ...fixture(fixtures, 'block-node-port'), metadata: {} };
    expect(() => policyEngineAdapter.toConstraints(nameless, testAdapterContext())).toThrow(
      AdapterParseError,
    );
    const foreign = { ...fixture(fixtures, 'block-node-port'), apiVersion: 'example.com/v1' };
    expect(() => policyEngineAdapter.toConstraints(foreign, testAdapterContext())).toThrow(AdapterParseError);
  });

  it('is routed every kind of the Gatekeeper constraints group by the registry', () => {
    const registry = new AdapterRegistry();
    expect(registry.adapterFor('constraints.gatekeeper.sh', 'K8sAnythingAtAll')?.name).toBe('policyengine');
    expect(registry.adapterFor('templates.gatekeeper.sh', 'ConstraintTemplate')?.name).toBe('policyengine');
    expect(registry.adapterFor('config.gatekeeper.sh', 'Config')?.name).toBe('policyengine');
  });
});
