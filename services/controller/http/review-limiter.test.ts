import { beforeDeadline, ReviewBudgetExhausted, ReviewLimiter } from './review-limiter';

// The one budget of caller reviews (issue 24): never more than maxConcurrent in flight, at most
// maxQueued waiting, a waiting review whose request gave up is never sent.

function deferred() {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

describe('ReviewLimiter', () => {
  it('runs at most maxConcurrent at once, queues maxQueued, refuses the rest without running them', async () => {
    const limiter = new ReviewLimiter({ maxConcurrent: 2, maxQueued: 1 });
    const gate = deferred();
    let started = 0;
    const task = async () => {
      started += 1;
      await gate.promise;
      return started;
    };
    const far = Date.now() + 60_000;
    const runs = [1, 2, 3, 4].map(() => limiter.run('SubjectAccessReview', far, task));
    expect(limiter.inFlight()).toBe(2);
    await expect(runs[3]).rejects.toBeInstanceOf(ReviewBudgetExhausted);
    gate.resolve();
    await Promise.all(runs.slice(0, 3));
    expect(started).toBe(3);
    expect(limiter.sent.get('SubjectAccessReview')).toBe(3);
    expect(limiter.refused).toBe(1);
  });

  it('never sends a queued review whose deadline passed while it waited', async () => {
    let now = 0;
    const limiter = new ReviewLimiter({ maxConcurrent: 1, maxQueued: 5, clock: () => now });
    const gate = deferred();
    const first = limiter.run('TokenReview', 100, () => gate.promise);
    let secondRan = false;
    const second = limiter.run('TokenReview', 100, async () => {
      secondRan = true;
    });
    now = 150;
    gate.resolve();
    await first;
    await expect(second).rejects.toBeInstanceOf(ReviewBudgetExhausted);
    expect(secondRan).toBe(false);
  });
});

describe('beforeDeadline', () => {
  it('gives the fallback at the deadline, and on a rejection', async () => {
    const never = new Promise<string>(() => undefined);
    const started = Date.now();
    await expect(beforeDeadline(never, started + 50, 'fallback', started)).resolves.toBe('fallback');
    expect(Date.now() - started).toBeGreaterThanOrEqual(40);
    await expect(
      beforeDeadline(Promise.reject(new Error('x')), started + 1000, 'no', Date.now()),
    ).resolves.toBe('no');
    await expect(beforeDeadline(Promise.resolve('yes'), Date.now() + 1000, 'no', Date.now())).resolves.toBe(
      'yes',
    );
  });
});
