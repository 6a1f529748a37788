import { EvaluationAborted, EvaluationGuard } from './evaluation-guard';

/** A guard on a fake clock that serves as wall and CPU clock: a busy, unshared core. */
function guardWithClock(limits: { deadlineMilliseconds: number; workBudget: number }) {
  const clock = { now: 1000 };
  const guard = new EvaluationGuard(
    limits,
    () => clock.now,
    () => clock.now,
    () => 0,
  );
  return { guard, clock };
}

describe('EvaluationGuard', () => {
  it('lets checkpoints pass before the deadline and stops the first clock reading after it', () => {
    const { guard, clock } = guardWithClock({ deadlineMilliseconds: 50, workBudget: 1e9 });
    for (let step = 0; step < 10_000; step++) guard.checkpoint();
    // The CPU clock is first read a few milliseconds in (counted as 5 ms), then 46 ms more.
    clock.now += 6;
    guard.checkDeadline();
    clock.now += 46;
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
    // First CPU reading past a tenth of the deadline (0.5 ms counted before it), then 5 ms more.
    clock.now += 1;
    guard.checkDeadline();
    clock.now += 5;
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
  function starvedGuard(deadlineMilliseconds: number, wallDeadlineMilliseconds = 500) {
    const clocks = { wall: 0, cpu: 0, cpuReads: 0, waitingForCpu: 0 };
    const guard = new EvaluationGuard(
      { deadlineMilliseconds, wallDeadlineMilliseconds, workBudget: 1e9 },
      () => clocks.wall,
      () => {
        clocks.cpuReads++;
        return clocks.cpu;
      },
      () => clocks.waitingForCpu,
    );
    return { guard, clocks };
  }

  it('never reads the CPU clock for an evaluation shorter than a few milliseconds', () => {
    const { guard, clocks } = starvedGuard(50);
    clocks.wall = 4.9;
    clocks.cpu = 4.9;
    for (let step = 0; step < 10_000; step++) guard.checkpoint();
    guard.checkDeadline();
    expect(clocks.cpuReads).toBe(0);
  });

  it('reads the CPU clock once past a few milliseconds, then only past the wall deadline', () => {
    const { guard, clocks } = starvedGuard(50);
    clocks.wall = 6;
    clocks.cpu = 6;
    guard.checkDeadline();
    expect(clocks.cpuReads).toBe(1);
    clocks.wall = 49;
    guard.checkDeadline();
    expect(clocks.cpuReads).toBe(1);
  });

  it('keeps evaluating past 50 ms of wall time when it had less than 50 ms of CPU: the verdict does not depend on load', () => {
    const { guard, clocks } = starvedGuard(50);
    clocks.wall = 6;
    clocks.cpu = 6;
    guard.checkDeadline();
    clocks.wall = 200;
    clocks.cpu = 30;
    expect(() => guard.checkDeadline()).not.toThrow();
    // 5 ms counted before the first reading, 46 after it.
    clocks.cpu = 52;
    expect(() => guard.checkDeadline()).toThrow(/deadline of 50 ms of CPU/);
  });

  it('counts at most a few milliseconds before its first CPU reading, however long it waited for a core', () => {
    const { guard, clocks } = starvedGuard(50);
    // Descheduled for 300 ms before its first checkpoint: that wait is not taken for CPU.
    clocks.wall = 300;
    clocks.cpu = 2;
    expect(() => guard.checkDeadline()).not.toThrow();
    clocks.cpu = 2 + 44;
    expect(() => guard.checkDeadline()).not.toThrow();
    clocks.cpu = 2 + 46;
    expect(() => guard.checkDeadline()).toThrow(/deadline of 50 ms of CPU/);
  });

  it('stops at its wall deadline however little CPU it got, naming that budget', () => {
    const { guard, clocks } = starvedGuard(50);
    clocks.wall = 499;
    clocks.cpu = 10;
    expect(() => guard.checkDeadline()).not.toThrow();
    clocks.wall = 501;
    expect(() => guard.checkDeadline()).toThrow(/deadline of 500 ms of wall time for one object/);
  });

  it('leaves out of its wall deadline the time the thread waited for a CPU, not the time it was blocked', () => {
    const { guard, clocks } = starvedGuard(50, 60);
    clocks.wall = 6;
    clocks.cpu = 6;
    clocks.waitingForCpu = 100;
    guard.checkDeadline();
    // 200 ms of wall time, 150 of them in the run queue: the loop was held 50 ms.
    clocks.wall = 200;
    clocks.cpu = 30;
    clocks.waitingForCpu = 250;
    expect(() => guard.checkDeadline()).not.toThrow();
    // 20 ms more, blocked (on an isolate, a read) rather than waiting for a CPU: held 70 ms.
    clocks.wall = 220;
    expect(() => guard.checkDeadline()).toThrow(/deadline of 60 ms of wall time for one object/);
  });

  it('falls back to the wall clock alone where the kernel does not say how long the thread waited', () => {
    const clocks = { wall: 0, cpu: 0 };
    const guard = new EvaluationGuard(
      { deadlineMilliseconds: 50, workBudget: 1e9 },
      () => clocks.wall,
      () => clocks.cpu,
      () => undefined,
    );
    clocks.wall = 6;
    guard.checkDeadline();
    clocks.wall = 61;
    clocks.cpu = 10;
    expect(() => guard.checkDeadline()).toThrow(/deadline of 60 ms of wall time/);
  });

  it('holds the event loop at most 60 ms by default, within the bound of 100 ms (issue 32)', () => {
    const clocks = { wall: 0, cpu: 0 };
    const guard = new EvaluationGuard(
      { deadlineMilliseconds: 50, workBudget: 1e9 },
      () => clocks.wall,
      () => clocks.cpu,
      () => 0,
    );
    clocks.wall = 59;
    clocks.cpu = 10;
    expect(() => guard.checkDeadline()).not.toThrow();
    expect(guard.remainingWallMilliseconds(1000)).toBe(1);
    clocks.wall = 61;
    expect(() => guard.checkDeadline()).toThrow(/deadline of 60 ms of wall time .*\d+ of its 50 ms of CPU/);
  });

  it('reads no clock at all without a deadline', () => {
    const clocks = { wall: 0, reads: 0 };
    const guard = new EvaluationGuard(
      { deadlineMilliseconds: Number.POSITIVE_INFINITY, workBudget: Number.POSITIVE_INFINITY },
      () => {
        clocks.reads++;
        return clocks.wall;
      },
      () => {
        clocks.reads++;
        return 0;
      },
    );
    const readsAtStart = clocks.reads;
    clocks.wall = 1e6;
    guard.checkDeadline();
    expect(clocks.reads).toBe(readsAtStart);
  });
});
