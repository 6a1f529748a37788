import {
  AdapterParseError,
  type ConstraintDraft,
  type NamespaceScope,
  type ResourceTarget,
} from '../../../model/constraint';
import { isRecord, type KubernetesObject, type LabelSelector } from '../../../model/kubernetes';
import { AUTOGEN_CONTROLLER_GROUPS, autogenControllersOf } from '../../../model/kyverno-autogen';
import { countOf, listInEnglish, shorten, singleLine } from '../../../model/summary-rules';
import { detail, objectName, text, type Text } from '../../../model/text';
import {
  describeTargets,
  NO_ADMISSION_RULES,
  readMatchResources,
  withoutExcluded,
} from '../shared/admission-rules';
import { readValidationActions, type ValidationOutcomes } from '../shared/validation-actions';
import {
  readOptionalString,
  readRecordList,
  readStringList,
  requireSpec,
  sourceOf,
} from '../shared/object-fields';
import { askOwnerStep, inspectSourceStep } from '../shared/remediation';
import { clusterScope, quoted } from '../shared/scope-text';
import { policyEngineDraft, type EngineOutcome } from './engine-draft';
import { ownEntry } from '../../../model/own-entry';

// Kyverno's CEL policies (policies.kyverno.io): ValidatingPolicy, ImageValidatingPolicy,
// MutatingPolicy, GeneratingPolicy and DeletingPolicy, all cluster-scoped → one Admission constraint
// per policy, named after it (they have no rules to name). Their `matchConstraints` is the
// Kubernetes MatchResources type of ValidatingAdmissionPolicy.

/** `pods, apps/deployments and 3 more`: long target lists would crowd out the rest of the line. */
function targetsText(targets: readonly ResourceTarget[]): Text {
  const names = targets.map((target) => describeTargets([target]));
  return [detail(listInEnglish(names, 4), 'matching resources')];
}

export const KYVERNO_CEL_GROUP = 'policies.kyverno.io';
export const KYVERNO_CEL_KINDS = [
  'ValidatingPolicy',
  'ImageValidatingPolicy',
  'MutatingPolicy',
  'GeneratingPolicy',
  'DeletingPolicy',
] as const;
type CelKind = (typeof KYVERNO_CEL_KINDS)[number];

const ACTION_OUTCOMES: ValidationOutcomes = {
  Deny: { severity: 'Critical', effect: 'deny', verb: 'rejects' },
  Warn: { severity: 'Warning', effect: 'warn', verb: 'warns about' },
  Audit: { severity: 'Warning', effect: 'audit', verb: 'reports' },
};

const MESSAGE_LENGTH = 140;

interface Match {
  targets: ResourceTarget[];
  operations: string[];
  scope: NamespaceScope;
  objectSelector?: LabelSelector;
}

function readMatchConstraints(spec: Record<string, unknown>): Match {
  const match = readMatchResources(spec.matchConstraints, 'spec.matchConstraints');
  const rules = match.rules ?? NO_ADMISSION_RULES;
  const targets = withoutExcluded(rules.targets, match.excluded);
  return {
    targets: [...targets, ...autogenTargets(spec, targets)],
    operations: rules.operations,
    scope: clusterScope(undefined, undefined, match.namespaceSelector),
    ...(match.objectSelector ? { objectSelector: match.objectSelector } : {}),
  };
}

/** Targets for the controllers a Pod policy is auto-generated for (an explicit list is validated). */
function autogenTargets(spec: Record<string, unknown>, targets: readonly ResourceTarget[]): ResourceTarget[] {
  const explicit =
    isRecord(spec.autogen) && isRecord(spec.autogen.podControllers)
      ? readStringList(spec.autogen.podControllers.controllers, 'spec.autogen.podControllers.controllers')
      : [];
  explicit.forEach((controller, index) => {
    if (ownEntry(AUTOGEN_CONTROLLER_GROUPS, controller) === undefined)
      throw new AdapterParseError(
        `spec.autogen.podControllers.controllers[${index}] is ${quoted(controller)}, expected a pod controller resource`,
      );
  });
  const coversPods = targets.some(
    (target) =>
      (target.group === '' || target.group === '*') &&
      (target.resource === 'pods' || target.resource === '*'),
  );
  if (!coversPods) return [];
  const controllers = explicit.length > 0 ? explicit : autogenControllersOf(spec);
  return controllers.flatMap((controller) => {
    const group = ownEntry(AUTOGEN_CONTROLLER_GROUPS, controller);
    if (group === undefined) return [];
    return targets.some((target) => target.resource === controller) ? [] : [{ group, resource: controller }];
  });
}

/** The policy's own messages (rule details), or how many checks it makes. */
function readValidations(spec: Record<string, unknown>, field: string): Text {
  const validations = readRecordList(spec[field], `spec.${field}`);
  const messages = validations.flatMap((validation, index) => {
    const message = readOptionalString(validation.message, `spec.${field}[${index}].message`);
    return message ? [singleLine(message).replace(/[.\s]+$/, '')] : [];
  });
  if (messages.length > 0)
    return text`: ${detail(shorten(messages.join('; '), MESSAGE_LENGTH), 'its validation messages')}`;
  return text` (${countOf(validations.length, 'check')})`;
}

function describe(kind: CelKind, spec: Record<string, unknown>, policy: Text, requests: Text): EngineOutcome {
  const named = text`Kyverno ${kind} "${policy}"`;
  switch (kind) {
    case 'ValidatingPolicy':
    case 'ImageValidatingPolicy': {
      const actions = readValidationActions(spec);
      const outcome = ACTION_OUTCOMES[actions[0]];
      const fails =
        kind === 'ValidatingPolicy'
          ? text`that fail it${readValidations(spec, 'validations')}`
          : text`whose images ${imagesText(spec)} fail its signature or attestation checks`;
      return {
        severity: outcome.severity,
        effect: outcome.effect,
        summary: text`${named} ${outcome.verb} ${requests} ${fails}`,
        hint:
          actions[0] === 'Deny'
            ? text`change your object to pass ${named}, or the API server rejects it`
            : text`fix what ${named} reports before it is enforced`,
        tags: ['kyverno', 'cel', ...actions.map((action) => action.toLowerCase())],
      };
    }
    case 'MutatingPolicy':
    case 'GeneratingPolicy': {
      const mutating = kind === 'MutatingPolicy';
      const count = readRecordList(
        spec[mutating ? 'mutations' : 'generate'],
        `spec.${mutating ? 'mutations' : 'generate'}`,
      ).length;
      return {
        severity: 'Info',
        effect: 'mutate',
        summary: mutating
          ? text`${named} changes ${requests} (${countOf(count, 'mutation')})`
          : text`${named} creates resources for ${requests} (${countOf(count, 'generate rule')})`,
        hint: mutating
          ? text`expect the admitted object to differ from your manifest; compare with kubectl get -o yaml`
          : text`expect extra resources created next to yours; do not create them yourself`,
        tags: ['kyverno', 'cel', mutating ? 'mutate' : 'generate'],
      };
    }
    case 'DeletingPolicy':
      return deletingOutcome(named, requests, readRequiredSchedule(spec));
  }
}

function imagesText(spec: Record<string, unknown>): Text {
  const references = readRecordList(spec.matchImageReferences, 'spec.matchImageReferences').map(
    (reference, index) => {
      const glob = readOptionalString(reference.glob, `spec.matchImageReferences[${index}].glob`);
      const expression = readOptionalString(
        reference.expression,
        `spec.matchImageReferences[${index}].expression`,
      );
      if (glob === undefined && expression === undefined)
        throw new AdapterParseError(`spec.matchImageReferences[${index}] needs a glob or an expression`);
      return glob ?? 'a CEL expression';
    },
  );
  return references.length === 0
    ? text`(any image)`
    : text`matching ${detail(listInEnglish(references), 'certain references')}`;
}

export function readRequiredSchedule(spec: Record<string, unknown>): string {
  const schedule = readOptionalString(spec.schedule, 'spec.schedule');
  if (schedule === undefined || schedule.trim() === '')
    throw new AdapterParseError('spec.schedule must be a cron schedule');
  if (schedule.trim().split(/\s+/).length !== 5 && !schedule.trim().startsWith('@'))
    throw new AdapterParseError(`spec.schedule ${quoted(schedule)} is not a cron schedule (five fields)`);
  return schedule.trim();
}

/** Deleting and cleanup policies delete existing objects on a schedule: a Warning, effect delete. */
export function deletingOutcome(named: Text, objects: Text, schedule: string): EngineOutcome {
  return {
    severity: 'Warning',
    effect: 'delete',
    summary: text`${named} deletes existing ${objects} that match its conditions, ${detail(`on schedule "${schedule}"`, 'on its schedule')}`,
    hint: text`make sure your objects do not match ${named}, or they are deleted at its next run`,
    tags: ['kyverno', 'cleanup', 'delete'],
  };
}

export function kyvernoCelPolicyToConstraints(object: KubernetesObject): ConstraintDraft[] {
  const kind = KYVERNO_CEL_KINDS.find((candidate) => candidate === object.kind);
  if (kind === undefined)
    throw new AdapterParseError(`kind ${quoted(object.kind)} is not a Kyverno CEL policy`);
  const source = sourceOf(object, false);
  const spec = requireSpec(object);
  const match = readMatchConstraints(spec);
  const policy = objectName(source.name, null);
  const requests: Text =
    match.targets.length === 0
      ? text`no requests`
      : kind === 'DeletingPolicy'
        ? targetsText(match.targets)
        : text`${match.operations.includes('*') ? 'all' : match.operations.join(', ')} requests for ${targetsText(match.targets)}`;
  const outcome = describe(kind, spec, [policy], requests);
  return [
    policyEngineDraft({
      id: 'policy',
      name: source.name,
      displayName: [policy],
      source,
      scope: match.scope,
      outcome,
      steps: [
        inspectSourceStep(source, `${kind.toLowerCase()}.${KYVERNO_CEL_GROUP}`),
        askOwnerStep(
          text`Ask the cluster admins who own Kyverno ${kind} "${policy}" for an exception (a PolicyException) if your workload needs one`,
          'cluster-admin',
        ),
      ],
      workloadSelector: match.objectSelector,
      resourceTargets: match.targets,
    }),
  ];
}
