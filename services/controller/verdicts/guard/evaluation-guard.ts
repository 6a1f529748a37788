// The one guard every verdict evaluation runs under (DESIGN.md 7b, docs/decisions.md "Bounded
// verdicts"). Policies and objects are untrusted input: anyone who reaches the controller may send an
// object, and a namespace admin may write a Kyverno Policy. The guard bounds what one admitted object
// may cost the controller, independently of how well each evaluator bounds itself:
// - a deadline for the whole object: evaluators call `checkpoint()` in every loop whose length the
//   input decides (CEL steps, pattern elements, list items); past the deadline it throws
//   EvaluationAborted and the constraint, and every one after it, is `unknown`. The deadline is the
//   process's CPU time, so that a verdict does not depend on how busy the machine is (the same object
//   gets the same verdict on a quiet node and on an oversubscribed one), with a wall-clock backstop
//   (60 ms by default, less the time the thread waited for a CPU where Linux says: thread-run-queue.ts),
//   so that an evaluation blocked or starved still ends within the event-loop hold bound of 100 ms
//   (issue 32: no request holds the loop longer, however busy the machine). Either
//   clock stops it with a reason that names the budget; The CPU clock costs microseconds to
//   read, so an ordinary evaluation (well under a millisecond) never reads it: it is read once the
//   evaluation has run a few milliseconds of wall time (CPU_CLOCK_AFTER_MILLISECONDS below);
// - a work budget: `charge(units)` counts work in the units of Kubernetes' CEL cost model (one unit
//   is about one step over one element), so memory an evaluation can build up is bounded by what it
//   may compute. It is Forewarn's own ceiling over all constraints of the object, above the API
//   server's per-expression and per-call limits, which the CEL evaluator applies itself (those are the
//   server's semantics: an exceeded CEL budget is an evaluation error, not `unknown`).

import { runQueueWaitMilliseconds } from './thread-run-queue';

/** Why an evaluation was stopped by the guard. */
export type AbortCause = 'deadline' | 'work';

// Outcomes that depend on the clock (a deadline, an isolate restarting) are counted: the same
// request asked again a moment later may be decided, so an answer computed while this count moved is
// not remembered (http/admission-check-route.ts). Work-budget stops depend on the input alone.
let clockBoundOutcomes = 0;

/** Counts an outcome a clock decided (a deadline reached, an isolate not ready in time). */
export function noteClockBoundOutcome(): void {
  clockBoundOutcomes++;
}

/** How many outcomes a clock decided so far in this process. */
export function clockBoundOutcomeCount(): number {
  return clockBoundOutcomes;
}

export class EvaluationAborted extends Error {
  constructor(
    readonly reasonCause: AbortCause,
    message: string,
  ) {
    super(message);
    this.name = 'EvaluationAborted';
    if (reasonCause === 'deadline') noteClockBoundOutcome();
  }
}

export interface EvaluationLimits {
  /** CPU time one admitted object's evaluation may take, all constraints together. */
  deadlineMilliseconds: number;
  /**
   * Wall time it may take however little CPU it got (the longest it may hold the event loop, less
   * a margin for the step in progress). Default: the larger of the CPU deadline and 60 ms.
   */
  wallDeadlineMilliseconds?: number;
  /** Work units (CEL cost units) one admitted object's evaluation may take, all constraints together. */
  workBudget: number;
}

/**
 * Defaults: 50 ms of CPU keeps `/healthz` under its 100 ms p99 target while one hostile object is evaluated
 * (ordinary objects take about 0.1 ms); 100 million units is ten times the API server's per-call CEL
 * budget of a ValidatingAdmissionPolicy (`RuntimeCELCostBudget`, 10,000,000), so no verdict the
 * server would reach is cut short by it.
 */
export const DEFAULT_EVALUATION_LIMITS: EvaluationLimits = {
  deadlineMilliseconds: 50,
  workBudget: 100_000_000,
};

// Reading the clock costs about 30 ns; checking it every 256 checkpoints keeps the guard under 1% of
// an ordinary evaluation while a hostile loop is still stopped within microseconds of the deadline.
const CLOCK_EVERY = 256;

/** CPU time of this process in milliseconds (user and system). */
function processCpuMilliseconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

// `process.cpuUsage()` is a getrusage call summed over the process's threads: about 1.6 µs in a
// fresh process, but measured up to 50 µs with Wasm and worker threads and about 5% of the
// controller's busy time under 16 concurrent admissions, where every guard read it at its start. An
// ordinary evaluation ends within a millisecond and never needs it: the guard reads the CPU clock
// for the first time once the evaluation has run CPU_CLOCK_AFTER_MILLISECONDS of wall time, and
// counts the time before that reading as CPU, at most CPU_CLOCK_AFTER_MILLISECONDS of it (checkpoints
// come every few microseconds, so the first one after that point is near it; time the controller
// spent descheduled before it does not shorten the deadline by more than that).
const CPU_CLOCK_AFTER_MILLISECONDS = 5;

/**
 * The longest one evaluation may hold the event loop, whatever its limits ask (issue 32), less a
 * margin of 40 ms for the step in progress when a clock is read: the wall-clock backstop.
 */
export const EVENT_LOOP_HOLD_MILLISECONDS = 100;
const WALL_BACKSTOP_MILLISECONDS = 60;

// The guard of the evaluation in progress: evaluations run one at a time, synchronously (evaluate.ts),
// so isolated evaluators (guard/evaluation-isolate.ts), which are reached through engine libraries
// that do not carry the guard, find the budget left here.
let active: EvaluationGuard | undefined;

/** Runs `evaluation` with `guard` as the active guard (the one isolated evaluators charge). */
export function underGuard<Result>(guard: EvaluationGuard, evaluation: () => Result): Result {
  const previous = active;
  active = guard;
  try {
    return evaluation();
  } finally {
    active = previous;
  }
}

/** The guard of the evaluation in progress, if any. */
export function activeGuard(): EvaluationGuard | undefined {
  return active;
}

export class EvaluationGuard {
  private wallStart: number;
  /** CPU time not counted (the process's first isolate starting during the evaluation). */
  private cpuDiscount = 0;
  /**
   * CPU time at the first reading, the CPU counted for the evaluation before it, and the thread's
   * wait for a CPU then (read with it, a few milliseconds in: only a long evaluation pays for it).
   */
  private cpuReading: { at: number; before: number; waitingAt?: number } | undefined;
  private readonly wallDeadline: number;
  private work = 0;
  private checkpoints = 0;

  constructor(
    readonly limits: EvaluationLimits = DEFAULT_EVALUATION_LIMITS,
    private readonly now: () => number = () => performance.now(),
    private readonly cpuNow: () => number = processCpuMilliseconds,
    private readonly waitingForCpuNow: () => number | undefined = runQueueWaitMilliseconds,
  ) {
    this.wallStart = now();
    this.wallDeadline =
      limits.wallDeadlineMilliseconds ?? Math.max(limits.deadlineMilliseconds, WALL_BACKSTOP_MILLISECONDS);
  }

  /** Call in every loop whose length the input decides; throws EvaluationAborted past the deadline. */
  checkpoint(): void {
    if (++this.checkpoints % CLOCK_EVERY !== 0) return;
    this.checkDeadline();
  }

  /** Reads the clock now (before and after a step that cannot checkpoint inside, such as one regex). */
  checkDeadline(): void {
    const { deadlineMilliseconds } = this.limits;
    // A guard without a deadline (unlimitedGuard, made per CEL call outside an admission) never
    // reads a clock.
    if (!Number.isFinite(deadlineMilliseconds)) return;
    const wallElapsed = this.now() - this.wallStart;
    // A tenth of a short deadline, so that what is counted before the reading stays a small part of it.
    const cpuClockAfter = Math.min(CPU_CLOCK_AFTER_MILLISECONDS, deadlineMilliseconds / 10);
    if (wallElapsed <= cpuClockAfter) return;
    this.cpuReading ??= {
      at: this.cpuNow(),
      before: Math.min(wallElapsed, cpuClockAfter),
      waitingAt: this.waitingForCpuNow(),
    };
    if (wallElapsed <= deadlineMilliseconds) return;
    const cpuUsed = this.cpuReading.before + (this.cpuNow() - this.cpuReading.at) - this.cpuDiscount;
    if (cpuUsed > deadlineMilliseconds)
      throw new EvaluationAborted(
        'deadline',
        `evaluation stopped at its deadline of ${this.limits.deadlineMilliseconds} ms of CPU for one object`,
      );
    if (wallElapsed > this.wallDeadline && this.heldMilliseconds(wallElapsed) > this.wallDeadline)
      throw new EvaluationAborted(
        'deadline',
        `evaluation stopped at its deadline of ${this.wallDeadline} ms of wall time for one object (with ${Math.round(cpuUsed)} of its ${deadlineMilliseconds} ms of CPU used: the machine is busy)`,
      );
  }

  /**
   * Wall time the evaluation held the event loop: less the time the thread waited for a CPU since
   * the first clock reading, where the kernel says (a busy machine's time is not the evaluation's;
   * time blocked, on an isolate or a read, is).
   */
  private heldMilliseconds(wallElapsed: number): number {
    const waitingAt = this.cpuReading?.waitingAt;
    if (waitingAt === undefined) return wallElapsed;
    const waiting = this.waitingForCpuNow();
    return waiting === undefined ? wallElapsed : wallElapsed - Math.max(0, waiting - waitingAt);
  }

  /**
   * Wall time left before the backstop (at most `cap`): what an isolated evaluation may wait for.
   * Throws EvaluationAborted when none is left.
   */
  remainingWallMilliseconds(cap: number): number {
    if (!Number.isFinite(this.limits.deadlineMilliseconds)) return cap;
    const left = this.wallDeadline - (this.now() - this.wallStart);
    if (left <= 0) this.checkDeadline();
    return Math.min(cap, this.limits.deadlineMilliseconds, Math.max(left, 1));
  }

  /** Leaves out time spent on something that is not the evaluation's (starting the isolate). */
  discount(wallMilliseconds: number, cpuMilliseconds: number): void {
    this.wallStart += wallMilliseconds;
    this.cpuDiscount += cpuMilliseconds;
  }

  /** Stops the evaluation: an isolated evaluator reached the time it was given. */
  stopAtDeadline(what: string): never {
    throw new EvaluationAborted(
      'deadline',
      `evaluation stopped at its deadline of ${this.limits.deadlineMilliseconds} ms for one object (${what})`,
    );
  }

  /** Counts work (CEL cost units); throws EvaluationAborted past the budget. */
  charge(units: number): void {
    this.work += units;
    if (this.work > this.limits.workBudget)
      throw new EvaluationAborted(
        'work',
        `evaluation stopped at its work budget of ${this.limits.workBudget} cost units for one object`,
      );
    this.checkpoint();
  }

  /** Work counted so far (for metrics and tests). */
  get workDone(): number {
    return this.work;
  }
}

/** A guard that never stops anything: for evaluators' unit tests that do not test the guard. */
export function unlimitedGuard(): EvaluationGuard {
  return new EvaluationGuard({
    deadlineMilliseconds: Number.POSITIVE_INFINITY,
    workBudget: Number.POSITIVE_INFINITY,
  });
}
