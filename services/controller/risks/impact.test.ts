import type { KubernetesObject } from '../../model/kubernetes';
import { indexObjects } from '../../../test/support/controller-fixtures';
import { ownerLabelKyvernoPolicy, requiredLabelPolicy } from '../../../test/support/required-label-policy';
import { computeImpact, ImpactRequestError, proposedObjectsOf } from './impact';
import { RequestBudget } from '../check/request-budget';
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

const kyvernoWarnPolicy = ownerLabelKyvernoPolicy('blog');

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

  it('stays within the request CPU budget, counting the workloads it did not reach', async () => {
    const workloads = ['a', 'b', 'c', 'd', 'e'].map((name) => deployment('shop', name));
    const { dependencies } = await cluster(workloads);
    // A CPU clock that advances 4 ms at each reading, so each step (the proposals, then one slice of
    // one workload with a zero slice budget) counts 4 ms of a 10 ms budget.
    let cpu = 0;
    const budget = new RequestBudget(10, () => (cpu += 4));
    const policy = labelPolicy('team-required', 'team', ['Deny']);
    const report = await computeImpact({ ...dependencies, sliceBudgetMs: 0 }, policy, { budget });
    // Proposals (4 ms), a (8 ms), b (12 ms): spent; c, d and e are left.
    expect(report.evaluatedWorkloads).toBe(2);
    expect(report.unevaluatedWorkloads).toBe(3);
    expect(report.incomplete).toMatch(/CPU budget of 10 ms/);
    expect(report.newlyRejectedCount).toBe(2);
    expect(report.namespaces[0]?.workloads.map((workload) => workload.name)).toEqual(['a', 'b']);

    // Unbounded (the CLI offline), every workload is evaluated and nothing is said to be left.
    const whole = await computeImpact(dependencies, policy);
    expect(whole.evaluatedWorkloads).toBe(5);
    expect(whole.unevaluatedWorkloads).toBeUndefined();
    expect(whole.incomplete).toBeUndefined();
  });

  it('evaluates nothing when the budget is spent before the proposals are read', async () => {
    const { dependencies } = await cluster([deployment('shop', 'web')]);
    const spent = new RequestBudget(0);
    const report = await computeImpact(dependencies, labelPolicy('team-required', 'team', ['Deny']), {
      budget: spent,
    });
    expect(report.evaluatedWorkloads).toBe(0);
    expect(report.namespaces).toEqual([]);
    expect(report.proposed.every((entry) => entry.problem === spent.reason)).toBe(true);
    expect(report.incomplete).toBe(spent.reason);
  });
});
