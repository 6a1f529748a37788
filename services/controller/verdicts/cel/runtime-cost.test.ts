import type { KubernetesObject } from '../../../model/kubernetes';
import { indexObjects } from '../../../../test/support/controller-fixtures';
import { buildAdmissionCheck } from '../admission-check';
import { EvaluationAborted, EvaluationGuard, unlimitedGuard } from '../guard/evaluation-guard';
import { compileCel, toCelInput } from './cel-program';
import { CostTracker, PER_CALL_LIMIT, RUNTIME_CEL_COST_BUDGET } from './runtime-cost';

// Kubernetes' runtime CEL cost (cel-go's cost tracker and Kubernetes' library estimator) and the
// API server's limits: an expression stops at PerCallLimit, a binding at RuntimeCELCostBudget, and
// the policy's failurePolicy decides what a stopped evaluation means. The exact costs of a wider
// table are compared with the API server's own CEL stack in test/fidelity/cel-cost.

function costOf(expression: string, bindings: Record<string, unknown> = {}): number {
  const outcome = compileCel(expression)(bindings);
  if (!outcome.ok) throw new Error(outcome.message);
  return outcome.cost;
}

const object = toCelInput({
  metadata: { name: 'web', labels: { app: 'web' } },
  spec: {
    replicas: 3,
    containers: [
      { name: 'a', image: 'registry.example/a:1' },
      { name: 'b', image: 'b' },
    ],
  },
});

describe('CEL runtime cost', () => {
  it.each([
    ['1 + 2 == 3', 2],
    ['object.spec.replicas < 5', 4],
    ['has(object.spec)', 1],
    ["object.metadata.name == 'web'", 4],
    ["'a' in ['a', 'b']", 0],
    ["object.metadata.name in ['web', 'big']", 3],
  ])('%s costs %d', (expression, cost) => {
    expect(costOf(expression, { object })).toBe(cost);
  });

  it('charges comprehensions step by step and strings by length', () => {
    // all(): per element the loop condition (@not_strictly_false and the accumulator: 2), the
    // step (accumulator 1, c 1, .image 1, startsWith: ceil(length × 0.1))
    const cost = costOf("object.spec.containers.all(c, c.image.startsWith('r'))", { object });
    expect(cost).toBeGreaterThan(10);
    const longer = toCelInput({ spec: { containers: [{ image: 'x'.repeat(1000) }] } });
    expect(
      costOf("object.spec.containers.all(c, c.image.startsWith('r'))", { object: longer }),
    ).toBeGreaterThan(100);
  });

  it('stops an expression past PerCallLimit with an evaluation error naming it', () => {
    const big = toCelInput({ image: 'a'.repeat(30_000) });
    const outcome = compileCel('c.image.contains(c.image)')({ c: big });
    expect(outcome).toMatchObject({ ok: false, costExceeded: 'per-call', unsupported: false });
    expect(outcome.ok ? '' : outcome.message).toContain(`PerCallLimit, is ${PER_CALL_LIMIT}`);
  });

  it('counts a 5,000-container exists_one to the limit, not to the end (25 million steps)', () => {
    const containers = Array.from({ length: 5_000 }, (_, index) => ({ name: `c${index}` }));
    const started = performance.now();
    const outcome = compileCel(
      'object.spec.containers.all(c, object.spec.containers.exists_one(d, d.name == c.name))',
    )({
      object: toCelInput({ spec: { containers } }),
    });
    expect(outcome).toMatchObject({ ok: false, costExceeded: 'per-call' });
    expect(outcome.cost).toBe(PER_CALL_LIMIT + 1);
    expect(performance.now() - started).toBeLessThan(20_000);
  });

  it('reports every charge to the guard and lets its stop out of the CEL layer', () => {
    const guard = new EvaluationGuard({ deadlineMilliseconds: 10_000, workBudget: 100 });
    const containers = toCelInput(Array.from({ length: 1_000 }, (_, index) => ({ name: `c${index}` })));
    const program = compileCel('containers.all(c, containers.exists(d, d.name == c.name) || true)');
    expect(() => program({ containers }, new CostTracker(guard))).toThrow(EvaluationAborted);
    expect(guard.workDone).toBeGreaterThan(100);
  });

  it('stops at the deadline inside a comprehension whatever the expression costs', () => {
    const guard = new EvaluationGuard({ deadlineMilliseconds: 20, workBudget: Number.POSITIVE_INFINITY });
    const containers = toCelInput(Array.from({ length: 3_000 }, (_, index) => ({ name: `c${index}` })));
    const program = compileCel('containers.all(c, containers.exists_one(d, d.name == c.name))');
    const started = performance.now();
    expect(() => program({ containers }, new CostTracker(guard, Number.POSITIVE_INFINITY))).toThrow(
      /deadline/,
    );
    expect(performance.now() - started).toBeLessThan(200);
  });

  it('does not build a list past what an evaluation may hold before the memory is taken', () => {
    const program = compileCel('range.map(a, range.map(b, range.map(c, [a, b, c]))).size() > 0');
    const range = toCelInput(Array.from({ length: 200 }, (_, index) => index));
    const started = performance.now();
    const outcome = program({ range }, new CostTracker(unlimitedGuard()));
    expect(outcome).toMatchObject({ ok: false, costExceeded: 'per-call' });
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});

function policy(
  name: string,
  failurePolicy: 'Fail' | 'Ignore',
  validations: Array<{ expression: string }>,
): KubernetesObject[] {
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name },
      spec: {
        failurePolicy,
        matchConstraints: {
          resourceRules: [
            { apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], operations: ['CREATE'] },
          ],
        },
        validations,
      },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: `${name}-binding` },
      spec: { policyName: name, validationActions: ['Deny'] },
    },
  ];
}

function check(policies: KubernetesObject[], image: string) {
  const { index } = indexObjects([
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } },
    ...policies,
  ]);
  const pod: KubernetesObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'team' },
    spec: { containers: [{ name: 'a', image }] },
  };
  return buildAdmissionCheck(index, { object: pod, operation: 'CREATE' }).constraints.filter(
    (entry) => entry.sourceKind === 'ValidatingAdmissionPolicyBinding',
  );
}

describe('cost limits in ValidatingAdmissionPolicy verdicts', () => {
  const expensive = { expression: 'object.spec.containers.all(c, c.image.contains(c.image))' };

  it('failurePolicy Fail: an expression past PerCallLimit rejects the object, the reason naming the limit', () => {
    const [entry] = check(policy('costly', 'Fail', [expensive]), 'a'.repeat(30_000));
    expect(entry.verdict).toBe('violates');
    expect(JSON.stringify(entry.evidence)).toContain('PerCallLimit');
  });

  it('failurePolicy Ignore: the same object passes', () => {
    const [entry] = check(policy('costly', 'Ignore', [expensive]), 'a'.repeat(30_000));
    expect(entry.verdict).toBe('passes');
  });

  it('stops the binding past RuntimeCELCostBudget: Fail rejects naming the budget, Ignore passes with a reason', () => {
    // Each validation costs about 900,000 (under PerCallLimit); twelve exceed the budget.
    const image = `${'a'.repeat(30_000)}|${'b'.repeat(2_999)}`;
    const validation = {
      expression: "object.spec.containers.all(c, !c.image.contains(c.image.split('|')[1] + 'x'))",
    };
    const twelve = Array.from({ length: 12 }, () => validation);
    const [failed] = check(policy('budget', 'Fail', twelve), image);
    expect(failed.verdict).toBe('violates');
    expect(JSON.stringify(failed.evidence)).toContain(`RuntimeCELCostBudget, ${RUNTIME_CEL_COST_BUDGET}`);
    const [ignored] = check(policy('budget', 'Ignore', twelve), image);
    expect(ignored.verdict).toBe('passes');
    expect(ignored.reason).toContain('RuntimeCELCostBudget');
  });
});
