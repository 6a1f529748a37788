import type { EvaluationGuard } from './guard/evaluation-guard';

// What evaluators derive from the admitted object and share while one evaluation lasts: its CEL
// input (every CEL policy reads it), its pods with the namespace's LimitRange defaults (every quota
// and limit range reads them). One evaluation is one guard, and evaluations run one at a time,
// synchronously (evaluate.ts): the facts of the current evaluation are kept until the next begins.
// A WeakMap keyed by each admitted object cost more than the work it saved (measured: weak entries
// of short-lived keys are traced again at every garbage collection).

let current: { guard: EvaluationGuard; facts: Map<string, Map<object, unknown>> } | undefined;

/**
 * The fact named `fact` about `subject` in this evaluation, derived at its first request. A name
 * stands for one derivation, so all its values have one type.
 */
export function factOfEvaluation<Value>(
  guard: EvaluationGuard,
  fact: string,
  subject: object,
  derive: () => Value,
): Value {
  if (current?.guard !== guard) current = { guard, facts: new Map() };
  let values = current.facts.get(fact);
  if (!values) {
    values = new Map();
    current.facts.set(fact, values);
  }
  if (values.has(subject)) return values.get(subject) as Value;
  const value = derive();
  values.set(subject, value);
  return value;
}
