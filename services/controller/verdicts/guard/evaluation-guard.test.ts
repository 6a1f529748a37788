import { EvaluationAborted, EvaluationGuard } from './evaluation-guard';

/** A guard on a fake clock that serves as wall and CPU clock: a busy, unshared core. */
function guardWithClock(limits: { deadlineMilliseconds: number; workBudget: number }) {
  const clock = { now: 1000 };
  const guard = new EvaluationGuard(
    limits,
    () => clock.now,
    () => clock.now,
  );
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

describe('EvaluationGuard on a machine that gives it little CPU', () => {
  function starvedGuard(deadlineMilliseconds: number) {
    const clocks = { wall: 0, cpu: 0, cpuReads: 0 };
    const guard = new EvaluationGuard(
      { deadlineMilliseconds, workBudget: 1e9 },
      () => clocks.wall,
      () => {
        clocks.cpuReads++;
        return clocks.cpu;
      },
    );
    return { guard, clocks };
  }

  it('does not read the CPU clock while the wall clock is within the deadline', () => {
    const { guard, clocks } = starvedGuard(50);
    const readsAtStart = clocks.cpuReads;
    clocks.wall = 49;
    guard.checkDeadline();
    expect(clocks.cpuReads).toBe(readsAtStart);
  });

  it('keeps evaluating past 50 ms of wall time when it had less than 50 ms of CPU: the verdict does not depend on load', () => {
    const { guard, clocks } = starvedGuard(50);
    clocks.wall = 200;
    clocks.cpu = 30;
    expect(() => guard.checkDeadline()).not.toThrow();
    clocks.cpu = 51;
    expect(() => guard.checkDeadline()).toThrow(/deadline of 50 ms of CPU/);
  });

  it('stops at ten times the deadline of wall time however little CPU it got', () => {
    const { guard, clocks } = starvedGuard(50);
    clocks.wall = 499;
    clocks.cpu = 10;
    expect(() => guard.checkDeadline()).not.toThrow();
    clocks.wall = 501;
    expect(() => guard.checkDeadline()).toThrow(/after 500 ms: the controller got too little CPU/);
  });
});
