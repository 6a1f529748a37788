import path from 'node:path';
import { AdapterParseError } from '../../../model/constraint';
import { renderFullText, renderText } from '../../../model/text';
import { fixture, loadFixtureObjects } from '../../../../test/support/yaml-fixtures';
import { renderConstraintTexts, testAdapterContext } from '../../../../test/support/render-constraint';
import { webhookConfigurationToConstraints } from './webhookconfig';

const fixtures = loadFixtureObjects(path.join(__dirname, 'fixtures/webhookconfigurations.yaml'));
const constraintsOf = (name: string) =>
  webhookConfigurationToConstraints(fixture(fixtures, name), testAdapterContext());

describe('webhookconfig adapter', () => {
  it('lists the rules as the API server matches them and keeps the summary whole (issue 31)', () => {
    const [constraint] = webhookConfigurationToConstraints(
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: 'image-signature-check' },
        webhooks: [
          {
            name: 'images.security.example.com',
            failurePolicy: 'Fail',
            clientConfig: {
              service: { name: 'image-checker', namespace: 'security', path: '/verify', port: 443 },
            },
            rules: [
              {
                apiGroups: ['', 'apps'],
                apiVersions: ['v1'],
                operations: ['CREATE', 'UPDATE'],
                resources: ['pods', 'deployments', 'statefulsets', 'widgets'],
              },
            ],
          },
        ],
      },
      testAdapterContext([]),
    );
    const summary = renderFullText(constraint.summary);
    // Not apps/pods nor core deployments; an unknown resource is kept in both groups.
    expect(summary).toContain(
      'requests for pods, widgets, apps/deployments, apps/statefulsets, apps/widgets,',
    );
    expect(summary).toMatch(/; requests fail while it is unreachable$/);
    expect(summary.length).toBeLessThanOrEqual(300);
  });

  it('yields one constraint per webhook entry, named <configuration>/<webhook>', () => {
    const constraints = constraintsOf('policy-webhooks');
    expect(
      constraints.map((constraint) => [
        constraint.id,
        constraint.name,
        constraint.severity,
        constraint.effect,
      ]),
    ).toEqual([
      ['webhook:check.policy.example.com', 'policy-webhooks/check.policy.example.com', 'Warning', 'deny'],
      ['webhook:audit.policy.example.com', 'policy-webhooks/audit.policy.example.com', 'Info', 'deny'],
    ]);
    expect(constraints[0]).toMatchObject({
      type: 'Admission',
      adapter: 'webhookconfig',
      source: {
        kind: 'ValidatingWebhookConfiguration',
        apiVersion: 'admissionregistration.k8s.io/v1',
        name: 'policy-webhooks',
        namespace: null,
      },
    });
    expect(constraints.map((constraint) => constraint.tags)).toEqual([
      ['admission', 'webhook', 'validating', 'fail-closed'],
      ['admission', 'webhook', 'validating', 'fail-open'],
    ]);
  });

  it('names a single-entry configuration <configuration>/<webhook> too, and treats unset failurePolicy as Fail', () => {
    const [constraint, ...rest] = constraintsOf('unset-policy');
    expect(rest).toHaveLength(0);
    expect(constraint.name).toBe('unset-policy/defaults.example.com');
    expect(constraint.severity).toBe('Warning');
    expect(renderFullText(constraint.summary)).toBe(
      'ValidatingWebhookConfiguration "unset-policy" webhook "defaults.example.com" can reject CREATE requests for configmaps, served by service webhooks/defaulter:443; requests fail while it is unreachable',
    );
  });

  it('takes scope from namespaceSelector, workloads from objectSelector and targets from rules', () => {
    const [check, audit] = constraintsOf('policy-webhooks');
    expect(check.scope).toEqual({
      kind: 'cluster',
      namespaceSelector: { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] },
    });
    expect(check.workloadSelector).toEqual({ matchLabels: { app: 'web' } });
    // Subresources (deployments/scale, pods/exec) are skipped: they never see a whole object.
    expect(check.resourceTargets).toEqual([
      { group: 'apps', resource: 'deployments' },
      { group: '', resource: 'pods' },
    ]);
    expect(audit.scope).toEqual({ kind: 'cluster' });
    expect(audit.workloadSelector).toBeUndefined();
    // All resources with all subresources covers the whole objects.
    expect(audit.resourceTargets).toEqual([{ group: '*', resource: '*' }]);
    expect(renderFullText(check.summary)).toBe(
      'ValidatingWebhookConfiguration "policy-webhooks" webhook "check.policy.example.com" can reject CREATE, UPDATE, CONNECT requests for apps/deployments, pods, served by service gatekeeper-system/gatekeeper-webhook-service:8443/v1/admit; requests fail while it is unreachable',
    );
    expect(renderFullText(audit.summary)).toBe(
      'ValidatingWebhookConfiguration "policy-webhooks" webhook "audit.policy.example.com" can reject all requests for all resources, served by https://audit.example.com:9443/review; skipped while it is unreachable',
    );
  });

  it('turns mutating entries into mutate constraints, Info when fail-open and Warning when fail-closed', () => {
    const constraints = constraintsOf('sidecar-injector');
    expect(
      constraints.map((constraint) => [constraint.name, constraint.severity, constraint.effect]),
    ).toEqual([
      ['sidecar-injector/inject.sidecar.example.com', 'Info', 'mutate'],
      ['sidecar-injector/label.sidecar.example.com', 'Warning', 'mutate'],
    ]);
    expect(constraints[1].resourceTargets).toEqual([
      { group: 'apps', resource: '*' },
      { group: 'batch', resource: '*' },
    ]);
    expect(renderFullText(constraints[0].summary)).toContain(
      'webhook "inject.sidecar.example.com" can change CREATE requests for pods',
    );
    expect(renderFullText(constraints[0].remediationHint)).toMatch(
      /^expect webhook "inject\.sidecar\.example\.com" to change/,
    );
    expect(constraints[0].tags).toEqual(['admission', 'webhook', 'mutating', 'fail-open']);
  });

  it('keeps a subresource-only webhook but gives it no resource targets', () => {
    const [constraint] = constraintsOf('exec-guard');
    expect(constraint.resourceTargets).toEqual([]);
    expect(renderFullText(constraint.summary)).toContain('intercepts only subresource requests');
  });

  it('treats a rule without operations as matching nothing', () => {
    const [constraint] = constraintsOf('no-operations');
    expect(constraint.resourceTargets).toEqual([]);
    expect(renderFullText(constraint.summary)).toContain('webhook "idle.example.com" matches no requests');
  });

  it('skips our own webhook configuration and configurations without entries', () => {
    expect(constraintsOf('forewarn-webhook')).toEqual([]);
    expect(constraintsOf('no-webhooks')).toEqual([]);
  });

  it('gives a kubectl step for the configuration and a manual step for the cluster admins', () => {
    const [check] = constraintsOf('policy-webhooks');
    const [inspect, ask] = check.remediation.steps;
    expect(inspect).toMatchObject({ type: 'cli', requiresPrivilege: 'developer', automated: true });
    expect(renderFullText(inspect.command ?? [])).toBe(
      'kubectl get validatingwebhookconfiguration policy-webhooks -o yaml',
    );
    expect(ask).toMatchObject({ type: 'manual', requiresPrivilege: 'cluster-admin', automated: false });
    const [, mutating] = constraintsOf('sidecar-injector');
    expect(renderFullText(mutating.remediation.steps[0].command ?? [])).toBe(
      'kubectl get mutatingwebhookconfiguration sidecar-injector -o yaml',
    );
  });

  it('hides cluster-scoped names, services, hosts, ports and rule details at summary level', () => {
    const viewer = { level: 'summary', namespace: 'some-other-ns' } as const;
    for (const name of ['policy-webhooks', 'sidecar-injector']) {
      for (const constraint of constraintsOf(name)) {
        const rendered = renderConstraintTexts(constraint, viewer);
        expect(rendered).not.toMatch(
          /policy-webhooks|sidecar-injector|example\.com|gatekeeper|injector|labeler|mesh-system|8443|9443|443|\/v1\/admit|\/inject|deployments|pods/,
        );
      }
    }
    const [check] = constraintsOf('policy-webhooks');
    expect(renderText(check.summary, viewer)).toBe(
      'ValidatingWebhookConfiguration "redacted" webhook "redacted" can reject CREATE, UPDATE, CONNECT requests for matching resources, served by service redacted/redacted; requests fail while it is unreachable',
    );
  });

  it('shows ports and rule details at detailed, the foreign service name only at full', () => {
    const [check] = constraintsOf('policy-webhooks');
    const detailed = renderText(check.summary, { level: 'detailed', namespace: 'some-other-ns' });
    expect(detailed).toContain('apps/deployments, pods');
    expect(detailed).toContain('service redacted/redacted:8443/v1/admit');
    // A viewer in the service's namespace sees its name, but no port at summary level.
    expect(renderText(check.summary, { level: 'summary', namespace: 'gatekeeper-system' })).toContain(
      'service gatekeeper-system/gatekeeper-webhook-service;',
    );
    const full = renderConstraintTexts(check, { level: 'full', namespace: 'some-other-ns' });
    for (const expected of [
      'policy-webhooks/check.policy.example.com',
      'gatekeeper-system/gatekeeper-webhook-service:8443/v1/admit',
      'kubectl get validatingwebhookconfiguration policy-webhooks -o yaml',
    ])
      expect(full).toContain(expected);
  });

  it.each([
    ['bad-failure-policy', /webhooks\[0\]\.failurePolicy is "Sometimes"/],
    ['no-client-config', /webhooks\[0\]\.clientConfig needs a service or a url/],
    ['unnamed-entry', /webhooks\[0\]\.name/],
    ['webhooks-not-a-list', /webhooks must be a list/],
    ['bad-operation', /webhooks\[0\]\.rules\[0\]\.operations\[0\] is "PATCH"/],
    ['bad-namespace-selector', /webhooks\[0\]\.namespaceSelector/],
    ['duplicate-entries', /two entries named "twice\.example\.com"/],
    ['string-port', /webhooks\[0\]\.clientConfig\.service\.port must be an integer/],
    ['resources-not-a-list', /webhooks\[0\]\.rules\[0\]\.resources must be a list/],
  ])('rejects malformed %s with a parse error naming the field', (name, message) => {
    expect(() => constraintsOf(name)).toThrow(AdapterParseError);
    expect(() => constraintsOf(name)).toThrow(message);
  });

  it('rejects a configuration without a name', () => {
    const nameless = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: {},
    };
    expect(() => webhookConfigurationToConstraints(nameless, testAdapterContext())).toThrow(
      AdapterParseError,
    );
  });
});
