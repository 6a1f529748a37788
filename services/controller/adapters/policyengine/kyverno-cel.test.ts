import path from 'node:path';
import { AdapterParseError } from '../../../model/constraint';
import { readableTextViolations } from '../../../model/summary-rules';
import { renderFullText, renderText } from '../../../model/text';
import { scopeAdmits } from '../../index/constraint-index';
import { renderConstraintTexts } from '../../../../test/support/render-constraint';
import { AdapterRegistry } from '../registry';
import { policyEngineAdapter } from './policyengine';
import { fixtureConstraints } from '../../../../test/support/adapter-fixtures';

const constraintsOf = fixtureConstraints(
  policyEngineAdapter.toConstraints,
  path.join(__dirname, 'fixtures/kyverno-cel.yaml'),
);
const only = (name: string) => {
  const [constraint, ...rest] = constraintsOf(name);
  expect(rest).toHaveLength(0);
  return constraint;
};
const VALID = [
  'disallow-host-path',
  'check-deprecated-apis',
  'verify-signatures',
  'add-default-resources',
  'default-network-policy',
  'delete-old-jobs',
  'clean-bare-pods',
  'expire-previews',
];

describe("policyengine adapter (Kyverno's CEL and cleanup policies)", () => {
  it('makes a Deny ValidatingPolicy Critical, its autogen controllers targeted, scoped by namespace labels', () => {
    const constraint = only('disallow-host-path');
    expect(constraint).toMatchObject({
      name: 'disallow-host-path',
      type: 'Admission',
      severity: 'Critical',
      effect: 'deny',
      adapter: 'policyengine',
      source: { kind: 'ValidatingPolicy', apiVersion: 'policies.kyverno.io/v1alpha1', namespace: null },
    });
    expect(constraint.resourceTargets).toEqual([
      { group: '', resource: 'pods' },
      { group: 'apps', resource: 'deployments' },
      { group: 'batch', resource: 'cronjobs' },
    ]);
    expect(scopeAdmits(constraint.scope, 'shop', { env: 'prod' })).toBe(true);
    expect(scopeAdmits(constraint.scope, 'sandbox', { env: 'dev' })).toBe(false);
    expect(renderFullText(constraint.summary)).toBe(
      'Kyverno ValidatingPolicy "disallow-host-path" rejects CREATE, UPDATE requests for pods, apps/deployments and batch/cronjobs that fail it: hostPath volumes are not allowed',
    );
  });

  it('makes Audit a Warning, and counts checks when the policy has no messages', () => {
    const constraint = only('check-deprecated-apis');
    expect([constraint.severity, constraint.effect]).toEqual(['Warning', 'audit']);
    expect(renderFullText(constraint.summary)).toContain('that fail it (2 checks)');
  });

  it('reads ImageValidatingPolicy image references and object selector', () => {
    const constraint = only('verify-signatures');
    expect(constraint).toMatchObject({
      severity: 'Critical',
      workloadSelector: { matchLabels: { signed: 'required' } },
    });
    expect(renderFullText(constraint.summary)).toContain(
      'whose images matching registry.example.com/* fail its signature',
    );
  });

  it('makes mutating and generating policies Info mutations', () => {
    expect(only('add-default-resources')).toMatchObject({
      severity: 'Info',
      effect: 'mutate',
      tags: ['kyverno', 'cel', 'mutate'],
    });
    expect(only('default-network-policy')).toMatchObject({
      severity: 'Info',
      effect: 'mutate',
      tags: ['kyverno', 'cel', 'generate'],
    });
  });

  it('makes deleting and cleanup policies Warnings with effect delete that name their schedule', () => {
    const deleting = only('delete-old-jobs');
    expect([deleting.severity, deleting.effect]).toEqual(['Warning', 'delete']);
    expect(renderFullText(deleting.summary)).toBe(
      'Kyverno DeletingPolicy "delete-old-jobs" deletes existing batch/jobs that match its conditions, on schedule "0 * * * *"',
    );
    const cleanup = only('clean-bare-pods');
    expect(cleanup).toMatchObject({
      severity: 'Warning',
      effect: 'delete',
      scope: { kind: 'cluster', excludedNamespaces: ['kube-system'] },
      resourceTargets: [{ group: '', resource: 'pods' }],
    });
    expect(renderFullText(cleanup.summary)).toContain(
      'deletes existing Pods that match its conditions, on schedule "*/5 * * * *"',
    );
    const namespaced = only('expire-previews');
    expect(namespaced).toMatchObject({
      scope: { kind: 'namespace', namespace: 'shop' },
      workloadSelector: { matchLabels: { preview: 'true' } },
    });
    expect(renderText(namespaced.summary, { level: 'summary', namespace: 'shop' })).toBe(
      'Kyverno CleanupPolicy "expire-previews" deletes existing selected objects that match its conditions, on its schedule',
    );
  });

  it('writes readable lines and hides names, messages, references and schedules at summary', () => {
    const viewer = { level: 'summary', namespace: 'elsewhere' } as const;
    const leaks = [
      ...VALID,
      'hostPath',
      'registry.example.com',
      'pods',
      'cronjobs',
      '* * *',
      '@daily',
      'kube-system',
    ];
    for (const name of VALID)
      for (const constraint of constraintsOf(name)) {
        const rendered = renderConstraintTexts(constraint, viewer);
        for (const leak of leaks) expect(rendered).not.toContain(leak);
        for (const level of ['summary', 'full'] as const) {
          const line = renderText(constraint.summary, { level, namespace: 'elsewhere' });
          expect(readableTextViolations(line)).toEqual([]);
        }
      }
  });

  it.each(['no-actions', 'no-schedule', 'bad-autogen'])('rejects malformed %s with a parse error', (name) => {
    expect(() => constraintsOf(name)).toThrow(AdapterParseError);
  });

  it('is routed every new kind by exact group and kind', () => {
    const registry = new AdapterRegistry();
    for (const kind of [
      'ValidatingPolicy',
      'ImageValidatingPolicy',
      'MutatingPolicy',
      'GeneratingPolicy',
      'DeletingPolicy',
    ])
      expect(registry.adapterFor('policies.kyverno.io', kind)?.name).toBe('policyengine');
    expect(registry.adapterFor('kyverno.io', 'ClusterCleanupPolicy')?.name).toBe('policyengine');
    expect(registry.adapterFor('kyverno.io', 'CleanupPolicy')?.name).toBe('policyengine');
    expect(registry.adapterFor('policies.kyverno.io', 'PolicyException')).toBeUndefined();
  });
});
