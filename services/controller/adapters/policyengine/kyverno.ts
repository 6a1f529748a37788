import type { Effect, Severity } from '../../../model/api';
import {
  AdapterParseError,
  type ConstraintDraft,
  type NamespaceScope,
  type ResourceTarget,
  type SourceObject,
} from '../../../model/constraint';
import { isStringRecord, type KubernetesObject } from '../../../model/kubernetes';
import { kindsInPlural, listInEnglish, shorten, singleLine } from '../../../model/summary-rules';
import { formatLabelSelector, isEmptySelector } from '../../../model/label-selector';
import { detail, objectName, text, type Text } from '../../../model/text';
import { KYVERNO_AUTOGEN_KINDS } from '../../../model/workload-kinds';
import {
  readOptionalString,
  readRecord,
  readRecordList,
  readOptionalSelector,
  readStringList,
  requireSpec,
  sourceOf,
} from '../shared/object-fields';
import { readExcludedNamespaces, readMatch, type ResourceFilter } from './kyverno-match';
import { policyEngineDraft } from './engine-draft';
import { askOwnerStep, inspectSourceStep, ownerPrivilege } from '../shared/remediation';
import { clusterScope, quoted, readRequiredString, scopeText, uniqueSorted } from '../shared/scope-text';

// kyverno.io ClusterPolicy (cluster-scoped) and Policy (namespaced) → one Admission constraint per
// rule, named `<policy>/<rule>` always, so a constraint keeps its name when rules are added.

export const KYVERNO_GROUP = 'kyverno.io';

const RULE_TYPES = ['validate', 'mutate', 'generate', 'verifyImages'] as const;
type RuleType = (typeof RULE_TYPES)[number];

type FailureAction = 'Enforce' | 'Audit';

/** How much of a policy's own message a summary quotes. */
const MESSAGE_LENGTH = 140;

/** Kyverno accepts the lower-case spellings of older releases. */
function readFailureAction(value: unknown, where: string): FailureAction | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === 'Enforce' || value === 'enforce') return 'Enforce';
  if (value === 'Audit' || value === 'audit') return 'Audit';
  throw new AdapterParseError(`${where} is ${quoted(value)}, expected Enforce or Audit`);
}

interface ActionOverride {
  action: FailureAction;
  scope: NamespaceScope;
}

/**
 * Per-namespace overrides (`validationFailureActionOverrides`, rule-level `failureActionOverrides`):
 * Kyverno takes the first whose namespaces (wildcards allowed) and selector both admit the
 * namespace; one naming neither admits no namespace and is dropped.
 */
function readOverrides(value: unknown, where: string): ActionOverride[] {
  return readRecordList(value, where).flatMap((override, index) => {
    const at = `${where}[${index}]`;
    const action = readFailureAction(override.action, `${at}.action`);
    const namespaces = readStringList(override.namespaces, `${at}.namespaces`);
    const selector = readOptionalSelector(override.namespaceSelector, `${at}.namespaceSelector`);
    if (action === undefined || (namespaces.length === 0 && selector === undefined)) return [];
    return [{ action, scope: clusterScope(namespaces, undefined, selector) }];
  });
}

interface RuleAction {
  action: FailureAction;
  /** Namespaces where the rule enforces or audits differently, first match wins. */
  overrides: ActionOverride[];
}

/**
 * How a validating rule fails: the rule's own `failureAction` (Kyverno 1.13+) wins over the policy's
 * `validationFailureAction` (default Audit); the rule's `failureActionOverrides` win over the
 * policy's `validationFailureActionOverrides`. The index applies overrides per namespace.
 */
function ruleActionOf(
  spec: Record<string, unknown>,
  rule: Record<string, unknown>,
  type: RuleType,
  where: string,
  clusterScoped: boolean,
): RuleAction {
  const policyAction =
    readFailureAction(spec.validationFailureAction, 'spec.validationFailureAction') ?? 'Audit';
  let ruleAction: FailureAction | undefined;
  let overrides = readOverrides(
    spec.validationFailureActionOverrides,
    'spec.validationFailureActionOverrides',
  );
  if (type === 'validate') {
    const validate = readRecord(rule.validate, `${where}.validate`);
    ruleAction = readFailureAction(validate.failureAction, `${where}.validate.failureAction`);
    if (validate.failureActionOverrides !== undefined && validate.failureActionOverrides !== null)
      overrides = readOverrides(validate.failureActionOverrides, `${where}.validate.failureActionOverrides`);
  }
  if (type === 'verifyImages') {
    const actions = readRecordList(rule.verifyImages, `${where}.verifyImages`).map((entry, index) =>
      readFailureAction(entry.failureAction, `${where}.verifyImages[${index}].failureAction`),
    );
    if (actions.includes('Enforce')) ruleAction = 'Enforce';
    else if (actions.includes('Audit')) ruleAction = 'Audit';
  }
  // `admission: false` runs the policy in background scans only: nothing is rejected on apply.
  if (spec.admission === false) return { action: 'Audit', overrides: [] };
  // Kyverno honours per-namespace overrides in ClusterPolicies only (read above to validate them).
  if (!clusterScoped || (type !== 'validate' && type !== 'verifyImages')) overrides = [];
  return { action: ruleAction ?? policyAction, overrides };
}

function ruleTypeOf(rule: Record<string, unknown>, where: string): RuleType {
  const present = RULE_TYPES.filter((type) => rule[type] !== undefined && rule[type] !== null);
  if (present.length !== 1)
    throw new AdapterParseError(
      `${where} must have exactly one of ${RULE_TYPES.join(', ')}${present.length > 1 ? ` (has ${present.join(', ')})` : ''}`,
    );
  return present[0];
}

/** `apps/v1/Deployment` → `Deployment`, `Pod/exec` → `Pod exec`: the kind as a developer names it. */
function kindLabel(kind: string): string {
  const parts = kind.split('/');
  const kindIndex = parts.findIndex((part) => /^[A-Z*]/.test(part));
  if (kindIndex === -1) return kind;
  const subresource = parts.slice(kindIndex + 1).join('/');
  return subresource ? `${parts[kindIndex]} ${subresource}` : parts[kindIndex];
}

function describeKinds(filter: ResourceFilter, autogen: readonly string[]): Text {
  const kinds = uniqueSorted((filter.kindNames ?? []).map(kindLabel));
  if (kinds.length === 0 || kinds.includes('*')) return text`resources`;
  const described =
    autogen.length === POD_CONTROLLERS.length
      ? `${kindsInPlural(kinds)} and their controllers`
      : kindsInPlural([...kinds, ...autogen]);
  return [detail(described, 'matching resources')];
}

/** ` named a, b labelled app=web`: narrowing that is a rule detail. */
function describeNarrowing(filter: ResourceFilter): Text {
  const parts: Text[] = [];
  if (filter.names !== undefined)
    parts.push(text` named ${detail(listInEnglish(filter.names), 'with given names')}`);
  if (filter.selector !== undefined && !isEmptySelector(filter.selector))
    parts.push(text` labelled ${detail(formatLabelSelector(filter.selector), 'with selected labels')}`);
  return parts.flat();
}

/** The image patterns a verifyImages rule checks; it applies only to pods running such images. */
function imageReferencesOf(rule: Record<string, unknown>, where: string): string[] {
  return readRecordList(rule.verifyImages, `${where}.verifyImages`).flatMap((entry, index) => {
    const at = `${where}.verifyImages[${index}]`;
    // `image` is the single-reference spelling of Kyverno before 1.9.
    return entry.imageReferences !== undefined
      ? readStringList(entry.imageReferences, `${at}.imageReferences`)
      : [readRequiredString(entry.image, `${at}.imageReferences`)];
  });
}

/**
 * What the rule checks, in two parts around the scope: a clause after the resources (` that fail
 * validation`) and a trailer at the end of the line (`: <message>`), so the line reads naturally;
 * generate rules also name what they create in the verb.
 */
function describeRuleBody(
  rule: Record<string, unknown>,
  type: RuleType,
  where: string,
): { verb?: Text; clause: Text; trailer: Text } {
  if (type === 'validate') {
    const validate = readRecord(rule.validate, `${where}.validate`);
    const podSecurity = readRecord(validate.podSecurity, `${where}.validate.podSecurity`);
    const clause =
      typeof podSecurity.level === 'string'
        ? text` that break Pod Security level ${detail(podSecurity.level, 'set by the policy')}`
        : text` that fail validation`;
    const message = readOptionalString(validate.message, `${where}.validate.message`);
    // Messages are often block scalars over several lines: one short line here, whole in the policy.
    const line = message ? shorten(singleLine(message), MESSAGE_LENGTH) : '';
    return { clause, trailer: line ? text`: ${detail(line, 'see the policy message')}` : [] };
  }
  if (type === 'verifyImages') {
    const images = imageReferencesOf(rule, where);
    return {
      clause: text` whose images ${detail(listInEnglish(images, 3), 'from some registries')} are not signed as required`,
      trailer: [],
    };
  }
  if (type === 'generate') {
    const generate = readRecord(rule.generate, `${where}.generate`);
    const kind = readOptionalString(generate.kind, `${where}.generate.kind`);
    return {
      verb: text`creates ${detail(kind ?? 'resources', 'resources')} for new`,
      clause: [],
      trailer: [],
    };
  }
  return { clause: text` on admission`, trailer: [] };
}

interface RuleOutcome {
  severity: Severity;
  effect: Effect;
  verb: string;
}

function outcomeOf(type: RuleType, action: FailureAction): RuleOutcome {
  if (type === 'mutate') return { severity: 'Info', effect: 'mutate', verb: 'mutates' };
  // Generated resources change the cluster on the developer's behalf, like a mutation does.
  if (type === 'generate') return { severity: 'Info', effect: 'mutate', verb: 'creates resources for new' };
  return action === 'Enforce'
    ? { severity: 'Critical', effect: 'deny', verb: 'rejects' }
    : { severity: 'Warning', effect: 'audit', verb: 'reports (audit only)' };
}

function hintFor(type: RuleType, action: FailureAction, policy: Text, rule: Text, kind: string): Text {
  if (type === 'mutate')
    return text`expect Kyverno rule "${rule}" of ${kind} "${policy}" to change matching resources on admission; keep your manifests consistent with it`;
  if (type === 'generate')
    return text`expect Kyverno rule "${rule}" of ${kind} "${policy}" to create resources for you; do not edit or delete them`;
  if (type === 'verifyImages')
    return action === 'Enforce'
      ? text`deploy only images signed as Kyverno rule "${rule}" of ${kind} "${policy}" requires, or they are rejected`
      : text`sign your images as Kyverno rule "${rule}" of ${kind} "${policy}" expects; unsigned ones are reported`;
  return action === 'Enforce'
    ? text`change your resource to pass Kyverno rule "${rule}" of ${kind} "${policy}" before applying it, or ask its owner for an exception`
    : text`fix the violations of Kyverno rule "${rule}" of ${kind} "${policy}" in your namespace's PolicyReport; the policy may be switched to Enforce`;
}

/** The pod controllers Kyverno's auto-generation covers by default (model/workload-kinds.ts). */
const POD_CONTROLLERS: readonly string[] = KYVERNO_AUTOGEN_KINDS.map((entry) => entry.kind);
const POD_CONTROLLER_TARGETS: Record<string, ResourceTarget> = Object.fromEntries(
  KYVERNO_AUTOGEN_KINDS.map((entry) => [entry.kind, { group: entry.group, resource: entry.plural }]),
);
export const AUTOGEN_ANNOTATION = 'pod-policies.kyverno.io/autogen-controllers';

/**
 * The controllers a Pod rule also applies to through Kyverno's auto-generation: all of them unless
 * the annotation says `none` or lists some. Kyverno generates nothing for rules on other kinds too,
 * or that filter by name or labels (they may not hold for the controller), nor for generate rules.
 */
function autogenControllers(
  annotations: Record<string, string>,
  type: RuleType,
  matched: ResourceFilter,
): string[] {
  if (type === 'generate' || matched.names !== undefined || matched.selector !== undefined) return [];
  const kinds = matched.kindNames ?? [];
  if (kinds.length === 0 || !kinds.every((kind) => /^(v1\/)?Pod$/.test(kind))) return [];
  const annotation = annotations[AUTOGEN_ANNOTATION];
  if (annotation === undefined) return [...POD_CONTROLLERS];
  const listed = annotation.split(',').map((entry) => entry.trim());
  return POD_CONTROLLERS.filter((controller) => listed.includes(controller));
}

/** The summary, hint and tags of a rule under one failure action (it may differ per namespace). */
function describeRule(
  source: SourceObject,
  ruleName: string,
  type: RuleType,
  action: FailureAction,
  filter: { matched: ResourceFilter; autogen: string[]; scope: NamespaceScope },
  body: { verb?: Text; clause: Text; trailer: Text },
): { outcome: RuleOutcome; summary: Text; remediationHint: Text; tags: string[] } {
  const outcome = outcomeOf(type, action);
  const policy = objectName(source.name, source.namespace);
  const ruleText = objectName(ruleName, source.namespace);
  const kinds = describeKinds(filter.matched, filter.autogen);
  const summary = text`Kyverno ${source.kind} "${policy}" rule "${ruleText}" ${body.verb ?? [outcome.verb]} ${kinds}${describeNarrowing(filter.matched)}${body.clause} ${scopeText(filter.scope)}${body.trailer}`;
  const tags = ['admission', 'policy-engine', 'kyverno', type];
  if (type === 'validate' || type === 'verifyImages') tags.push(action === 'Enforce' ? 'enforce' : 'audit');
  if (filter.autogen.length > 0) tags.push('autogen');
  return {
    outcome,
    summary,
    remediationHint: hintFor(type, action, [policy], [ruleText], source.kind),
    tags,
  };
}

function buildRuleConstraint(
  source: SourceObject,
  spec: Record<string, unknown>,
  rule: Record<string, unknown>,
  where: string,
  annotations: Record<string, string>,
): ConstraintDraft {
  const ruleName = readRequiredString(rule.name, `${where}.name`);
  const type = ruleTypeOf(rule, where);
  const { action, overrides } = ruleActionOf(spec, rule, type, where, source.namespace === null);
  const matched = readMatch(rule.match, `${where}.match`);
  const excluded = readExcludedNamespaces(rule.exclude, `${where}.exclude`, matched);
  // A namespaced Policy applies in its own namespace only, whatever its rules' namespace lists say.
  const scope: NamespaceScope =
    source.namespace === null
      ? clusterScope(matched.namespaces, excluded, matched.namespaceSelector)
      : { kind: 'namespace', namespace: source.namespace };
  const autogen = autogenControllers(annotations, type, matched);
  const filter = { matched, autogen, scope };
  const body = describeRuleBody(rule, type, where);
  const described = describeRule(source, ruleName, type, action, filter, body);
  const policy = objectName(source.name, source.namespace);
  const ruleText = objectName(ruleName, source.namespace);
  const draft = policyEngineDraft({
    id: `rule:${ruleName}`,
    name: `${source.name}/${ruleName}`,
    displayName: text`${policy}/${ruleText}`,
    source,
    scope,
    outcome: {
      severity: described.outcome.severity,
      effect: described.outcome.effect,
      summary: described.summary,
      hint: described.remediationHint,
      tags: described.tags,
    },
    steps: [
      // `policy` alone is ambiguous when other engines install a Policy kind; the group settles it.
      inspectSourceStep(source, source.namespace === null ? 'clusterpolicy.kyverno.io' : 'policy.kyverno.io'),
      askOwnerStep(
        text`Ask the owner of ${source.kind} "${policy}" for an exception to rule "${ruleText}" or a change to it`,
        ownerPrivilege(source),
      ),
    ],
  });
  if (overrides.length > 0)
    draft.namespaceOutcomes = overrides.map((override) => {
      const inNamespaces = describeRule(source, ruleName, type, override.action, filter, body);
      return {
        scope: override.scope,
        severity: inNamespaces.outcome.severity,
        effect: inNamespaces.outcome.effect,
        summary: inNamespaces.summary,
        remediationHint: inNamespaces.remediationHint,
        tags: inNamespaces.tags,
      };
    });
  if (matched.targets !== undefined)
    draft.resourceTargets = [
      ...matched.targets,
      ...autogen.map((controller) => POD_CONTROLLER_TARGETS[controller]),
    ];
  if (matched.selector !== undefined) draft.workloadSelector = matched.selector;
  if (type === 'verifyImages') draft.imageReferences = imageReferencesOf(rule, where);
  return draft;
}

export function kyvernoPolicyToConstraints(object: KubernetesObject): ConstraintDraft[] {
  if (object.kind !== 'ClusterPolicy' && object.kind !== 'Policy')
    throw new AdapterParseError(`kind ${quoted(object.kind)} is not a Kyverno ClusterPolicy or Policy`);
  const source = sourceOf(object, object.kind === 'Policy');
  const spec = requireSpec(object);
  const rules = readRecordList(spec.rules, 'spec.rules');
  const annotations = isStringRecord(object.metadata?.annotations) ? object.metadata.annotations : {};
  const seen = new Set<string>();
  return rules.map((rule, index) => {
    const draft = buildRuleConstraint(source, spec, rule, `spec.rules[${index}]`, annotations);
    // Rule names identify constraints; Kyverno rejects duplicates, and so do we.
    if (seen.has(draft.name))
      throw new AdapterParseError(`spec.rules[${index}].name repeats ${JSON.stringify(draft.name)}`);
    seen.add(draft.name);
    return draft;
  });
}
