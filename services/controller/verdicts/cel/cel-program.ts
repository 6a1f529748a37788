import { celEnv, isCelError, isCelList, isCelMap, type CelValue } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { KUBERNETES_CEL_FUNCTIONS } from './kubernetes-extensions';
import { LINEAR_STRING_FUNCTIONS } from './linear-strings';
import { NETWORK_CEL_FUNCTIONS } from './network-extensions';
import { OPTIONAL_CEL_FUNCTIONS } from './optional-library';
import { parseWithOptionalSyntax as parse } from './optional-syntax';
import { unlimitedGuard, type EvaluationGuard } from '../guard/evaluation-guard';
import { defineField } from '../../../model/object-copy';
import { factOfEvaluation } from '../evaluation-memo';
import { jsonAsCel } from './json-as-cel';
import {
  CelCostExceeded,
  CostTracker,
  planWithCost,
  type CostedProgram,
  type CostLimitKind,
} from './runtime-cost';

// Compiling and running CEL for admission policies with @bufbuild/cel (docs/decisions.md). JSON
// from Kubernetes objects becomes CEL input once per object: whole numbers are CEL ints (bigint),
// as the API server's schema-typed values are for integer fields.

const environment = celEnv({
  funcs: [
    ...strings,
    ...LINEAR_STRING_FUNCTIONS,
    ...KUBERNETES_CEL_FUNCTIONS,
    ...NETWORK_CEL_FUNCTIONS,
    ...OPTIONAL_CEL_FUNCTIONS,
  ],
});

/**
 * One expression evaluation. `tracker` counts its cost (runtime-cost.ts) against the per-expression
 * limit and the object's guard; without one (tests), the per-expression limit still applies.
 * A guard stop (EvaluationAborted) is thrown, never answered as a CEL error.
 */
export type CelProgram = (
  bindings: Record<string, unknown>,
  tracker?: CostTracker,
  /**
   * `javascript` (default): lists as arrays, maps as objects. `cel`: the value as CEL gives it, for
   * a value that is bound again as CEL input (a variable), which would otherwise be copied twice.
   */
  result?: 'javascript' | 'cel',
) => CelOutcome;

export type CelOutcome =
  | { ok: true; value: unknown; cost: number }
  /**
   * `unsupported`: a function or feature this implementation lacks, not a failure of the object.
   * `costExceeded`: stopped by Kubernetes' per-expression cost limit (an evaluation error there too).
   */
  | { ok: false; message: string; unsupported: boolean; cost: number; costExceeded?: CostLimitKind };

const UNSUPPORTED = /unbound function|unsupported|not implemented|no such overload|unknown (function|macro)/i;

/**
 * Compiling runs on the event loop, in time that grows with the text (a 709 KB `validate.cel`
 * held it 4.4 s) and with its nesting: texts past these bounds are not compiled (issue 32). Real
 * policies' expressions are under 2 KB and nest under 20 levels; compiling 4 KiB takes about 12 ms
 * of CPU on a quiet machine, under the 100 ms hold bound on one oversubscribed 7 times (load 15 on 2
 * cores). cel-go's parser stops at 250 levels of recursion; this stops at 50.
 */
export const MAX_CEL_EXPRESSION_LENGTH = 4 * 1024;
export const MAX_CEL_NESTING = 50;

function nestingDepth(expression: string): number {
  let depth = 0;
  let deepest = 0;
  for (const character of expression) {
    if (character === '(' || character === '[' || character === '{') deepest = Math.max(deepest, ++depth);
    else if (character === ')' || character === ']' || character === '}') depth--;
  }
  return deepest;
}

/** Why an expression is not compiled here, if it is too large to compile within the bounds. */
function tooLargeToCompile(expression: string): string | undefined {
  if (expression.length > MAX_CEL_EXPRESSION_LENGTH)
    return `the expression is ${expression.length} characters long, more than the ${MAX_CEL_EXPRESSION_LENGTH} compiled here`;
  if (nestingDepth(expression) > MAX_CEL_NESTING)
    return `the expression nests deeper than the ${MAX_CEL_NESTING} levels compiled here`;
  return undefined;
}

/** Compiles once; a syntax error gives a program that always answers the error. */
export function compileCel(expression: string): CelProgram {
  const refused = tooLargeToCompile(expression);
  if (refused !== undefined) return () => ({ ok: false, message: refused, unsupported: true, cost: 0 });
  let planned: CostedProgram;
  try {
    planned = planWithCost(environment, parse(expression).expr);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return () => ({ ok: false, message: `does not compile: ${message}`, unsupported: true, cost: 0 });
  }
  return (bindings, tracker = new CostTracker(unlimitedGuard()), resultAs = 'javascript') => {
    try {
      const result = planned(bindings, tracker);
      if (isCelError(result))
        return {
          ok: false,
          message: result.message,
          unsupported: UNSUPPORTED.test(result.message),
          cost: tracker.cost,
        };
      return { ok: true, value: resultAs === 'cel' ? result : fromCel(result), cost: tracker.cost };
    } catch (error) {
      if (error instanceof CelCostExceeded)
        return {
          ok: false,
          message: error.message,
          unsupported: false,
          cost: tracker.cost,
          costExceeded: error.kind,
        };
      throw error;
    }
  };
}

// A policy's own objects (params, Gatekeeper parameters) live as long as their revision in the
// index: converted once per revision.
const convertedObjects = new WeakMap<object, unknown>();

/** A long-lived object (params, a constraint's parameters) as CEL input, converted once. */
export function objectAsCelInput(object: object): unknown {
  const cached = convertedObjects.get(object);
  if (cached !== undefined) return cached;
  const converted = toCelInput(object);
  convertedObjects.set(object, converted);
  return converted;
}

/**
 * The admitted object (or the old one) as CEL input, converted once per evaluation however many
 * policies read it; the conversion counts against the evaluation's guard.
 */
export function admittedAsCelInput(object: object, guard: EvaluationGuard): unknown {
  return factOfEvaluation(guard, 'cel-input', object, () => toCelInput(object, guard));
}

/**
 * JSON (numbers as doubles) → CEL input (whole numbers as ints), as CEL lists and maps whose objects
 * are converted when first read (json-as-cel.ts): @bufbuild/cel would otherwise copy a plain object
 * into a map at every field access. Under a guard, each conversion counts against the object's
 * deadline.
 */
export function toCelInput(value: unknown, guard?: EvaluationGuard): unknown {
  return jsonAsCel(value, guard);
}

/** CEL results → plain JavaScript (lists as arrays, maps as objects). */
function fromCel(value: CelValue): unknown {
  // By index and `forEach`, the same elements and entries in the same order as iterating them, without
  // a generator per list and map: a failing validation's list comes back through here per check.
  if (isCelList(value)) {
    const items: unknown[] = [];
    for (let index = 0; index < value.size; index++) items.push(fromCel(value.get(index) as CelValue));
    return items;
  }
  if (isCelMap(value)) {
    const result: Record<string, unknown> = {};
    value.forEach((item, key) => {
      defineField(result, String(key), fromCel(item));
    });
    return result;
  }
  return value;
}
