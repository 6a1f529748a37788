import { isRecord } from '../../../model/kubernetes';
import { evaluateOperator, UnknownOperator } from './condition-operators';
import { KyvernoRuleError } from './kyverno-errors';
import { substituteVariables, type JsonContext } from './kyverno-variables';

// Kyverno's conditions (preconditions, deny.conditions, foreach preconditions): `any` holds when one
// of its conditions does (an empty `any` never holds), `all` when every one does, both when both do;
// the older form, a plain list, when every condition does. Key and value are substituted first.

function conditionHolds(condition: unknown, context: JsonContext, checkpoint: () => void): boolean {
  if (!isRecord(condition)) throw new KyvernoRuleError('a condition is not an object');
  const key = substituteVariables(condition.key ?? null, context, checkpoint);
  const value = substituteVariables(condition.value ?? null, context, checkpoint);
  const operator = typeof condition.operator === 'string' ? condition.operator : '';
  try {
    return evaluateOperator(operator, key, value);
  } catch (error) {
    if (error instanceof UnknownOperator) throw new KyvernoRuleError(error.message);
    throw error;
  }
}

/** Whether conditions hold; throws NotEvaluable or KyvernoRuleError as variables do. */
export function conditionsHold(conditions: unknown, context: JsonContext, checkpoint: () => void): boolean {
  if (conditions === undefined || conditions === null) return true;
  if (Array.isArray(conditions))
    return conditions.every((condition) => {
      checkpoint();
      return conditionHolds(condition, context, checkpoint);
    });
  if (!isRecord(conditions)) throw new KyvernoRuleError('conditions are neither a list nor any/all');
  if (Array.isArray(conditions.any)) {
    const anyHolds = conditions.any.some((condition) => {
      checkpoint();
      return conditionHolds(condition, context, checkpoint);
    });
    if (!anyHolds) return false;
  }
  if (Array.isArray(conditions.all))
    return conditions.all.every((condition) => {
      checkpoint();
      return conditionHolds(condition, context, checkpoint);
    });
  return true;
}
