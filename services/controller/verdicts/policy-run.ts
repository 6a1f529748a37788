import { celMap, type CelValue } from '@bufbuild/cel';
import type { CelOutcome, CelProgram } from './cel/cel-program';
import type { CompiledPolicy } from './cel/compiled-policy';
import { CostTracker } from './cel/runtime-cost';
import type { EvaluationGuard } from './guard/evaluation-guard';
import { withFields } from '../../model/object-copy';

// The evaluation of one ValidatingAdmissionPolicy binding (or Gatekeeper CEL template) for one
// object: its expressions in turn, sharing the lazily evaluated `variables`.

export type Bindings = Record<string, unknown>;

/**
 * One binding's evaluation under Kubernetes' cost limits (cel/runtime-cost.ts): each expression
 * stops at PerCallLimit, all of them together at a budget (RuntimeCELCostBudget for validations,
 * RuntimeCELCostBudgetMatchConditions for match conditions), and every step reports to the
 * object's guard. Variables are evaluated lazily, when an evaluation first reads them, once per
 * binding, and their cost is charged to the expression that read them, as the API server's lazy
 * variables are (admission/plugin/cel/composition.go). A variable that fails is an error value to
 * the expression reading it: `||` and `&&` absorb it when their other side decides, as cel-go does.
 */
export class PolicyRun {
  spent = 0;
  /** Bound as a CEL map over this Map: a plain object would be copied into a map at every access. */
  private readonly values: LazyVariables;
  /** The caller's bindings and this run's `variables`. */
  private readonly bindings: Bindings;
  private pendingVariableCost = 0;

  constructor(
    compiledPolicy: CompiledPolicy,
    bindings: Bindings,
    private readonly guard: EvaluationGuard,
    /** Variables whose value the caller already has (Gatekeeper's `params`), as CEL input. */
    preset: Record<string, unknown> = {},
  ) {
    this.values = new LazyVariables(compiledPolicy, (program) => {
      const outcome = program(this.bindings, new CostTracker(this.guard), 'cel');
      this.pendingVariableCost += outcome.cost;
      return outcome;
    });
    for (const [name, value] of Object.entries(preset)) this.values.preset(name, value);
    // Its own copy rather than a property added to the caller's object: callers pass a spread copy
    // for a second run, and a property added to a spread copy gives every such object a hidden
    // class of its own (model/object-copy.ts), which every variable lookup then reads.
    this.bindings = withFields(bindings, { variables: celMap(this.values as Map<string, CelValue>) });
  }

  /** Evaluates one expression, reading variables as it goes; adds its cost to what the binding spent. */
  evaluate(program: CelProgram, _expression: string): CelOutcome {
    this.values.startReading();
    const outcome = this.withVariableErrors(program(this.bindings, new CostTracker(this.guard)));
    this.spent += outcome.cost + this.pendingVariableCost;
    this.pendingVariableCost = 0;
    return outcome;
  }

  /** Evaluates outside the budget (Forewarn's per-element evidence), still under the guard. */
  evaluateExtra(program: CelProgram, extraBindings: Bindings): CelOutcome {
    this.values.startReading();
    const outcome = program(withFields(this.bindings, extraBindings), new CostTracker(this.guard));
    this.pendingVariableCost = 0;
    return this.withVariableErrors(outcome);
  }

  /**
   * An expression that failed after reading a failed variable failed because of it (the variable's
   * error was not absorbed): its error is the variable's, as the API server words it; a variable
   * using CEL not implemented here leaves the expression unsupported, not failed.
   */
  private withVariableErrors(outcome: CelOutcome): CelOutcome {
    if (outcome.ok) return outcome;
    const failure = this.values.failureRead();
    if (!failure) return outcome;
    return withFields(failure.outcome, {
      cost: outcome.cost,
      message: failure.outcome.unsupported
        ? failure.outcome.message
        : `composited variable "${failure.name}" fails to evaluate: ${failure.outcome.message}`,
    });
  }
}

type VariableFailure = { name: string; outcome: CelOutcome & { ok: false } };

/**
 * The `variables` map of one binding's evaluation: a variable is evaluated on its first read and
 * remembered. A failed one reads as absent (a CEL error at the reading expression, which `||` and
 * `&&` may absorb); which failed variables an expression read is kept to word its error.
 */
class LazyVariables extends Map<string, unknown> {
  private readonly failures = new Map<string, CelOutcome & { ok: false }>();
  private readonly started = new Set<string>();
  private readFailures: VariableFailure[] = [];

  constructor(
    private readonly compiledPolicy: CompiledPolicy,
    private readonly run: (program: CelProgram) => CelOutcome,
  ) {
    super();
  }

  preset(name: string, value: unknown): void {
    super.set(name, value);
    this.started.add(name);
  }

  startReading(): void {
    this.readFailures = [];
  }

  failureRead(): VariableFailure | undefined {
    return this.readFailures[0];
  }

  override has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  override get(name: string): unknown {
    if (!this.started.has(name)) this.evaluateVariable(name);
    const failure = this.failures.get(name);
    if (failure) {
      this.readFailures.push({ name, outcome: failure });
      return undefined;
    }
    return super.get(name);
  }

  private evaluateVariable(name: string): void {
    // Started before it runs: a variable naming itself (refused by the API server) reads as absent.
    this.started.add(name);
    const variable = this.compiledPolicy.variables.find((entry) => entry.name === name);
    if (!variable) return;
    // The variable's own reads are its own: the reading expression sees only this variable's failure.
    const outer = this.readFailures;
    this.readFailures = [];
    const outcome = this.run(variable.program);
    const inner = this.readFailures[0];
    this.readFailures = outer;
    if (outcome.ok) {
      super.set(name, outcome.value);
      return;
    }
    // A failure caused by an unsupported variable it read stays unsupported. A variable stopped
    // by its cost limit is an error value like any other to the expression reading it.
    const { costExceeded: _costExceeded, ...failure } = outcome;
    this.failures.set(name, inner?.outcome.unsupported ? inner.outcome : failure);
  }
}
