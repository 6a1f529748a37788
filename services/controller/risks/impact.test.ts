import type { KubernetesObject } from '../../model/kubernetes';
import { indexObjects } from '../../../test/support/controller-fixtures';
import { requiredLabelPolicy } from '../../../test/support/required-label-policy';
import { computeImpact, ImpactRequestError, proposedObjectsOf } from './impact';
import { RiskTracker } from './risk-tracker';

// `POST /api/v1/impact` (issue 35): proposed policies evaluated on a copy-on-write overlay of the
// index, against the running workloads; the index itself is never written.

function labelPolicy(name: string, label: string, actions: string[]): KubernetesObject[] {
  return requiredLabelPolicy({ name, label, actions, bindingUid: `uid-binding-${name}` });
}

function deployment(namespace: string, name: string, labels: Record<string, string> = {}): KubernetesObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'web', image: 'nginx' }] },
      },
    },
  };
}

const kyvernoWarnPolicy: KubernetesObject = {
  apiVersion: 'kyverno.io/v1',
  kind: 'Policy',
  metadata: { name: 'owner-label', namespace: 'blog' },
  spec: {
    validationFailureAction: 'Audit',
    rules: [
      {
        name: 'owner',
        match: { any: [{ resources: { kinds: ['Deployment'] } }] },
        validate: {
          message: 'an owner label is required',
          pattern: { metadata: { labels: { owner: '?*' } } },
        },
      },
    ],
  },
};

async function cluster(objects: KubernetesObject[]) {
  const indexed = indexObjects([
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'blog' } },
  ]);
  const tracker = new RiskTracker(indexed.index, {
    debounceMs: 0,
    sliceBudgetMs: 1,
    maxWorkloadsPerSlice: 8,
  });
  indexed.ingestor.onChange((object, removed) => tracker.observe(object, removed));
  for (const object of objects) indexed.ingestor.upsert(object);
  tracker.start();
  await tracker.idle();
  const dependencies = {
    index: indexed.index,
    ingestor: indexed.ingestor,
    workloads: (namespaces?: ReadonlySet<string>) => tracker.keptWorkloads(namespaces),
    objectOf: tracker.objectOf.bind(tracker),
    yieldToRequests: () => new Promise<void>((resolve) => setImmediate(resolve)),
  };
  return { ...indexed, tracker, dependencies };
}

describe('impact of proposed policies', () => {
  it('names the workloads a new policy would reject or warn about, by namespace, without changing the index', async () => {
    const { dependencies, index, tracker } = await cluster([
      deployment('shop', 'web'),
      deployment('shop', 'labelled', { team: 'shop' }),
      deployment('blog', 'site'),
    ]);
    const revision = index.revision;
    const report = await computeImpact(dependencies, [
      ...labelPolicy('team-required', 'team', ['Deny']),
      kyvernoWarnPolicy,
    ]);
    expect(report.proposed.map((entry) => [entry.kind, entry.replaces, entry.problem])).toEqual([
      ['ValidatingAdmissionPolicy', false, undefined],
      ['ValidatingAdmissionPolicyBinding', false, undefined],
      ['Policy', false, undefined],
    ]);
    expect(report.newlyRejectedCount).toBe(2);
    expect(
      report.namespaces.map(({ namespace, workloads }) => [
        namespace,
        workloads.map((w) => [w.name, w.change]),
      ]),
    ).toEqual([
      ['blog', [['site', 'newly-rejected']]],
      ['shop', [['web', 'newly-rejected']]],
    ]);
    const [site] = report.namespaces[0]?.workloads ?? [];
    expect(site?.findings.map((finding) => finding.name)).toEqual(['team-required']);
    expect(site?.findings[0]?.evidence.length).toBeGreaterThan(0);
    // Nothing applied.
    expect(index.revision).toBe(revision);
    expect(index.constraintsForNamespace('shop')).toEqual([]);
    expect(tracker.atRiskCount('shop')).toBe(0);
  });

  it('compares a changed version of an existing policy with the one in force', async () => {
    const { dependencies, index } = await cluster([
      ...labelPolicy('team-required', 'team', ['Warn']),
      deployment('shop', 'web'),
      deployment('shop', 'labelled', { team: 'shop' }),
    ]);
    const tightened = await computeImpact(dependencies, labelPolicy('team-required', 'team', ['Deny']));
    expect(tightened.proposed.every((entry) => entry.replaces)).toBe(true);
    expect(tightened.namespaces).toEqual([
      { namespace: 'shop', workloads: [expect.objectContaining({ name: 'web', change: 'newly-rejected' })] },
    ]);

    // Once in force, relaxing it frees the workload.
    for (const object of labelPolicy('team-required', 'team', ['Deny'])) dependencies.ingestor.upsert(object);
    const relaxed = await computeImpact(dependencies, labelPolicy('team-required', 'team', ['Warn']));
    expect(relaxed.noLongerRejectedCount).toBe(1);
    expect(relaxed.namespaces[0]?.workloads[0]).toMatchObject({ name: 'web', change: 'no-longer-rejected' });
    expect(index.constraintsForNamespace('shop').every((constraint) => constraint.effect === 'deny')).toBe(
      true,
    );
  });

  it('says which objects it cannot read, and refuses malformed requests', async () => {
    const { dependencies } = await cluster([deployment('shop', 'web')]);
    const report = await computeImpact(dependencies, [deployment('shop', 'other')]);
    expect(report.proposed[0]?.problem).toMatch(/not a policy object/);
    expect(report.namespaces).toEqual([]);
    expect(() => proposedObjectsOf([])).toThrow(ImpactRequestError);
    expect(() => proposedObjectsOf({ objects: [] })).toThrow(/at least one/);
    expect(() => proposedObjectsOf({ objects: [{ kind: 'Policy' }] })).toThrow(/objects\[0\]/);
    expect(proposedObjectsOf(kyvernoWarnPolicy)).toEqual([kyvernoWarnPolicy]);
  });
});
