import { EvaluationAborted, type EvaluationGuard } from '../guard/evaluation-guard';

// Kubernetes' CEL cost limits and the tracker that counts one expression evaluation against them
// (runtime-cost.ts counts; docs/decisions.md says where each number comes from).

// k8s.io/apiserver v0.34.4, pkg/apis/cel/config.go.
/** `PerCallLimit`: the runtime cost limit of one expression evaluation (cel.CostLimit in environment/base.go). */
export const PER_CALL_LIMIT = 1_000_000;
/** `RuntimeCELCostBudget`: the cost budget of one ValidatingAdmissionPolicyBinding's evaluation. */
export const RUNTIME_CEL_COST_BUDGET = 10_000_000;
/**
 * `RuntimeCELCostBudgetMatchConditions`: the budget of a policy's match conditions for one object
 * (admission/plugin/webhook/matchconditions/matcher.go, which the validating policy plugin uses).
 */
export const RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS = 2_500_000;

export type CostLimitKind = 'per-call' | 'budget';

/** Evaluation stopped by Kubernetes' cost limits: an evaluation error, as the API server's. */
export class CelCostExceeded extends Error {
  constructor(
    readonly kind: CostLimitKind,
    readonly limit: number,
  ) {
    super(
      kind === 'per-call'
        ? `operation cancelled: actual cost limit exceeded (the API server's per-expression limit, PerCallLimit, is ${limit})`
        : `validation failed due to running out of cost budget, no further validation rules will be run (RuntimeCELCostBudget, ${limit})`,
    );
    this.name = 'CelCostExceeded';
  }
}

/**
 * Counts one expression evaluation's cost. `remainingBudget` is what is left of the binding's
 * RuntimeCELCostBudget when the expression starts: the API server checks it after the expression,
 * and since the expression stops at PER_CALL_LIMIT (smaller) first, stopping at whichever is
 * smaller gives the same outcome while never computing more than the server would.
 */
export class CostTracker {
  cost = 0;
  /** The first stop (cost or guard), kept so that no CEL error handling below can swallow it. */
  stopped: CelCostExceeded | EvaluationAborted | undefined;

  constructor(
    readonly guard: EvaluationGuard,
    readonly limit: number = PER_CALL_LIMIT,
  ) {}

  charge(units: number): void {
    if (this.stopped) throw this.stopped;
    if (units === 0) return;
    this.cost += units;
    if (this.cost > this.limit) this.stop(new CelCostExceeded('per-call', this.limit));
    try {
      this.guard.charge(units);
    } catch (error) {
      if (error instanceof EvaluationAborted) this.stop(error);
      throw error;
    }
  }

  checkpoint(): void {
    if (this.stopped) throw this.stopped;
    try {
      this.guard.checkpoint();
    } catch (error) {
      if (error instanceof EvaluationAborted) this.stop(error);
      throw error;
    }
  }

  stop(reason: CelCostExceeded | EvaluationAborted): never {
    this.stopped ??= reason;
    throw this.stopped;
  }
}
