import { setImmediate as nextTurn } from 'node:timers/promises';

// One request, one budget (issue 32, row 3): the evaluation guard bounds one object (50 ms of CPU),
// but a request may carry many objects (an MCP `check` of 1 MiB of YAML holds hundreds; a JSON-RPC
// batch holds several calls). Without a budget for the whole, the controller evaluated all of them
// back to back on its event loop: 2 calls x 492 Deployments held `/healthz` for 108 s. A request's
// work now goes one object (or one call) at a time, giving the event loop a turn between them, and
// stops once the request has used its CPU budget: whatever is left is answered `unknown` with the
// budget's reason.
//
// CPU, not wall time, so that the same request gets the same answer on a quiet node and on an
// oversubscribed one. The clock is the process's (Node 20 has no per-thread clock): it is read
// around each step of the request only, so other requests' CPU counts only when it ran inside one
// of this request's steps (while it awaited an access review, say). That can end a request
// earlier under concurrent load, never later.

/** CPU one request may use for its objects, all calls of a JSON-RPC batch together. */
export const DEFAULT_REQUEST_CPU_BUDGET_MS = 2_000;

/** CPU time of this process in milliseconds (user and system). */
function processCpuMilliseconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

export class RequestBudget {
  private used = 0;
  /** Ends when the request's current step ends (steps run one at a time). */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    readonly cpuMilliseconds: number = DEFAULT_REQUEST_CPU_BUDGET_MS,
    private readonly cpuNow: () => number = processCpuMilliseconds,
    private readonly yieldTurn: () => Promise<unknown> = () => nextTurn(),
  ) {}

  /**
   * Runs one step of the request (one object, one call) once the event loop has had a turn and the
   * request's previous step has ended, and counts the CPU it took; `ran: false` once the budget is
   * spent. Steps of one request go one at a time, so the calls of a JSON-RPC batch take turns
   * instead of each holding the loop for a step in the same turn.
   */
  async step<T>(work: () => Promise<T> | T): Promise<{ ran: true; value: T } | { ran: false }> {
    const previous = this.queue;
    let release = (): void => undefined;
    this.queue = new Promise<void>((resolve) => (release = resolve));
    try {
      await previous;
      await this.yieldTurn();
      if (this.exhausted) return { ran: false };
      return { ran: true, value: await this.measure(work) };
    } finally {
      release();
    }
  }

  /** Counts the CPU a step took (its awaits included: see the note at the top). */
  private async measure<T>(work: () => Promise<T> | T): Promise<T> {
    const started = this.cpuNow();
    try {
      return await work();
    } finally {
      this.used += Math.max(0, this.cpuNow() - started);
    }
  }

  get exhausted(): boolean {
    return this.used >= this.cpuMilliseconds;
  }

  /** CPU counted so far, in milliseconds. */
  get usedMilliseconds(): number {
    return this.used;
  }

  /** The reason given for what a request leaves unevaluated; it names the budget. */
  get reason(): string {
    return `not evaluated: this request used its CPU budget of ${this.cpuMilliseconds} ms before reaching it; check it in a smaller request`;
  }
}

/** A budget that never runs out (the CLI checking files on the user's own machine). */
export function unlimitedRequestBudget(): RequestBudget {
  return new RequestBudget(Number.POSITIVE_INFINITY);
}
