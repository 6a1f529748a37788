// The one budget of outbound reviews asked on behalf of callers (issue 24): at most `maxConcurrent`
// TokenReviews and SubjectAccessReviews in flight at once, at most `maxQueued` waiting, and a review
// whose request has given up (its deadline passed while it waited) is never sent. A caller that
// finds the queue full gets no review at all: its answer is rendered at the controller's level
// (fail-closed), so a thousand distinct callers at once cost a bounded number of open requests.

export class ReviewBudgetExhausted extends Error {}

interface Waiting {
  start: () => void;
  refuse: (reason: Error) => void;
  deadline: number;
}

export interface ReviewLimiterOptions {
  maxConcurrent: number;
  maxQueued: number;
  clock?: () => number;
}

export class ReviewLimiter {
  private running = 0;
  private readonly waiting: Waiting[] = [];
  private readonly clock: () => number;
  /** Reviews sent since start, by kind (tests, the load figure, metrics). */
  readonly sent = new Map<string, number>();
  /** Reviews refused without sending: queue full or deadline passed while waiting. */
  refused = 0;

  constructor(private readonly options: ReviewLimiterOptions) {
    this.clock = options.clock ?? Date.now;
  }

  /** Runs `task` when a slot is free; rejects with ReviewBudgetExhausted when it cannot be run in time. */
  run<T>(kind: string, deadline: number, task: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const start = () => {
        this.running += 1;
        this.sent.set(kind, (this.sent.get(kind) ?? 0) + 1);
        task()
          .then(resolve, reject)
          .finally(() => {
            this.running -= 1;
            this.startNext();
          });
      };
      if (this.running < this.options.maxConcurrent) return start();
      if (this.waiting.length >= this.options.maxQueued) {
        this.refused += 1;
        return reject(new ReviewBudgetExhausted('too many reviews waiting'));
      }
      this.waiting.push({ start, refuse: reject, deadline });
    });
  }

  inFlight(): number {
    return this.running;
  }

  private startNext(): void {
    while (this.running < this.options.maxConcurrent && this.waiting.length > 0) {
      const next = this.waiting.shift() as Waiting;
      if (next.deadline <= this.clock()) {
        this.refused += 1;
        next.refuse(new ReviewBudgetExhausted('the request stopped waiting for this review'));
      } else next.start();
    }
  }
}

/**
 * `promise`'s value if it settles before `deadline`, `fallback` otherwise (or if it rejects): a
 * hanging API server never holds an answer past its review timeout.
 */
export function beforeDeadline<T>(
  promise: Promise<T>,
  deadline: number,
  fallback: T,
  now: number,
): Promise<T> {
  return new Promise<T>((resolve) => {
    const timer = setTimeout(() => resolve(fallback), Math.max(0, deadline - now));
    timer.unref?.();
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      () => {
        clearTimeout(timer);
        resolve(fallback);
      },
    );
  });
}
