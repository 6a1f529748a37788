import path from 'node:path';
import { AdapterParseError } from '../../../model/constraint';
import { matchesSelector } from '../../../model/selector';
import { renderFullText, renderText } from '../../../model/text';
import { scopeAdmits } from '../../index/constraint-index';
import { renderConstraintTexts, testAdapterContext } from '../../../../test/support/render-constraint';
import { fixture, loadFixtureObjects } from '../../../../test/support/yaml-fixtures';
import { AdapterRegistry } from '../registry';
import { cniAdapter } from './cni';
import { fixtureConstraints } from '../../../../test/support/adapter-fixtures';

const fixtures = loadFixtureObjects(path.join(__dirname, 'fixtures/calico-policies.yaml'));
const constraintsOf = fixtureConstraints(cniAdapter.toConstraints, fixtures);

describe('cni adapter (Calico)', () => {
  it('reads an ordered allow-list in a tier, with its selector kept as a Calico expression', () => {
    const [constraint, ...rest] = constraintsOf('api-allow');
    expect(rest).toHaveLength(0);
    expect(constraint).toMatchObject({
      name: 'api-allow',
      type: 'NetworkIngress',
      severity: 'Warning',
      effect: 'restrict',
      adapter: 'cni',
      scope: { kind: 'namespace', namespace: 'shop' },
      source: {
        kind: 'NetworkPolicy',
        apiVersion: 'projectcalico.org/v3',
        name: 'api-allow',
        namespace: 'shop',
      },
    });
    expect(constraint.tags).toEqual(['network', 'calico', 'ingress', 'allow-list']);
    expect(renderFullText(constraint.summary)).toBe(
      `Calico NetworkPolicy "api-allow" for pods app == 'api' && has(tier) in shop allows ingress only from: pods role in {'frontend', 'gateway'} in shop on TCP/8443, TCP/http-metrics; pods app == 'ledger' in namespaces team == 'billing' (tier "security", order 100)`,
    );
    const selector = constraint.workloadSelector;
    if (selector === undefined) throw new Error('expected a workload selector');
    expect(matchesSelector(selector, { app: 'api', tier: 'backend' })).toBe(true);
    expect(matchesSelector(selector, { app: 'api' })).toBe(false);
    expect(matchesSelector(selector, {})).toBe(false);
  });

  it('denies everything in a declared direction without rules (CRD form), one constraint per direction', () => {
    const constraints = constraintsOf('quarantine');
    expect(constraints.map((c) => [c.name, c.type, c.severity, c.effect, c.source.apiVersion])).toEqual([
      ['quarantine/ingress', 'NetworkIngress', 'Critical', 'deny', 'crd.projectcalico.org/v1'],
      ['quarantine/egress', 'NetworkEgress', 'Critical', 'deny', 'crd.projectcalico.org/v1'],
    ]);
    expect(renderFullText(constraints[1].summary)).toBe(
      `Calico NetworkPolicy "quarantine" for pods quarantine == 'true' in shop denies all egress traffic (tier "default")`,
    );
    expect(constraints[0].remediation.steps[0].command).toBeDefined();
    expect(renderFullText(constraints[0].remediation.steps[0].command ?? [])).toBe(
      'kubectl get networkpolicies.crd.projectcalico.org quarantine -n shop -o yaml',
    );
  });

  it('stops at the first rule that matches everything: later rules are unreachable', () => {
    const [constraint, ...rest] = constraintsOf('no-metadata');
    expect(rest).toHaveLength(0);
    expect(constraint).toMatchObject({
      name: 'no-metadata',
      type: 'NetworkEgress',
      severity: 'Critical',
      effect: 'deny',
    });
    expect(constraint.workloadSelector).toBeUndefined();
    const summary = renderFullText(constraint.summary);
    expect(summary).toBe(
      'Calico NetworkPolicy "no-metadata" for all pods in shop denies egress to: 169.254.169.254/32; 10.0.0.0/8 on UDP/5000:5100; allows to: any peer (tier "default")',
    );
    expect(summary).not.toContain('0.0.0.0/0');
  });

  it('scopes a GlobalNetworkPolicy by its namespace selector expression', () => {
    const [constraint] = constraintsOf('prod-egress');
    expect(constraint).toMatchObject({ name: 'prod-egress', severity: 'Warning', effect: 'restrict' });
    expect(constraint.tags).toContain('service-account-selector');
    expect(scopeAdmits(constraint.scope, 'payments', { env: 'prod' })).toBe(true);
    expect(scopeAdmits(constraint.scope, 'payments', { env: 'prod', exempt: 'yes' })).toBe(false);
    expect(scopeAdmits(constraint.scope, 'payments', { env: 'dev' })).toBe(false);
    expect(renderFullText(constraint.summary)).toContain(`pods app starts with 'pay' in namespaces labelled`);
    expect(renderFullText(constraint.summary)).toContain('Service "postgres"');
  });

  it('lets a pod selector name the namespace as Calico does (projectcalico.org/namespace)', () => {
    const policy = structuredClone(fixture(fixtures, 'pass-to-developers'));
    (policy.spec as Record<string, unknown>).selector = "projectcalico.org/namespace == 'payments'";
    const [constraint] = cniAdapter.toConstraints(policy, testAdapterContext());
    const selector = constraint.workloadSelector;
    if (selector === undefined) throw new Error('expected a workload selector');
    expect(matchesSelector(selector, { app: 'ledger' }, 'payments')).toBe(true);
    expect(matchesSelector(selector, { app: 'ledger' }, 'shop')).toBe(false);
  });

  it('lets a namespace selector name namespaces as Calico does (projectcalico.org/name)', () => {
    const policy = structuredClone(fixture(fixtures, 'prod-egress'));
    (policy.spec as Record<string, unknown>).namespaceSelector = "projectcalico.org/name in {'payments'}";
    const [constraint] = cniAdapter.toConstraints(policy, testAdapterContext());
    expect(scopeAdmits(constraint.scope, 'payments', {})).toBe(true);
    expect(scopeAdmits(constraint.scope, 'shop', { 'projectcalico.org/name': 'payments' })).toBe(false);
  });

  it('treats a Pass-only policy as Info and host-endpoint-only policies as nothing', () => {
    const [pass] = constraintsOf('pass-to-developers');
    expect(pass).toMatchObject({ severity: 'Info', effect: 'restrict', scope: { kind: 'cluster' } });
    expect(renderFullText(pass.remediationHint)).toMatch(/^nothing to change/);
    expect(constraintsOf('host-firewall')).toEqual([]);
  });

  it('keeps names, tiers, selectors, CIDRs and ports out of the summary level', () => {
    const viewer = { level: 'summary', namespace: 'elsewhere' } as const;
    const leaks = [
      'api-allow',
      'no-metadata',
      'prod-egress',
      'shop',
      'security',
      'platform',
      'postgres',
      'databases',
      "'api'",
      'billing',
      '169.254',
      '10.0.0.0',
      '8443',
      '5000',
      ':53',

      'pay',
    ];
    for (const name of ['api-allow', 'quarantine', 'no-metadata', 'prod-egress', 'pass-to-developers'])
      for (const constraint of constraintsOf(name)) {
        const rendered = renderConstraintTexts(constraint, viewer);
        for (const leak of leaks) expect(rendered).not.toContain(leak);
        expect(renderText(constraint.summary, viewer).length).toBeLessThanOrEqual(300);
      }
    // The namespace's own viewer sees its policy's name, not the rule details or the tier.
    const own = renderText(constraintsOf('api-allow')[0].summary, { level: 'summary', namespace: 'shop' });
    expect(own).toContain('"api-allow"');
    expect(own).not.toMatch(/8443|security|role in/);
    const detailed = renderText(constraintsOf('api-allow')[0].summary, {
      level: 'detailed',
      namespace: 'shop',
    });
    expect(detailed).toContain('TCP/8443');
    expect(detailed).not.toContain('security');
  });

  it.each(['bad-selector', 'bad-action', 'bad-port', 'bad-types', 'no-namespace'])(
    'rejects malformed %s with a parse error',
    (name) => {
      expect(() => constraintsOf(name)).toThrow(AdapterParseError);
    },
  );

  it('is routed both Calico API groups by exact kind', () => {
    const registry = new AdapterRegistry();
    for (const group of ['projectcalico.org', 'crd.projectcalico.org']) {
      expect(registry.adapterFor(group, 'NetworkPolicy')?.name).toBe('cni');
      expect(registry.adapterFor(group, 'GlobalNetworkPolicy')?.name).toBe('cni');
      expect(registry.adapterFor(group, 'IPPool')).toBeUndefined();
    }
    expect(registry.adapterFor('networking.k8s.io', 'NetworkPolicy')?.name).toBe('networkpolicy');
  });
});
