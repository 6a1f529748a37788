import type { Effect, Severity } from '../../../model/api';
import { AdapterParseError } from '../../../model/constraint';
import { readStringList } from './object-fields';

// `validationActions` (Deny, Warn, Audit) of ValidatingAdmissionPolicyBindings and of Kyverno's CEL
// policies, which copied the field.

/** `validationActions` of admission policy bindings and Kyverno's CEL policies, strongest first. */
export const VALIDATION_ACTIONS = ['Deny', 'Warn', 'Audit'] as const;
export type ValidationAction = (typeof VALIDATION_ACTIONS)[number];

/** What each action does to a request that fails the policy; the sources differ on Audit. */
export type ValidationOutcomes = Record<
  ValidationAction,
  { severity: Severity; effect: Effect; verb: string }
>;

/** `spec.validationActions`: at least one, each known; returned strongest first without duplicates. */
export function readValidationActions(spec: Record<string, unknown>): ValidationAction[] {
  const actions = readStringList(spec.validationActions, 'spec.validationActions').map((action, index) => {
    const known = VALIDATION_ACTIONS.find((candidate) => candidate === action);
    if (known === undefined)
      throw new AdapterParseError(
        `spec.validationActions[${index}] is ${JSON.stringify(action)}, expected Deny, Warn or Audit`,
      );
    return known;
  });
  if (actions.length === 0)
    throw new AdapterParseError('spec.validationActions must name Deny, Warn or Audit');
  return VALIDATION_ACTIONS.filter((action) => actions.includes(action));
}
