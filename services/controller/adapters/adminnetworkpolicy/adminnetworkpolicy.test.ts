import path from 'node:path';
import { AdapterParseError } from '../../../model/constraint';
import { renderFullText, renderText } from '../../../model/text';
import { scopeAdmits } from '../../index/constraint-index';
import { renderConstraintTexts } from '../../../../test/support/render-constraint';
import { AdapterRegistry } from '../registry';
import { adminNetworkPolicyAdapter } from './adminnetworkpolicy';
import { fixtureConstraints } from '../../../../test/support/adapter-fixtures';

const constraintsOf = fixtureConstraints(
  adminNetworkPolicyAdapter.toConstraints,
  path.join(__dirname, 'fixtures/adminnetworkpolicies.yaml'),
);

describe('adminnetworkpolicy adapter', () => {
  it('makes an ANP with Deny rules Critical in both directions, scoped by its subject', () => {
    const [ingress, egress] = constraintsOf('cluster-guardrails');
    expect([ingress, egress].map((c) => [c.name, c.type, c.severity, c.effect])).toEqual([
      ['cluster-guardrails/ingress', 'NetworkIngress', 'Critical', 'deny'],
      ['cluster-guardrails/egress', 'NetworkEgress', 'Critical', 'deny'],
    ]);
    expect(ingress).toMatchObject({
      adapter: 'adminnetworkpolicy',
      workloadSelector: { matchLabels: { app: 'api' } },
      source: {
        kind: 'AdminNetworkPolicy',
        apiVersion: 'policy.networking.k8s.io/v1alpha1',
        namespace: null,
      },
    });
    expect(scopeAdmits(ingress.scope, 'shop', { env: 'prod' })).toBe(true);
    expect(scopeAdmits(ingress.scope, 'sandbox', { env: 'dev' })).toBe(false);
    expect(ingress.tags).toEqual([
      'network',
      'admin-network-policy',
      'ingress',
      'deny-rules',
      'pass',
      'clusterwide',
    ]);
    expect(renderFullText(ingress.summary)).toBe(
      'AdminNetworkPolicy "cluster-guardrails" (priority 10) for pods app=api in namespaces labelled env=prod denies ingress from: pods in namespaces env=dev; allows ingress from: namespace monitoring on TCP/9090; leaves ingress from any namespace to NetworkPolicies',
    );
    expect(renderFullText(egress.summary)).toContain('on UDP/53, dns-tcp, TCP/8000-8100');
    expect(renderFullText(egress.remediationHint)).toBe(
      'ask the cluster admins to allow the egress traffic your pods need; no NetworkPolicy can override AdminNetworkPolicy "cluster-guardrails"',
    );
  });

  it('makes an ANP that only allows Info, with no workload selector for a namespace subject', () => {
    const [constraint, ...rest] = constraintsOf('allow-observability');
    expect(rest).toHaveLength(0);
    expect(constraint).toMatchObject({
      name: 'allow-observability',
      severity: 'Info',
      effect: 'restrict',
      scope: { kind: 'cluster' },
    });
    expect(constraint.workloadSelector).toBeUndefined();
    expect(renderFullText(constraint.remediationHint)).toMatch(/^nothing to change/);
  });

  it('makes a BANP Deny a Warning that a NetworkPolicy of the namespace can open', () => {
    const constraints = constraintsOf('default');
    expect(constraints.map((c) => [c.name, c.severity, c.effect])).toEqual([
      ['default/ingress', 'Warning', 'deny'],
      ['default/egress', 'Warning', 'deny'],
    ]);
    expect(renderFullText(constraints[0].summary)).not.toContain('priority');
    expect(renderFullText(constraints[1].summary)).toBe(
      'BaselineAdminNetworkPolicy "default" for all pods in namespaces labelled env in (prod) denies egress to: 0.0.0.0/0 or *.example.com',
    );
    expect(renderFullText(constraints[0].remediationHint)).toMatch(/^add a NetworkPolicy in your namespace/);
  });

  it('hides cluster-scoped names, selectors, CIDRs, hosts and ports at summary', () => {
    const viewer = { level: 'summary', namespace: 'shop' } as const;
    const leaks = [
      'cluster-guardrails',
      'allow-observability',
      '"default"',
      'monitoring',
      'kube-dns',
      'app=',
      'env=',
      '169.254',
      '0.0.0.0',
      'example.com',
      '9090',
      '53',
      '8000',
      'dns-tcp',
    ];
    for (const name of ['cluster-guardrails', 'allow-observability', 'default'])
      for (const constraint of constraintsOf(name)) {
        const rendered = renderConstraintTexts(constraint, viewer);
        for (const leak of leaks) expect(rendered).not.toContain(leak);
        expect(renderText(constraint.summary, viewer).length).toBeLessThanOrEqual(300);
      }
    const detailed = renderText(constraintsOf('cluster-guardrails')[0].summary, {
      level: 'detailed',
      namespace: 'shop',
    });
    expect(detailed).toContain('TCP/9090');
    expect(detailed).not.toContain('cluster-guardrails');
    expect(detailed).not.toContain('monitoring');
  });

  it.each(['banp-pass', 'no-priority', 'two-subjects', 'ingress-network', 'bad-port'])(
    'rejects malformed %s with a parse error',
    (name) => {
      expect(() => constraintsOf(name)).toThrow(AdapterParseError);
    },
  );

  it('is routed both kinds by the registry', () => {
    const registry = new AdapterRegistry();
    expect(registry.adapterFor('policy.networking.k8s.io', 'AdminNetworkPolicy')?.name).toBe(
      'adminnetworkpolicy',
    );
    expect(registry.adapterFor('policy.networking.k8s.io', 'BaselineAdminNetworkPolicy')?.name).toBe(
      'adminnetworkpolicy',
    );
    expect(registry.adapterFor('policy.networking.k8s.io', 'ClusterNetworkPolicy')).toBeUndefined();
  });
});
