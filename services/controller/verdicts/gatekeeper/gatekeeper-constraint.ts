import type { ConstraintDraft as Constraint } from '../../../model/constraint';
import {
  GATEKEEPER_CONSTRAINT_GROUP,
  GATEKEEPER_TEMPLATE_GROUP,
  GatekeeperShapeError,
  readConstraintTemplate,
  templateNameOf,
  type ConstraintTemplateCode,
} from '../../../model/gatekeeper';
import { groupOf, type KubernetesObject } from '../../../model/kubernetes';
import { factOfEvaluation } from '../evaluation-memo';
import { detail, objectName, text } from '../../../model/text';
import { NOT_APPLICABLE, unknown, type VerdictContext, type VerdictOutcome } from '../types';
import { evaluateCelTemplate } from './cel-template';
import { constraintSelects } from './constraint-match';
import { regoEngine, type RegoEngine } from './rego-engine';
import { evaluateRegoTemplate, type RegoConstraint } from './rego-template';

// A Gatekeeper constraint's verdict: does its match select the object, and does its template's
// code (CEL on the CEL evaluator, Rego on OPA) find violations? The template is the indexed
// ConstraintTemplate named after the constraint's kind. A template carrying both engines runs on
// K8sNativeValidation, as Gatekeeper does while its CEL engine is enabled (the default since 3.18).
// The evidence is Gatekeeper's own violation messages; they are `detail` parts, hidden from
// viewers who may not read the constraint (DESIGN.md 7b).

const templates = new WeakMap<KubernetesObject, ConstraintTemplateCode | { error: string }>();

function templateCode(template: KubernetesObject): ConstraintTemplateCode | { error: string } {
  let code = templates.get(template);
  if (!code) {
    try {
      code = readConstraintTemplate(template);
    } catch (error) {
      if (!(error instanceof GatekeeperShapeError)) throw error;
      code = { error: error.message };
    }
    templates.set(template, code);
  }
  return code;
}

/** Whether the constraint's match selects the object, decided once per object. */
function selectionOf(
  source: KubernetesObject,
  context: VerdictContext,
): ReturnType<typeof constraintSelects> {
  return factOfEvaluation(context.guard, 'gatekeeper-match', source, () =>
    constraintSelects(source, context),
  );
}

/** The object's Gatekeeper constraints that select it and whose template is in Rego. */
function regoConstraintsOf(context: VerdictContext): RegoConstraint[] {
  const found: RegoConstraint[] = [];
  for (const constraint of context.constraints ?? []) {
    if (
      constraint.adapter !== 'policyengine' ||
      groupOf(constraint.source.apiVersion) !== GATEKEEPER_CONSTRAINT_GROUP
    )
      continue;
    const source = context.index.sourceOf(constraint);
    if (!source || selectionOf(source, context) !== 'selected') continue;
    const template = context.index.find(
      GATEKEEPER_TEMPLATE_GROUP,
      'ConstraintTemplate',
      null,
      templateNameOf(source.kind ?? ''),
    );
    const code = template ? templateCode(template) : undefined;
    if (code && !('error' in code) && !code.cel && code.rego) found.push({ source, code: code.rego });
  }
  return found;
}

export function evaluateGatekeeperConstraint(
  _constraint: Constraint,
  source: KubernetesObject,
  context: VerdictContext,
  engine: RegoEngine = regoEngine,
): VerdictOutcome {
  const selection = selectionOf(source, context);
  if (selection === 'not-selected') return NOT_APPLICABLE;
  if (selection === 'undecided')
    return unknown(
      text`its namespaceSelector decides whether it applies, and namespace "${context.admitted.namespace}" is not known here (its labels neither)`,
    );
  const kind = source.kind ?? '';
  const templateName = templateNameOf(kind);
  const template = context.index.find(GATEKEEPER_TEMPLATE_GROUP, 'ConstraintTemplate', null, templateName);
  if (!template)
    return unknown(
      text`its ConstraintTemplate ${detail(templateName, 'of the constraint')} is not in the index`,
    );
  const code = templateCode(template);
  if ('error' in code)
    return unknown(
      text`its ConstraintTemplate cannot be read: ${detail(code.error, 'a malformed template')}`,
    );
  const outcome = code.cel
    ? evaluateCelTemplate(code.cel, templateName, source, context)
    : code.rego
      ? evaluateRegoTemplate(code.rego, source, context, engine, () => regoConstraintsOf(context))
      : { unknown: text`its ConstraintTemplate has no code for admission` };
  if ('matched' in outcome) return NOT_APPLICABLE;
  if ('unknown' in outcome) return unknown(outcome.unknown);
  const rule = text`Gatekeeper ${kind} "${objectName(source.metadata?.name ?? '', null)}"`;
  if (outcome.violations.length === 0) return { verdict: 'passes', evidence: [], rule };
  return { verdict: 'violates', evidence: outcome.violations, rejects: 'object', rule };
}
