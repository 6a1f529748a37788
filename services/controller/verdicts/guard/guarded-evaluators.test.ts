import type { KubernetesObject } from '../../../model/kubernetes';
import { renderFullText } from '../../../model/text';
import { indexObjects } from '../../../../test/support/controller-fixtures';
import { verdictIndexOf } from '../admission-check';
import { evaluateVerdicts } from '../evaluate';
import { DEFAULT_EVALUATION_LIMITS } from './evaluation-guard';

// Every evaluator outside CEL checks the guard in the loops whose length the admitted object decides
// (Kyverno patterns, Pod Security checks, quota and LimitRange over containers): past the deadline the
// constraint being evaluated and every one after it are `unknown` with the guard's reason, and the
// answer still comes back.

const namespace: KubernetesObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } };

const kyvernoPolicy: KubernetesObject = {
  apiVersion: 'kyverno.io/v1',
  kind: 'ClusterPolicy',
  metadata: { name: 'trusted-registries' },
  spec: {
    validationFailureAction: 'Enforce',
    rules: [
      {
        name: 'images',
        match: { any: [{ resources: { kinds: ['Pod'] } }] },
        validate: {
          message: 'images come from the corporate registry',
          pattern: {
            spec: { containers: [{ image: 'registry.corp.example/* | *.dkr.ecr.*.amazonaws.com/*' }] },
          },
        },
      },
    ],
  },
};

const quota: KubernetesObject = {
  apiVersion: 'v1',
  kind: 'ResourceQuota',
  metadata: { name: 'compute', namespace: 'team' },
  spec: { hard: { 'requests.cpu': '4' } },
  status: { hard: { 'requests.cpu': '4' }, used: { 'requests.cpu': '1' } },
};

const limitRange: KubernetesObject = {
  apiVersion: 'v1',
  kind: 'LimitRange',
  metadata: { name: 'bounds', namespace: 'team' },
  spec: { limits: [{ type: 'Container', max: { cpu: '2' }, defaultRequest: { cpu: '100m' } }] },
};

function podWithContainers(count: number): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'many', namespace: 'team' },
    spec: {
      containers: Array.from({ length: count }, (_, position) => ({
        name: `c${position}`,
        image: 'registry.corp.example/app:1',
        resources: { requests: { cpu: '1m' } },
      })),
    },
  };
}

function evaluate(object: KubernetesObject, deadlineMilliseconds: number) {
  const { index } = indexObjects([namespace, kyvernoPolicy, quota, limitRange]);
  const constraints = index
    .constraintsForNamespace('team')
    .filter((constraint) =>
      ['ClusterPolicy', 'ResourceQuota', 'LimitRange'].includes(constraint.source.kind),
    );
  const verdicts = evaluateVerdicts(
    constraints,
    {
      admitted: { object, operation: 'CREATE', namespace: 'team', namespaceLabels: {} },
      index: verdictIndexOf(index),
    },
    { ...DEFAULT_EVALUATION_LIMITS, deadlineMilliseconds },
  );
  return verdicts.map(({ constraint, verdict }) => ({
    kind: constraint.source.kind,
    verdict: verdict.verdict,
    reason: verdict.reason ? renderFullText(verdict.reason) : undefined,
    stoppedBy: verdict.stoppedBy,
  }));
}

describe('the evaluation guard in the evaluators outside CEL', () => {
  it('evaluates every constraint of an ordinary object within the default deadline', () => {
    const verdicts = evaluate(podWithContainers(3), DEFAULT_EVALUATION_LIMITS.deadlineMilliseconds);
    expect(verdicts.map((each) => each.kind).sort()).toEqual([
      'ClusterPolicy',
      'LimitRange',
      'ResourceQuota',
    ]);
    expect(verdicts.every((each) => each.verdict !== 'unknown')).toBe(true);
    expect(verdicts.every((each) => each.stoppedBy === undefined)).toBe(true);
  });

  it('stops a large object at the deadline: that constraint and the rest are unknown with the reason', () => {
    // A deadline already passed: the first clock reading inside any evaluator's loop stops it.
    const verdicts = evaluate(podWithContainers(2_000), -1);
    expect(verdicts).toHaveLength(3);
    for (const each of verdicts) {
      expect(each.verdict).toBe('unknown');
      expect(each.reason).toMatch(/evaluation stopped at its deadline/);
      // Said apart from an undecidable rule: background evaluations try such a workload again.
      expect(each.stoppedBy).toBe('deadline');
    }
  });

  it.each(['ClusterPolicy', 'ResourceQuota', 'LimitRange'])(
    'stops the %s evaluator itself inside its loop over containers',
    (kind) => {
      const { index } = indexObjects([namespace, kyvernoPolicy, quota, limitRange]);
      const constraints = index.constraintsForNamespace('team').filter((each) => each.source.kind === kind);
      expect(constraints.length).toBeGreaterThan(0);
      const [result] = evaluateVerdicts(
        constraints,
        {
          admitted: {
            object: podWithContainers(2_000),
            operation: 'CREATE',
            namespace: 'team',
            namespaceLabels: {},
          },
          index: verdictIndexOf(index),
        },
        { ...DEFAULT_EVALUATION_LIMITS, deadlineMilliseconds: -1 },
      );
      expect(result.verdict.verdict).toBe('unknown');
      expect(renderFullText(result.verdict.reason ?? [])).toMatch(/deadline of -1 ms/);
    },
  );
});
