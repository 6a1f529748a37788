import type { Effect, Severity } from '../../../model/api';
import {
  AdapterParseError,
  type AdapterContext,
  type ConstraintDraft,
  type NamespaceScope,
  type ResourceTarget,
} from '../../../model/constraint';
import type { KubernetesObject, LabelSelector } from '../../../model/kubernetes';
import { formatLabelSelector, isEmptySelector } from '../../../model/label-selector';
import { pluralOfKind } from '../../../model/resources';
import { detail, objectName, text, type Text } from '../../../model/text';
import { readRecord, readRecordList, readSelector, readStringList, sourceOf } from '../shared/object-fields';
import { askOwnerStep, inspectSourceStep } from '../shared/remediation';
import { clusterScope, readChoice, scopeText, uniqueSorted } from '../shared/scope-text';
import { kindsInPlural, summariseParameters } from '../../../model/summary-rules';
import { policyEngineDraft } from './engine-draft';
import { configExcludedNamespaces } from './gatekeeper-sources';

// Gatekeeper constraints (group constraints.gatekeeper.sh, one kind per ConstraintTemplate, all
// cluster-scoped) → one Admission constraint per object: which resources it checks, where, and how
// hard. Namespaces Gatekeeper's Config exempts from its webhook are out of scope. Whether an object
// passes is the verdict engine's (verdicts/gatekeeper/), which runs the template's Rego or CEL.

export const GATEKEEPER_GROUP = 'constraints.gatekeeper.sh';

const ENFORCEMENT_ACTIONS = ['deny', 'warn', 'dryrun', 'scoped'] as const;
type AdmissionAction = 'deny' | 'warn' | 'dryrun';

/** The enforcement point of admission; `scoped` actions for other points (audit, gator) block nothing. */
const ADMISSION_ENFORCEMENT_POINTS = new Set(['validation.gatekeeper.sh', '*']);

const ACTION_OUTCOMES: Record<AdmissionAction, { severity: Severity; effect: Effect; verb: string }> = {
  deny: { severity: 'Critical', effect: 'deny', verb: 'rejects' },
  warn: { severity: 'Warning', effect: 'warn', verb: 'warns about' },
  dryrun: { severity: 'Info', effect: 'audit', verb: 'audits (dry run, blocks nothing)' },
};

const ACTION_STRENGTH: readonly AdmissionAction[] = ['dryrun', 'warn', 'deny'];

/**
 * The action at admission. `scoped` (Gatekeeper 3.16+) lists actions per enforcement point; the
 * strongest one applying at admission counts, and none at admission means audit only.
 */
function admissionActionOf(spec: Record<string, unknown>): AdmissionAction {
  const action = readChoice(spec.enforcementAction, 'spec.enforcementAction', ENFORCEMENT_ACTIONS, 'deny');
  if (action !== 'scoped') return action;
  let strongest: AdmissionAction = 'dryrun';
  for (const [index, scoped] of readRecordList(
    spec.scopedEnforcementActions,
    'spec.scopedEnforcementActions',
  ).entries()) {
    const where = `spec.scopedEnforcementActions[${index}]`;
    const scopedAction = readChoice(scoped.action, `${where}.action`, ACTION_STRENGTH, 'deny');
    const points = readRecordList(scoped.enforcementPoints, `${where}.enforcementPoints`).map(
      (point) => point.name,
    );
    const atAdmission = points.some(
      (point) => typeof point === 'string' && ADMISSION_ENFORCEMENT_POINTS.has(point),
    );
    if (atAdmission && ACTION_STRENGTH.indexOf(scopedAction) > ACTION_STRENGTH.indexOf(strongest))
      strongest = scopedAction;
  }
  return strongest;
}

/**
 * `match.kinds` → resource targets. Gatekeeper treats an empty `apiGroups` or `kinds` list as any,
 * and honours `*` in both; no `kinds` at all means every resource (undefined).
 */
function readKindTargets(match: Record<string, unknown>): {
  targets?: ResourceTarget[];
  kindNames: string[];
} {
  const entries = readRecordList(match.kinds, 'spec.match.kinds');
  if (entries.length === 0) return { kindNames: [] };
  const targets: ResourceTarget[] = [];
  const kindNames: string[] = [];
  const seen = new Set<string>();
  entries.forEach((entry, index) => {
    const groups = readStringList(entry.apiGroups, `spec.match.kinds[${index}].apiGroups`);
    const kinds = readStringList(entry.kinds, `spec.match.kinds[${index}].kinds`);
    for (const group of groups.length === 0 ? ['*'] : groups) {
      for (const kind of kinds.length === 0 ? ['*'] : kinds) {
        const target = { group, resource: kind === '*' ? '*' : pluralOfKind(kind) };
        const key = `${target.group}/${target.resource}`;
        if (seen.has(key)) continue;
        seen.add(key);
        targets.push(target);
      }
    }
    kindNames.push(...(kinds.length === 0 ? ['*'] : kinds));
  });
  return { targets, kindNames: uniqueSorted(kindNames) };
}

function describeKinds(kindNames: readonly string[]): Text {
  if (kindNames.length === 0 || kindNames.includes('*')) return text`resources`;
  return [detail(kindsInPlural(kindNames), 'matching resources')];
}

function describeLabels(selector: LabelSelector | undefined): Text {
  if (selector === undefined || isEmptySelector(selector)) return [];
  return text` labelled ${detail(formatLabelSelector(selector), 'with selected labels')}`;
}

/** The namespaces of `match`, less those Gatekeeper's Config exempts from its webhook. */
function constraintScope(match: Record<string, unknown>, context: AdapterContext): NamespaceScope {
  return clusterScope(
    readStringList(match.namespaces, 'spec.match.namespaces'),
    [
      ...readStringList(match.excludedNamespaces, 'spec.match.excludedNamespaces'),
      ...configExcludedNamespaces(context),
    ],
    match.namespaceSelector === undefined
      ? undefined
      : readSelector(match.namespaceSelector, 'spec.match.namespaceSelector'),
  );
}

export function gatekeeperConstraintToConstraints(
  object: KubernetesObject,
  context: AdapterContext,
): ConstraintDraft[] {
  // Constraints are cluster-scoped whatever metadata says; the template is the kind.
  if (typeof object.kind !== 'string' || object.kind === '')
    throw new AdapterParseError('Gatekeeper constraint has no kind');
  const source = sourceOf(object, false);
  const templateKind = object.kind;
  // A constraint without spec is valid: it denies every violating resource everywhere.
  const spec = readRecord(object.spec, 'spec');
  const action = admissionActionOf(spec);
  const match = readRecord(spec.match, 'spec.match');
  const matchScope = readChoice(
    match.scope,
    'spec.match.scope',
    ['*', 'Cluster', 'Namespaced'] as const,
    '*',
  );
  // Only cluster-scoped resources are checked: no workload of any namespace is affected.
  if (matchScope === 'Cluster') return [];

  const { targets, kindNames } = readKindTargets(match);
  const scope = constraintScope(match, context);
  const labelSelector =
    match.labelSelector === undefined
      ? undefined
      : readSelector(match.labelSelector, 'spec.match.labelSelector');
  if (match.name !== undefined && typeof match.name !== 'string')
    throw new AdapterParseError('spec.match.name must be a string');
  const parameters = readRecord(spec.parameters, 'spec.parameters');

  const outcome = ACTION_OUTCOMES[action];
  const constraintName = objectName(source.name, null);
  const named = typeof match.name === 'string' ? text` named ${detail(match.name, 'with a given name')}` : [];
  // Names and short values only: the constraint itself holds the whole parameter tree.
  const parameterText =
    Object.keys(parameters).length > 0
      ? text` (parameters: ${detail(summariseParameters(parameters), 'set by the admins')})`
      : [];
  const summary = text`Gatekeeper ${templateKind} constraint "${constraintName}" ${outcome.verb} ${describeKinds(kindNames)}${named}${describeLabels(labelSelector)} that violate it ${scopeText(scope)}${parameterText}`;
  const remediationHint =
    action === 'deny'
      ? text`change your manifests to satisfy the ${templateKind} constraint "${constraintName}" before applying them, or ask the cluster admins for an exemption`
      : action === 'warn'
        ? text`fix what the ${templateKind} constraint "${constraintName}" warns about when you apply; it may be switched to deny`
        : text`nothing is blocked yet; fix the violations the ${templateKind} constraint "${constraintName}" reports in its status before it is enforced`;
  const templateName = templateKind.toLowerCase();
  return [
    policyEngineDraft({
      id: 'constraint',
      name: source.name,
      displayName: [constraintName],
      source,
      scope,
      outcome: {
        severity: outcome.severity,
        effect: outcome.effect,
        summary,
        hint: remediationHint,
        tags: ['admission', 'policy-engine', 'gatekeeper', templateKind, action],
      },
      steps: [
        // Gatekeeper names each constraint CRD's plural after the lower-cased kind.
        inspectSourceStep(source, templateName),
        {
          type: 'cli',
          description: text`Read the ${templateKind} template to see the rule it checks`,
          // The template is named after the kind, which is visible at every level anyway.
          command: text`kubectl get constrainttemplate ${templateName} -o yaml`,
          requiresPrivilege: 'developer',
          automated: true,
        },
        askOwnerStep(
          text`Ask the cluster admins to exempt your workload from the ${templateKind} constraint "${constraintName}" or to change its parameters`,
          'cluster-admin',
        ),
      ],
      // Gatekeeper's labelSelector reads the object's own labels; Forewarn's workload selector reads
      // pod labels. They are the same only for Pods: for other kinds the verdict decides.
      workloadSelector:
        kindNames.length > 0 && kindNames.every((name) => name === 'Pod') ? labelSelector : undefined,
      resourceTargets: targets,
    }),
  ];
}
