import path from 'node:path';
import { AdapterParseError } from '../../../model/constraint';
import { renderFullText, renderText } from '../../../model/text';
import { renderConstraintTexts } from '../../../../test/support/render-constraint';
import { cniAdapter } from './cni';
import { AdapterRegistry } from '../registry';
import { expectNoLeaks, fixtureConstraints } from '../../../../test/support/adapter-fixtures';

const constraintsOf = fixtureConstraints(
  cniAdapter.toConstraints,
  path.join(__dirname, 'fixtures/cilium-policies.yaml'),
);

describe('cni adapter (Cilium)', () => {
  it('turns an allow-list into a Warning restrict constraint with k8s: prefixes stripped', () => {
    const [constraint, ...rest] = constraintsOf('api-allow');
    expect(rest).toHaveLength(0);
    expect(constraint).toMatchObject({
      name: 'api-allow',
      type: 'NetworkIngress',
      severity: 'Warning',
      effect: 'restrict',
      adapter: 'cni',
      scope: { kind: 'namespace', namespace: 'shop' },
      workloadSelector: { matchLabels: { app: 'api' } },
      source: {
        kind: 'CiliumNetworkPolicy',
        apiVersion: 'cilium.io/v2',
        name: 'api-allow',
        namespace: 'shop',
      },
    });
    expect(constraint.tags).toEqual(['network', 'cilium', 'ingress', 'allow-list', 'l7']);
    expect(renderFullText(constraint.summary)).toBe(
      'CiliumNetworkPolicy "api-allow" allows ingress for pods app=api in shop only from: pods app=frontend in shop or pods app=billing in payments on TCP/8443 (HTTP GET /api/.*)',
    );
  });

  it('treats an empty rule ({}) as Cilium does: default deny with nothing allowed, Critical deny', () => {
    const [constraint] = constraintsOf('lockdown-egress');
    expect(constraint).toMatchObject({
      name: 'lockdown-egress',
      type: 'NetworkEgress',
      severity: 'Critical',
      effect: 'deny',
    });
    expect(constraint.tags).toContain('default-deny');
    expect(renderFullText(constraint.summary)).toBe(
      'CiliumNetworkPolicy "lockdown-egress" denies all egress traffic for pods role=restricted in shop',
    );
    expect(renderFullText(constraint.remediationHint)).toBe(
      'add a CiliumNetworkPolicy in shop that allows the egress traffic your pods need',
    );
  });

  it('names both directions <name>/ingress and <name>/egress; deny rules make the direction Critical', () => {
    const constraints = constraintsOf('db-client');
    expect(
      constraints.map((constraint) => [
        constraint.name,
        constraint.type,
        constraint.severity,
        constraint.effect,
      ]),
    ).toEqual([
      ['db-client/ingress', 'NetworkIngress', 'Warning', 'restrict'],
      ['db-client/egress', 'NetworkEgress', 'Critical', 'deny'],
    ]);
    expect(constraints.map((constraint) => constraint.id)).toEqual(['ingress', 'egress']);
    expect(renderFullText(constraints[1].summary)).toBe(
      'CiliumNetworkPolicy "db-client" denies egress for pods app=worker in shop to: 10.0.0.0/8 except 10.96.0.0/12 on ANY/5432; allows only to: hosts api.example.com on TCP/443',
    );
    expect(constraints[1].tags).toEqual(['network', 'cilium', 'egress', 'deny-rules', 'allow-list', 'fqdn']);
    expect(renderFullText(constraints[0].displayName)).toBe('db-client/ingress');
  });

  it('merges the rules of specs: one constraint, every pod assumed when their selectors differ', () => {
    const [constraint, ...rest] = constraintsOf('split-rules');
    expect(rest).toHaveLength(0);
    expect(constraint.workloadSelector).toBeUndefined();
    expect(constraint.effect).toBe('restrict');
    expect(renderFullText(constraint.summary)).toContain('for pods app=cart or app=checkout in shop');
    expect(renderFullText(constraint.summary)).toContain('no peer; entities cluster');
  });

  it('yields nothing for allowances without default deny and for host (nodeSelector) policies', () => {
    expect(constraintsOf('additive-only')).toEqual([]);
    expect(constraintsOf('host-firewall')).toEqual([]);
  });

  it('pins a clusterwide policy to the namespace of its endpoint selector and drops that label', () => {
    const [constraint] = constraintsOf('ledger-no-world');
    expect(constraint).toMatchObject({
      name: 'ledger-no-world',
      severity: 'Critical',
      effect: 'deny',
      scope: { kind: 'cluster', namespaces: ['payments'] },
      workloadSelector: { matchLabels: { app: 'ledger' } },
      source: { kind: 'CiliumClusterwideNetworkPolicy', namespace: null },
    });
    expect(constraint.tags).toEqual([
      'network',
      'cilium',
      'ingress',
      'default-deny',
      'deny-rules',
      'clusterwide',
    ]);
    expect(renderFullText(constraint.summary)).toBe(
      'CiliumClusterwideNetworkPolicy "ledger-no-world" denies all ingress traffic for pods app=ledger in namespace payments, explicitly from: entities world',
    );
  });

  it('reads In/NotIn namespace expressions and namespace labels of clusterwide policies', () => {
    const [webTier] = constraintsOf('web-tier-ingress');
    expect(webTier).toMatchObject({
      severity: 'Warning',
      effect: 'restrict',
      scope: { kind: 'cluster', namespaces: ['shop', 'web'], excludedNamespaces: ['web'] },
      workloadSelector: { matchExpressions: [{ key: 'tier', operator: 'Exists' }] },
    });
    expect(renderFullText(webTier.summary)).toContain('only from: any pod in ingress-nginx on ANY/8080');

    const [prod] = constraintsOf('prod-default-deny');
    expect(prod).toMatchObject({
      severity: 'Critical',
      effect: 'deny',
      scope: { kind: 'cluster', namespaceSelector: { matchLabels: { env: 'prod' } } },
      workloadSelector: {},
    });
  });

  it('gives a kubectl step with the real resource name and a manual step with the owner privilege', () => {
    const [namespaced] = constraintsOf('api-allow');
    expect(renderFullText(namespaced.remediation.steps[0].command ?? [])).toBe(
      'kubectl get ciliumnetworkpolicy api-allow -n shop -o yaml',
    );
    expect(namespaced.remediation.steps[1]).toMatchObject({
      type: 'manual',
      requiresPrivilege: 'namespace-admin',
      automated: false,
    });
    const [clusterwide] = constraintsOf('ledger-no-world');
    expect(renderFullText(clusterwide.remediation.steps[0].command ?? [])).toBe(
      'kubectl get ciliumclusterwidenetworkpolicy ledger-no-world -o yaml',
    );
    expect(clusterwide.remediation.steps[1].requiresPrivilege).toBe('cluster-admin');
  });

  it('hides foreign names, namespaces, ports, CIDRs and hosts at summary level', () => {
    const viewer = { level: 'summary', namespace: 'some-other-ns' } as const;
    const leaks = [
      'api-allow',
      'db-client',
      'ledger-no-world',
      'web-tier-ingress',
      'shop',
      'payments',
      'ingress-nginx',
      'frontend',
      'billing',
      'app=',
      '8443',
      '5432',
      '443',
      '8080',
      '10.0.0.0',
      '192.168',
      'api.example.com',
      'world',
      '/api',
    ];
    const names = ['api-allow', 'db-client', 'ledger-no-world', 'web-tier-ingress'];
    expectNoLeaks(names.flatMap(constraintsOf), viewer, leaks);
  });

  it('shows everything at full, and a viewer of the namespace sees its own names at summary', () => {
    const full = { level: 'full', namespace: 'some-other-ns' } as const;
    const [ingress, egress] = constraintsOf('db-client');
    const rendered = `${renderConstraintTexts(ingress, full)}\n${renderConstraintTexts(egress, full)}`;
    for (const expected of [
      'db-client',
      'shop',
      '192.168.10.0/24',
      '10.0.0.0/8',
      '5432',
      'api.example.com',
      'TCP/443',
    ])
      expect(rendered).toContain(expected);
    const [ledger] = constraintsOf('ledger-no-world');
    expect(renderConstraintTexts(ledger, full)).toContain('ledger-no-world');
    expect(renderConstraintTexts(ledger, full)).toContain('payments');

    const own = renderText(egress.summary, { level: 'summary', namespace: 'shop' });
    expect(own).toContain('"db-client"');
    expect(own).not.toMatch(/5432|10\.0\.0\.0|api\.example\.com/);
    // A clusterwide policy's name stays hidden even from the namespace it is pinned to.
    expect(renderText(ledger.summary, { level: 'summary', namespace: 'payments' })).not.toContain(
      'ledger-no-world',
    );
  });

  it.each([
    'bad-endpoint-selector',
    'no-selector',
    'both-selectors',
    'bad-ingress',
    'bad-port',
    'bad-default-deny',
    'no-spec',
    'no-namespace',
    'bad-peer-list',
  ])('rejects malformed %s with a parse error', (name) => {
    expect(() => constraintsOf(name)).toThrow(AdapterParseError);
  });

  it('is routed both Cilium kinds by the registry', () => {
    const registry = new AdapterRegistry();
    expect(registry.adapterFor('cilium.io', 'CiliumNetworkPolicy')?.name).toBe('cni');
    expect(registry.adapterFor('cilium.io', 'CiliumClusterwideNetworkPolicy')?.name).toBe('cni');
    expect(registry.adapterFor('cilium.io', 'CiliumEndpoint')).toBeUndefined();
  });
});
