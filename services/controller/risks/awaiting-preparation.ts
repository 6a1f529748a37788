// Workloads evaluated while a verdict they needed was still being prepared in the background: a
// Gatekeeper Rego template that opa is compiling answers `unknown` until it is done. Nothing about
// the workload changes when the compilation ends, so nothing would evaluate it again, and its risks
// would miss that constraint's findings until the next policy or workload change. A constraint that
// arrives while its template compiles (at start, or on a machine busy enough that opa takes
// seconds) left every workload it covers so. Such workloads are evaluated again when a preparation ends.

/** What prepares verdicts in the background (the process's RegoEngine). */
export interface BackgroundPreparation {
  /** `unknown` answers given so far because something was still being prepared. */
  answersWhilePreparing(): number;
  /** Calls `listener` whenever a preparation ends; returns what stops the calls. */
  onPrepared(listener: () => void): () => void;
}

export class EvaluationsAwaitingPreparation {
  private readonly waiting = new Set<string>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly preparation: BackgroundPreparation | undefined,
    evaluateAgain: (keys: string[]) => void,
  ) {
    this.unsubscribe =
      preparation?.onPrepared(() => {
        if (this.waiting.size === 0) return;
        const keys = [...this.waiting];
        this.waiting.clear();
        evaluateAgain(keys);
      }) ?? (() => undefined);
  }

  /** Runs one workload's evaluation, noting the workload when it met something still being prepared. */
  evaluate<Result>(key: string, evaluation: () => Result): Result {
    if (!this.preparation) return evaluation();
    const before = this.preparation.answersWhilePreparing();
    const result = evaluation();
    if (this.preparation.answersWhilePreparing() !== before) this.waiting.add(key);
    else this.waiting.delete(key);
    return result;
  }

  stop(): void {
    this.unsubscribe();
    this.waiting.clear();
  }
}
