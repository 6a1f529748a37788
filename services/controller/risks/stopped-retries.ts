// Workloads whose evaluation the guard stopped at its deadline (issue 35 fidelity): the guard's
// deadline is the process's CPU with a wall-clock backstop, so on a busy node (the first pass of a
// large cluster, Rego templates compiling beside it, other processes) an ordinary workload's
// evaluation can be stopped half way, its remaining verdicts `unknown`, and its findings missing
// some. Nothing about the workload changes afterwards, so nothing would evaluate it again: the risk
// view would keep the incomplete answer until the next policy or workload change. Background work
// has no caller waiting, so such a workload is evaluated again later, a few times, further apart
// each time (a busy spell passes); an object stopped every time (one too costly to judge) keeps its
// last answer.

/** Evaluations again after a stop at the deadline, per workload, before its answer is kept. */
export const MAX_RETRIES_AFTER_STOP = 3;
/** The wait before the first retry; each next one waits this much longer. */
export const RETRY_DELAY_MS = 1_000;

export class StoppedEvaluationRetries {
  private readonly attempts = new Map<string, number>();
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly retry: (key: string) => void,
    private readonly maxRetries: number = MAX_RETRIES_AFTER_STOP,
    private readonly delayMs: number = RETRY_DELAY_MS,
  ) {}

  /** After an evaluation of the workload: schedules its retry if the guard stopped it at the deadline. */
  evaluated(key: string, stoppedAtDeadline: boolean): void {
    if (!stoppedAtDeadline) return this.forget(key);
    const attempts = this.attempts.get(key) ?? 0;
    if (attempts >= this.maxRetries) return this.forget(key);
    this.attempts.set(key, attempts + 1);
    clearTimeout(this.timers.get(key));
    const timer = setTimeout(
      () => {
        this.timers.delete(key);
        this.retry(key);
      },
      this.delayMs * (attempts + 1),
    );
    timer.unref();
    this.timers.set(key, timer);
  }

  /** Retries waiting for their time (they count as pending work). */
  get scheduled(): number {
    return this.timers.size;
  }

  forget(key: string): void {
    this.attempts.delete(key);
    clearTimeout(this.timers.get(key));
    this.timers.delete(key);
  }

  stop(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}
