import {
  celError,
  celType,
  isCelError,
  isCelList,
  isCelMap,
  isCelUint,
  type CelEnv,
  type CelValue,
} from '@bufbuild/cel';
import { EvaluationAborted } from '../guard/evaluation-guard';
import { CostTracker } from './cost-tracker';
import { AppendableList } from './appendable-list';
import { callCost } from './call-cost';

// Kubernetes' runtime CEL cost model, counted while @bufbuild/cel evaluates (docs/decisions.md,
// "CEL cost as the API server counts it"). The API server evaluates every admission-policy
// expression with cel-go's cost tracker (interpreter/runtimecost.go) and Kubernetes' library cost
// estimator (k8s.io/apiserver/pkg/cel/library/cost.go), stops an expression past PerCallLimit and a
// binding's evaluation past RuntimeCELCostBudget. Both stops are evaluation errors there, which the
// policy's failurePolicy turns into a rejection (Fail) or nothing (Ignore).
//
// How: @bufbuild/cel plans an expression into a tree of Eval* nodes (planner.js), the same shape as
// cel-go's interpretables. The plan is built here and every node is decorated after planning with
// the charge cel-go's observer makes for the matching interpretable, so evaluation stays
// @bufbuild/cel's own (its conformance suite passes unchanged) and the cost is what cel-go counts.
// Every charge also goes to the object's EvaluationGuard (deadline and work budget); comprehension
// steps call its checkpoint.

// github.com/google/cel-go v0.26.0 (the version k8s.io/apiserver v0.34.4 requires), common/cost.go.
const SELECT_AND_IDENT_COST = 1;
const LIST_CREATE_BASE_COST = 10;
const MAP_CREATE_BASE_COST = 30;
const STRUCT_CREATE_BASE_COST = 40;

export {
  CelCostExceeded,
  CostTracker,
  PER_CALL_LIMIT,
  RUNTIME_CEL_COST_BUDGET,
  RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS,
  type CostLimitKind,
} from './cost-tracker';

// The evaluation that is running (evaluation is synchronous; nested ones restore the outer one).
let activeTracker: CostTracker | undefined;

function charge(units: number): void {
  activeTracker?.charge(units);
}

import {
  activationModule,
  evalContextModule,
  plannerModule,
  type AccessNode,
  type Activation,
  type AttributeNode,
  type EvalAttrNode,
  type Interpretable,
} from './plan-internals';
import { dropUnresolvableCandidates } from './attribute-candidates';

const kindOf = (node: object): string => node.constructor.name;
const decorated = new WeakSet<object>();

class IterationActivation implements Activation {
  constructor(
    readonly name: string,
    public value: unknown,
    readonly parent: Activation,
  ) {}
  resolve(name: string): unknown {
    return name === this.name ? this.value : this.parent.resolve(name);
  }
}

function noOverload(node: { id: number; name: string }, target: unknown, values: unknown[]): unknown {
  const types = values.map((value) => celType(value as CelValue).name).join(', ');
  const receiver = target !== undefined ? `${celType(target as CelValue).name}.` : '';
  return celError(
    `found no matching overload for '${node.name}' applied to '${receiver}(${types})'`,
    node.id,
  );
}

type CallNode = Interpretable & {
  name: string;
  target?: Interpretable;
  args: Interpretable[];
  func?: { call(id: number, target: unknown, args: unknown[]): unknown };
};

// Type conversions cel-go (OptOptimize) evaluates while planning when their argument is a constant.
const CONVERSIONS = new Set([
  'int',
  'uint',
  'double',
  'string',
  'bytes',
  'bool',
  'timestamp',
  'duration',
  'dyn',
  'type',
]);

const isConstant = (node: Interpretable) => kindOf(node) === 'EvalConst';
const isConstantLiteral = (node: Interpretable): boolean =>
  isConstant(node) ||
  (kindOf(node) === 'EvalList' &&
    (node as Interpretable & { elems: Interpretable[] }).elems.every(isConstant));

/**
 * What cel-go's optimiser leaves of a call's cost: nothing for a conversion of a constant (folded),
 * nothing for `x in [constants]` (a set lookup its cost observer does not charge).
 */
function costlessCall(node: CallNode): boolean {
  if (
    CONVERSIONS.has(node.name) &&
    node.target === undefined &&
    node.args.length === 1 &&
    isConstant(node.args[0])
  )
    return true;
  return node.name === '@in' && node.args.length === 2 && isConstantLiteral(node.args[1]);
}

function decorateCall(node: CallNode): void {
  const free = costlessCall(node);
  node.eval = function evalCall(activation) {
    if (this.func === undefined) return celError(`unbound function: ${this.name}`, this.id);
    // cel-go evaluates every argument and charges the call even when one of them is an error.
    const target = this.target?.eval(activation);
    const values: unknown[] = [];
    // The first error among the target and the arguments, found without a list of them all: every
    // operator of every expression is a call.
    let firstError: unknown = target !== undefined && isCelError(target) ? target : undefined;
    for (const argument of this.args) {
      const value = argument.eval(activation);
      if (firstError === undefined && isCelError(value)) firstError = value;
      values.push(value);
    }
    const all = target === undefined ? values : [target, ...values];
    if (firstError !== undefined) {
      if (!free) charge(callCost(this.name, all, firstError));
      return firstError;
    }
    let result: unknown;
    if (this.name === '_+_' && isCelList(all[0]) && isCelList(all[1]))
      result = AppendableList.concat(all[0], all[1], (maximum) => {
        const stop = new EvaluationAborted(
          'work',
          `a CEL expression builds a list of more than ${maximum} elements`,
        );
        if (activeTracker) activeTracker.stop(stop);
        throw stop;
      });
    else result = this.func.call(this.id, target, values);
    if (activeTracker?.stopped) throw activeTracker.stopped;
    if (result === undefined) return noOverload(this, target, values);
    // cel-go charges calls that returned an error too (the observer sees every result).
    if (!free) charge(callCost(this.name, all, result));
    return result;
  };
}

type FoldNode = Interpretable & {
  accuVar: string;
  iterVar: string;
  iterRange: Interpretable;
  accu: Interpretable;
  cond: Interpretable;
  step: Interpretable;
  result: Interpretable;
};

/** cel-go's fold, with the guard's checkpoint at every step and no copy of the range. */
function decorateFold(node: FoldNode): void {
  node.eval = function evalFold(activation) {
    const initial = this.accu.eval(activation);
    if (isCelError(initial)) return initial;
    const accumulator = new IterationActivation(this.accuVar, initial, activation);
    const range = this.iterRange.eval(activation);
    if (isCelError(range)) return range;
    let items: Iterable<unknown>;
    if (isCelMap(range)) items = range.keys();
    else if (isCelList(range)) items = range;
    else return celError(`type mismatch: iterable vs ${celType(range as CelValue).name}`, this.id);
    for (const item of items) {
      activeTracker?.checkpoint();
      if (isCelError(item)) return item;
      const iteration = new IterationActivation(this.iterVar, item, accumulator);
      const condition = this.cond.eval(iteration);
      if (isCelError(condition)) return condition;
      if (condition !== true) break;
      accumulator.value = this.step.eval(iteration);
    }
    return this.result.eval(accumulator);
  };
}

/** Charges one unit per qualifier applied (cel-go observes every qualification). */
function decorateAccess(access: AccessNode): void {
  if (decorated.has(access)) return;
  decorated.add(access);
  const kind = kindOf(access);
  if (kind === 'EvalAttr') {
    // A computed index `a[i]` or `a[f(x)]`: one unit for the qualification; the index expression's
    // own attribute is resolved, not evaluated, in cel-go (no identifier charge).
    const attribute = access as EvalAttrNode;
    decorateAttribute(attribute.attr);
  } else if (kind === 'EvalAccess') {
    const key = (access as AccessNode & { key: EvalAttrNode }).key;
    decorateAttribute(key.attr);
    // EvalAccess evaluates its key with eval(): resolve it instead, as cel-go does.
    key.eval = function resolveKey(activation) {
      const value = this.resolve(activation);
      return value === undefined ? celError('unresolved attribute', this.id) : value;
    };
  }
  for (const method of ['access', 'accessIfPresent', 'isPresent'] as const) {
    const original = access[method];
    if (typeof original !== 'function') continue;
    // The three parameters @bufbuild/cel's access methods take (vars, obj, presenceOnly), passed on
    // as such: no rest list per access.
    (access as Record<string, unknown>)[method] = function chargedAccess(
      this: AccessNode,
      vars: unknown,
      object: unknown,
      presenceOnly: unknown,
    ) {
      const result = (original as (...parameters: unknown[]) => unknown).call(
        this,
        vars,
        object,
        presenceOnly,
      );
      charge(SELECT_AND_IDENT_COST);
      return result;
    };
  }
}

function decorateAttribute(attribute: AttributeNode): void {
  if (decorated.has(attribute)) return;
  decorated.add(attribute);
  dropUnresolvableCandidates(attribute);
  for (const access of attribute.accesses_ ?? []) decorateAccess(access);
  for (const candidate of attribute.attrs ?? []) decorateAttribute(candidate);
  if (attribute.operand) decorateNode(attribute.operand);
  if (attribute.cond) decorateNode(attribute.cond);
  if (attribute.t) decorateEvalAttr(attribute.t, false);
  if (attribute.f) decorateEvalAttr(attribute.f, false);
}

function decorateEvalAttr(node: EvalAttrNode, chargesItself: boolean): void {
  decorateAttribute(node.attr);
  if (decorated.has(node)) return;
  decorated.add(node);
  // A conditional costs nothing itself; any other attribute is one identifier or select.
  if (!chargesItself || kindOf(node.attr) === 'ConditionalAttr') return;
  const original = node.eval;
  node.eval = function evalAttribute(activation) {
    const value = original.call(this, activation);
    charge(SELECT_AND_IDENT_COST);
    return value;
  };
}

function decorateNode(node: Interpretable): void {
  switch (kindOf(node)) {
    case 'EvalConst':
    case 'EvalErr':
      return;
    case 'EvalAttr':
      decorateEvalAttr(node as EvalAttrNode, true);
      return;
    case 'EvalHas': {
      // has(): the tested field is one unit, the attribute's own select costs nothing
      // (Kubernetes sets PresenceTestHasCost(false)).
      const has = node as Interpretable & { attr: EvalAttrNode; access: AccessNode };
      decorateAttribute(has.attr.attr);
      decorateAccess(has.access);
      return;
    }
    case 'EvalCall': {
      const call = node as CallNode;
      if (call.target) decorateNode(call.target);
      call.args.forEach(decorateNode);
      decorateCall(call);
      return;
    }
    case 'EvalNotStrictlyFalse': {
      const notStrictlyFalse = node as Interpretable & { arg: Interpretable };
      decorateNode(notStrictlyFalse.arg);
      const original = node.eval;
      // A call in cel-go (`@not_strictly_false`), at the default cost of 1.
      node.eval = function evalNotStrictlyFalse(activation) {
        const value = original.call(this, activation);
        charge(1);
        return value;
      };
      return;
    }
    case 'EvalAnd':
    case 'EvalOr':
      (node as Interpretable & { args: Interpretable[] }).args.forEach(decorateNode);
      return;
    case 'EvalList':
    case 'EvalMap':
    case 'EvalObj': {
      const kind = kindOf(node);
      const parts =
        kind === 'EvalList'
          ? (node as Interpretable & { elems: Interpretable[] }).elems
          : kind === 'EvalMap'
            ? [
                ...(node as Interpretable & { keys: Interpretable[] }).keys,
                ...(node as Interpretable & { values: Interpretable[] }).values,
              ]
            : (node as Interpretable & { values: Interpretable[] }).values;
      parts.forEach(decorateNode);
      // cel-go (OptOptimize) folds a literal of constants into a constant: no cost.
      if (parts.every((part) => kindOf(part) === 'EvalConst')) return;
      const base =
        kind === 'EvalList'
          ? LIST_CREATE_BASE_COST
          : kind === 'EvalMap'
            ? MAP_CREATE_BASE_COST
            : STRUCT_CREATE_BASE_COST;
      const original = node.eval;
      node.eval = function evalConstruction(activation) {
        const value = original.call(this, activation);
        charge(base);
        return value;
      };
      return;
    }
    case 'EvalFold': {
      const fold = node as FoldNode;
      for (const part of [fold.accu, fold.iterRange, fold.cond, fold.step, fold.result]) decorateNode(part);
      decorateFold(fold);
      return;
    }
    default:
      throw new Error(`CEL cost: a plan node of an unknown kind (${kindOf(node)}); @bufbuild/cel changed`);
  }
}

export interface CostedProgram {
  /** Evaluates under `tracker`; throws the tracker's stop (cost or guard) whatever the expression does. */
  (bindings: Record<string, unknown>, tracker: CostTracker): CelValue;
}

/** Plans a parsed expression with cost counting (the equivalent of @bufbuild/cel's `plan`). */
export function planWithCost(environment: CelEnv, expression: unknown): CostedProgram {
  const planner = new plannerModule.Planner(environment.funcs, environment.registry, environment.namespace);
  const root = planner.plan(expression);
  decorateNode(root);
  const withContext = evalContextModule.withEvalContext(
    { registry: environment.registry },
    {
      eval(activation: Activation): unknown {
        return root.eval(activation);
      },
    },
  );
  return (bindings, tracker) => {
    const outer = activeTracker;
    activeTracker = tracker;
    let value: unknown;
    try {
      value = withContext.eval(new activationModule.ObjectActivation(bindings));
    } catch (error) {
      if (tracker.stopped) throw tracker.stopped;
      value = celError(error instanceof Error ? error.message : String(error), root.id);
    } finally {
      activeTracker = outer;
    }
    if (tracker.stopped) throw tracker.stopped;
    return toPlainCel(value);
  };
}

/** Our accumulator lists are CEL lists already; uints and the rest pass through. */
function toPlainCel(value: unknown): CelValue {
  if (isCelUint(value)) return value;
  return value as CelValue;
}
