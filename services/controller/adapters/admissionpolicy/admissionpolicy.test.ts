import path from 'node:path';
import { AdapterParseError } from '../../../model/constraint';
import { renderFullText, renderText } from '../../../model/text';
import { fixture, loadFixtureObjects } from '../../../../test/support/yaml-fixtures';
import { renderConstraintTexts, testAdapterContext } from '../../../../test/support/render-constraint';
import { admissionPolicyAdapter, admissionPolicyToConstraints } from './admissionpolicy';

const fixtures = loadFixtureObjects(path.join(__dirname, 'fixtures/admissionpolicies.yaml'));
const context = testAdapterContext([...fixtures.values()]);
const constraintsOf = (name: string) => admissionPolicyToConstraints(fixture(fixtures, name), context);
const onlyConstraintOf = (name: string) => {
  const constraints = constraintsOf(name);
  expect(constraints).toHaveLength(1);
  return constraints[0];
};

describe('admissionpolicy adapter', () => {
  it('retains both kinds so bindings are evaluated again when their policy changes', () => {
    expect(admissionPolicyAdapter.retainedKinds).toEqual([
      { group: 'admissionregistration.k8s.io', kind: 'ValidatingAdmissionPolicy' },
      { group: 'admissionregistration.k8s.io', kind: 'ValidatingAdmissionPolicyBinding' },
    ]);
  });

  it('yields nothing for a policy alone', () => {
    expect(constraintsOf('require-labels')).toEqual([]);
    expect(constraintsOf('no-latest')).toEqual([]);
  });

  it.each([
    ['require-labels-deny', 'Critical', 'deny', ['deny'], 'rejects'],
    ['require-labels-warn', 'Warning', 'warn', ['warn', 'audit'], 'warns about'],
    ['require-labels-audit', 'Info', 'audit', ['audit'], 'audits'],
  ])('grades binding %s as %s with effect %s', (name, severity, effect, actionTags, verb) => {
    const constraint = onlyConstraintOf(name);
    expect(constraint).toMatchObject({
      id: 'binding',
      name,
      type: 'Admission',
      severity,
      effect,
      adapter: 'admissionpolicy',
      source: {
        kind: 'ValidatingAdmissionPolicyBinding',
        apiVersion: 'admissionregistration.k8s.io/v1',
        name,
        namespace: null,
      },
    });
    expect(constraint.tags).toEqual(['admission', 'admission-policy', ...actionTags]);
    expect(renderFullText(constraint.summary)).toBe(
      `ValidatingAdmissionPolicyBinding "${name}" ${verb} CREATE, UPDATE requests for apps/deployments, apps/statefulsets, pods that fail ValidatingAdmissionPolicy "require-labels": every workload needs a team label; the owner label must be an e-mail address`,
    );
  });

  it('takes scope and resource targets from the policy, subresources skipped', () => {
    const constraint = onlyConstraintOf('require-labels-deny');
    expect(constraint.scope).toEqual({
      kind: 'cluster',
      namespaceSelector: { matchLabels: { env: 'prod' } },
    });
    expect(constraint.workloadSelector).toBeUndefined();
    expect(constraint.resourceTargets).toEqual([
      { group: 'apps', resource: 'deployments' },
      { group: 'apps', resource: 'statefulsets' },
      { group: '', resource: 'pods' },
    ]);
    expect(renderFullText(constraint.remediationHint)).toBe(
      'change your object to pass ValidatingAdmissionPolicy "require-labels", or the API server rejects it',
    );
  });

  it("narrows the policy's match by the binding's matchResources", () => {
    const constraint = onlyConstraintOf('no-latest-narrowed');
    expect(constraint.scope).toEqual({
      kind: 'cluster',
      namespaceSelector: { matchLabels: { team: 'payments' } },
    });
    expect(constraint.workloadSelector).toEqual({ matchLabels: { app: 'api' } });
    expect(constraint.resourceTargets).toEqual([
      { group: 'apps', resource: 'deployments' },
      { group: 'batch', resource: 'deployments' },
    ]);
    expect(renderFullText(constraint.summary)).toBe(
      // batch/deployments: the rules' cross product, which no API server serves (issue 31).
      'ValidatingAdmissionPolicyBinding "no-latest-narrowed" rejects CREATE requests for apps/deployments that fail ValidatingAdmissionPolicy "no-latest" (1 validation rule)',
    );
  });

  it("removes the policy's excluded resources", () => {
    expect(onlyConstraintOf('no-latest-all').resourceTargets).toEqual([
      { group: 'apps', resource: 'deployments' },
      { group: 'apps', resource: 'jobs' },
      { group: 'batch', resource: 'deployments' },
    ]);
  });

  it('requires both namespace selectors when policy and binding disagree on a label', () => {
    expect(onlyConstraintOf('conflicting-labels').scope).toEqual({
      kind: 'cluster',
      namespaceSelector: {
        matchLabels: { env: 'prod', tier: 'web' },
        matchExpressions: [{ key: 'env', operator: 'In', values: ['dev'] }],
      },
    });
  });

  it('intercepts nothing when binding and policy share no operation', () => {
    const constraint = onlyConstraintOf('disjoint-operations');
    expect(constraint.resourceTargets).toEqual([]);
    expect(renderFullText(constraint.summary)).toMatch(
      /^ValidatingAdmissionPolicyBinding "disjoint-operations" rejects no requests that fail/,
    );
  });

  it('yields nothing for a binding whose policy is missing', () => {
    expect(constraintsOf('orphan-binding')).toEqual([]);
  });

  it('inspects policy and binding with kubectl and asks the cluster admins', () => {
    const [inspectPolicy, inspectBinding, ask] = onlyConstraintOf('require-labels-deny').remediation.steps;
    expect(renderFullText(inspectPolicy.command ?? [])).toBe(
      'kubectl get validatingadmissionpolicy require-labels -o yaml',
    );
    expect(renderFullText(inspectBinding.command ?? [])).toBe(
      'kubectl get validatingadmissionpolicybinding require-labels-deny -o yaml',
    );
    expect(inspectBinding).toMatchObject({ type: 'cli', requiresPrivilege: 'developer', automated: true });
    expect(ask).toMatchObject({ type: 'manual', requiresPrivilege: 'cluster-admin', automated: false });
  });

  it('hides cluster-scoped names, messages and rule details at summary level, shows them at full', () => {
    const constraint = onlyConstraintOf('no-latest-narrowed');
    const foreign = renderConstraintTexts(constraint, { level: 'summary', namespace: 'some-other-ns' });
    expect(foreign).not.toMatch(/no-latest|deployments|payments|app=api/);
    const messages = renderConstraintTexts(onlyConstraintOf('require-labels-deny'), {
      level: 'summary',
      namespace: 'some-other-ns',
    });
    expect(messages).not.toMatch(/require-labels|team label|e-mail|deployments|pods/);
    expect(
      renderText(onlyConstraintOf('require-labels-deny').summary, { level: 'summary', namespace: 'x' }),
    ).toBe(
      'ValidatingAdmissionPolicyBinding "redacted" rejects CREATE, UPDATE requests for matching resources that fail ValidatingAdmissionPolicy "redacted": validation messages hidden',
    );
    const full = renderConstraintTexts(constraint, { level: 'full', namespace: 'some-other-ns' });
    for (const expected of [
      'no-latest-narrowed',
      '"no-latest"',
      'apps/deployments',
      'kubectl get validatingadmissionpolicy no-latest -o yaml',
    ])
      expect(full).toContain(expected);
  });

  it.each([
    ['broken-policy', /spec\.validations\[0\]\.expression/],
    ['policy-bad-rules', /spec\.matchConstraints\.resourceRules must be a list/],
    ['no-policy-name', /spec\.policyName/],
    ['bad-action', /spec\.validationActions\[0\] is "Block"/],
    ['no-actions', /spec\.validationActions must name/],
    ['bad-match-resources', /spec\.matchResources\.namespaceSelector/],
    [
      'binding-of-broken-policy',
      /bound ValidatingAdmissionPolicy "broken-policy": spec\.validations\[0\]\.expression/,
    ],
    ['binding-no-spec', /no spec/],
  ])('rejects malformed %s with a parse error naming the field', (name, message) => {
    expect(() => constraintsOf(name)).toThrow(AdapterParseError);
    expect(() => constraintsOf(name)).toThrow(message);
  });

  it('treats a lookup result that is not an object as a missing policy', () => {
    const odd = { ...testAdapterContext(), lookup: () => 'not an object' };
    expect(admissionPolicyToConstraints(fixture(fixtures, 'require-labels-deny'), odd)).toEqual([]);
  });
});
