import { EvaluationAborted, EvaluationGuard } from './evaluation-guard';

function guardWithClock(limits: { deadlineMilliseconds: number; workBudget: number }) {
  const clock = { now: 1000 };
  const guard = new EvaluationGuard(limits, () => clock.now);
  return { guard, clock };
}

describe('EvaluationGuard', () => {
  it('lets checkpoints pass before the deadline and stops the first clock reading after it', () => {
    const { guard, clock } = guardWithClock({ deadlineMilliseconds: 50, workBudget: 1e9 });
    for (let step = 0; step < 10_000; step++) guard.checkpoint();
    clock.now += 51;
    let thrown: unknown;
    for (let step = 0; step < 10_000 && thrown === undefined; step++) {
      try {
        guard.checkpoint();
      } catch (error) {
        thrown = error;
      }
    }
    expect(thrown).toBeInstanceOf(EvaluationAborted);
    expect((thrown as EvaluationAborted).reasonCause).toBe('deadline');
    expect((thrown as Error).message).toMatch(/deadline of 50 ms/);
  });

  it('checkDeadline reads the clock at once', () => {
    const { guard, clock } = guardWithClock({ deadlineMilliseconds: 5, workBudget: 1e9 });
    guard.checkDeadline();
    clock.now += 6;
    expect(() => guard.checkDeadline()).toThrow(/deadline of 5 ms/);
  });

  it('counts work and stops past the budget', () => {
    const { guard } = guardWithClock({ deadlineMilliseconds: 1e9, workBudget: 100 });
    guard.charge(60);
    guard.charge(40);
    expect(guard.workDone).toBe(100);
    expect(() => guard.charge(1)).toThrow(/work budget of 100 cost units/);
  });
});
