import path from 'node:path';
import { AdapterParseError } from '../../../model/constraint';
import { renderFullText, renderText } from '../../../model/text';
import { renderConstraintTexts, testAdapterContext } from '../../../../test/support/render-constraint';
import { fixture, loadFixtureObjects } from '../../../../test/support/yaml-fixtures';
import { meshAdapter } from './mesh';
import { AdapterRegistry } from '../registry';
import { expectNoLeaks } from '../../../../test/support/adapter-fixtures';

const fixtures = loadFixtureObjects(path.join(__dirname, 'fixtures/istio-policies.yaml'));
const constraintOf = (name: string, meshRootNamespace = 'istio-system') => {
  const constraints = meshAdapter.toConstraints(fixture(fixtures, name), {
    ...testAdapterContext(),
    meshRootNamespace,
  });
  expect(constraints).toHaveLength(1);
  return constraints[0];
};

describe('mesh adapter (Istio)', () => {
  it('turns a DENY AuthorizationPolicy into Critical deny with its rules as details', () => {
    const constraint = constraintOf('deny-admin');
    expect(constraint).toMatchObject({
      id: 'policy',
      name: 'deny-admin',
      type: 'MeshPolicy',
      severity: 'Critical',
      effect: 'deny',
      adapter: 'mesh',
      scope: { kind: 'namespace', namespace: 'shop' },
      workloadSelector: { matchLabels: { app: 'api' } },
      source: { kind: 'AuthorizationPolicy', apiVersion: 'security.istio.io/v1', namespace: 'shop' },
    });
    expect(constraint.tags).toEqual(['mesh', 'istio', 'authorization', 'deny']);
    expect(renderFullText(constraint.summary)).toBe(
      'Istio AuthorizationPolicy "deny-admin" denies requests to pods app=api in shop that match: from namespaces other than shop to ports 8443 and paths /admin/*',
    );
  });

  it('turns an ALLOW with rules into Warning restrict, principals read as service accounts', () => {
    const constraint = constraintOf('api-callers');
    expect(constraint).toMatchObject({ severity: 'Warning', effect: 'restrict' });
    expect(renderFullText(constraint.summary)).toBe(
      'Istio AuthorizationPolicy "api-callers" allows only these requests to pods app=api in shop, denying all others: from service account frontend in shop or service account billing in payments or IPs 10.8.0.0/16 to hosts api.shop.svc.cluster.local and methods GET and paths /api/* when request.auth.claims[iss] in [https://issuer.example.com]',
    );
  });

  it('treats an ALLOW without rules as deny-all (Critical) and an ALLOW with an empty rule as allow-all (Info)', () => {
    const nothing = constraintOf('allow-nothing');
    expect(nothing).toMatchObject({ severity: 'Critical', effect: 'deny' });
    expect(nothing.workloadSelector).toBeUndefined();
    expect(nothing.tags).toContain('deny-all');
    expect(renderFullText(nothing.summary)).toBe(
      'Istio AuthorizationPolicy "allow-nothing" denies all requests to all pods in shop: an ALLOW policy without rules allows nothing',
    );
    expect(renderFullText(nothing.remediationHint)).toBe(
      'add an ALLOW AuthorizationPolicy in shop for the requests your workload must accept',
    );
    expect(constraintOf('allow-all')).toMatchObject({ severity: 'Info', effect: 'restrict' });
  });

  it('reads CUSTOM as Warning restrict, AUDIT as Info audit, a rule-less DENY as Info', () => {
    const custom = constraintOf('ext-authz');
    expect(custom).toMatchObject({ severity: 'Warning', effect: 'restrict' });
    expect(renderFullText(custom.summary)).toContain('external authorizer opa.internal');
    expect(constraintOf('audit-writes')).toMatchObject({ severity: 'Info', effect: 'audit' });
    expect(renderFullText(constraintOf('audit-writes').summary)).toContain('methods other than GET, HEAD');
    expect(constraintOf('deny-nothing')).toMatchObject({ severity: 'Info', effect: 'deny' });
  });

  it('applies root-namespace policies mesh-wide, keeping a selector, and names them in their namespace', () => {
    const global = constraintOf('global-deny-legacy');
    expect(global).toMatchObject({
      severity: 'Critical',
      scope: { kind: 'cluster' },
      source: { namespace: 'istio-system' },
    });
    expect(global.tags).toContain('mesh-wide');
    expect(renderFullText(global.summary)).toContain('to all pods in every namespace');
    expect(global.remediation.steps[1].requiresPrivilege).toBe('cluster-admin');
    const scrapers = constraintOf('metrics-scrapers');
    expect(scrapers).toMatchObject({
      scope: { kind: 'cluster' },
      workloadSelector: { matchLabels: { metrics: 'exposed' } },
    });
    // With another root namespace configured, the same object is an ordinary namespaced policy.
    expect(constraintOf('global-deny-legacy', 'mesh-root').scope).toEqual({
      kind: 'namespace',
      namespace: 'istio-system',
    });
  });

  it('describes policies attached to services (targetRefs) without a pod selector', () => {
    const constraint = constraintOf('waypoint-deny');
    expect(constraint.workloadSelector).toBeUndefined();
    expect(renderFullText(constraint.summary)).toBe(
      'Istio AuthorizationPolicy "waypoint-deny" denies requests to Service reviews in shop that match: to methods DELETE',
    );
  });

  it('turns PeerAuthentication STRICT into Warning require, port-level STRICT too, other modes Info', () => {
    const strict = constraintOf('default');
    expect(strict).toMatchObject({ severity: 'Warning', effect: 'require', scope: { kind: 'cluster' } });
    expect(renderFullText(strict.summary)).toBe(
      'Istio PeerAuthentication "default" requires mutual TLS for traffic to all pods in every namespace; plaintext is rejected',
    );
    const portLevel = constraintOf('legacy-permissive');
    expect(portLevel).toMatchObject({
      severity: 'Warning',
      effect: 'require',
      workloadSelector: { matchLabels: { app: 'legacy' } },
    });
    expect(renderFullText(portLevel.summary)).toContain(
      'requires mutual TLS on port 9090 of pods app=legacy in shop',
    );
    const disabled = constraintOf('plaintext');
    expect(disabled).toMatchObject({ severity: 'Info', effect: 'restrict' });
    expect(disabled.tags).toEqual(['mesh', 'istio', 'mtls', 'disable']);
  });

  it('turns a Sidecar with egress hosts or REGISTRY_ONLY into Warning restrict, otherwise Info', () => {
    const limited = constraintOf('egress-limits');
    expect(limited).toMatchObject({
      severity: 'Warning',
      effect: 'restrict',
      workloadSelector: { matchLabels: { app: 'api' } },
      source: { kind: 'Sidecar', apiVersion: 'networking.istio.io/v1' },
    });
    expect(renderFullText(limited.summary)).toBe(
      'Istio Sidecar "egress-limits" limits the services pods app=api in shop can reach to * in shop, * in istio-system, ledger.payments.svc.cluster.local in payments; other outbound traffic is blocked (REGISTRY_ONLY)',
    );
    expect(constraintOf('ingress-only')).toMatchObject({ severity: 'Info', effect: 'restrict' });
    const meshDefault = constraintOf('mesh-default');
    expect(meshDefault).toMatchObject({ severity: 'Warning', scope: { kind: 'cluster' } });
  });

  it('gives kubectl steps with group-qualified resources', () => {
    const commands = ['deny-admin', 'default', 'egress-limits'].map((name) =>
      renderFullText(constraintOf(name).remediation.steps[0].command ?? []),
    );
    expect(commands).toEqual([
      'kubectl get authorizationpolicy.security.istio.io deny-admin -n shop -o yaml',
      'kubectl get peerauthentication.security.istio.io default -n istio-system -o yaml',
      'kubectl get sidecar.networking.istio.io egress-limits -n shop -o yaml',
    ]);
    expect(constraintOf('deny-admin').remediation.steps[1]).toMatchObject({
      type: 'manual',
      requiresPrivilege: 'namespace-admin',
      automated: false,
    });
  });

  it('hides foreign names, namespaces, principals, paths, ports, hosts and IPs at summary level', () => {
    const viewer = { level: 'summary', namespace: 'some-other-ns' } as const;
    const leaks = [
      'deny-admin',
      'api-callers',
      'global-deny-legacy',
      'egress-limits',
      'metrics-scrapers',
      'shop',
      'payments',
      'istio-system',
      'legacy',
      'frontend',
      'billing',
      'monitoring',
      '/admin',
      '/api',
      '8443',
      '5432',
      '15090',
      '10.8.',
      'cluster.local',
      'issuer.example.com',
      'app=',
    ];
    const names = [
      'deny-admin',
      'api-callers',
      'global-deny-legacy',
      'egress-limits',
      'metrics-scrapers',
      'default',
    ];
    expectNoLeaks(
      names.map((name) => constraintOf(name)),
      viewer,
      leaks,
    );
    const full = ['api-callers', 'global-deny-legacy', 'egress-limits']
      .map((name) => renderConstraintTexts(constraintOf(name), { level: 'full', namespace: 'some-other-ns' }))
      .join('\n');
    for (const expected of [
      'api-callers',
      'global-deny-legacy',
      'istio-system',
      'billing',
      'payments',
      'legacy',
      '/api/*',
      '5432',
      '10.8.0.0/16',
      'ledger.payments.svc.cluster.local',
    ])
      expect(full).toContain(expected);
  });

  it('lets a viewer of the namespace see its own names but no details at summary', () => {
    const rendered = renderText(constraintOf('api-callers').summary, { level: 'summary', namespace: 'shop' });
    expect(rendered).toContain('"api-callers"');
    expect(rendered).toContain('service account frontend in shop');
    expect(rendered).toContain('service account redacted in redacted');
    expect(rendered).not.toMatch(/\/api|10\.8|GET/);
  });

  it.each([
    'bad-action',
    'bad-selector',
    'bad-paths',
    'custom-no-provider',
    'bad-mode',
    'bad-hosts',
    'no-namespace',
  ])('rejects malformed %s with a parse error', (name) => {
    expect(() => constraintOf(name)).toThrow(AdapterParseError);
  });

  it('is routed the three Istio kinds and the Linkerd kinds, by exact group', () => {
    const registry = new AdapterRegistry();
    expect(registry.adapterFor('security.istio.io', 'AuthorizationPolicy')?.name).toBe('mesh');
    expect(registry.adapterFor('security.istio.io', 'PeerAuthentication')?.name).toBe('mesh');
    expect(registry.adapterFor('networking.istio.io', 'Sidecar')?.name).toBe('mesh');
    expect(registry.adapterFor('networking.istio.io', 'VirtualService')).toBeUndefined();
    expect(registry.adapterFor('policy.linkerd.io', 'AuthorizationPolicy')?.name).toBe('mesh');
    expect(registry.adapterFor('policy.linkerd.io', 'HTTPRoute')).toBeUndefined();
  });
});
