import path from 'node:path';
import { AdapterParseError } from '../../../model/constraint';
import { renderFullText, renderText } from '../../../model/text';
import { fixture, loadFixtureObjects } from '../../../../test/support/yaml-fixtures';
import { networkPolicyToConstraints } from './networkpolicy';

const fixtures = loadFixtureObjects(path.join(__dirname, 'fixtures/networkpolicies.yaml'));
const constraintsOf = (name: string) => networkPolicyToConstraints(fixture(fixtures, name));

describe('networkpolicy adapter', () => {
  it('turns a rule-less ingress policy into a Warning deny constraint named after the policy', () => {
    const [constraint, ...rest] = constraintsOf('deny-ingress');
    expect(rest).toHaveLength(0);
    expect(constraint).toMatchObject({
      name: 'deny-ingress',
      type: 'NetworkIngress',
      severity: 'Warning',
      effect: 'deny',
      scope: { kind: 'namespace', namespace: 'shop' },
      workloadSelector: {},
      source: {
        kind: 'NetworkPolicy',
        apiVersion: 'networking.k8s.io/v1',
        name: 'deny-ingress',
        namespace: 'shop',
      },
    });
    expect(constraint.tags).toEqual(['network', 'ingress', 'default-deny']);
    expect(renderFullText(constraint.summary)).toBe(
      'NetworkPolicy "deny-ingress" denies all ingress traffic for all pods in shop',
    );
  });

  it('splits a two-direction policy into <name>/ingress (restrict) and <name>/egress (deny)', () => {
    const constraints = constraintsOf('api-both');
    expect(constraints.map((constraint) => [constraint.name, constraint.type, constraint.effect])).toEqual([
      ['api-both/ingress', 'NetworkIngress', 'restrict'],
      ['api-both/egress', 'NetworkEgress', 'deny'],
    ]);
    expect(constraints[0].workloadSelector).toEqual({ matchLabels: { app: 'api' } });
    expect(renderFullText(constraints[0].summary)).toBe(
      'NetworkPolicy "api-both" allows ingress for pods app=api only from: pods app=frontend in shop or namespace payments or 10.20.0.0/16 except 10.20.5.0/24 on TCP/8443, TCP/9000-9100',
    );
  });

  it('hides ports, CIDRs, selectors and other namespaces at summary level, shows them at detailed', () => {
    const [ingress] = constraintsOf('api-both');
    const summary = renderText(ingress.summary, { level: 'summary', namespace: 'shop' });
    expect(summary).not.toMatch(/8443|10\.20|payments|app=/);
    expect(summary).toContain('"api-both"');
    const detailed = renderText(ingress.summary, { level: 'detailed', namespace: 'shop' });
    expect(detailed).toContain('TCP/8443');
    expect(detailed).not.toContain('payments');
    expect(renderText(ingress.summary, { level: 'full', namespace: 'shop' })).toContain('namespace payments');
  });

  it('implies Ingress, and Egress when egress rules exist, if policyTypes is absent', () => {
    expect(constraintsOf('implied-types').map((constraint) => [constraint.name, constraint.effect])).toEqual([
      ['implied-types/ingress', 'restrict'],
      ['implied-types/egress', 'restrict'],
    ]);
    expect(
      constraintsOf('implied-ingress-only').map((constraint) => [constraint.name, constraint.effect]),
    ).toEqual([['implied-ingress-only', 'deny']]);
  });

  it('gives every constraint a kubectl step and a manual step for the namespace owner', () => {
    const [constraint] = constraintsOf('deny-ingress');
    const [inspect, ask] = constraint.remediation.steps;
    expect(inspect.type).toBe('cli');
    expect(renderFullText(inspect.command ?? [])).toBe(
      'kubectl get networkpolicy deny-ingress -n shop -o yaml',
    );
    expect(ask).toMatchObject({ type: 'manual', requiresPrivilege: 'namespace-admin', automated: false });
  });

  it.each(['bad-selector', 'bad-policy-type', 'bad-peer', 'no-spec'])(
    'rejects malformed %s with a parse error',
    (name) => {
      expect(() => constraintsOf(name)).toThrow(AdapterParseError);
    },
  );

  it('rejects a protocol that is not a string (an object whose toString is not callable crashed)', () => {
    const policy = structuredClone(fixture(fixtures, 'api-both'));
    const spec = policy.spec as { ingress: Array<{ ports: Array<Record<string, unknown>> }> };
    spec.ingress[0].ports[0].protocol = { toString: '' };
    expect(() => networkPolicyToConstraints(policy)).toThrow(AdapterParseError);
  });
});
