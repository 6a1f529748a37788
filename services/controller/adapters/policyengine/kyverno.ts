import type { Effect, Severity } from '../../../model/api';
import {
  AdapterParseError,
  type ConstraintDraft,
  type NamespaceScope,
  type SourceObject,
} from '../../../model/constraint';
import type { KubernetesObject } from '../../../model/kubernetes';
import { formatLabelSelector, isEmptySelector } from '../../../model/label-selector';
import { detail, objectName, text, type Text } from '../../../model/text';
import {
  readOptionalString,
  readRecord,
  readRecordList,
  readStringList,
  requireSpec,
  sourceOf,
} from '../shared/object-fields';
import { readExcludedNamespaces, readMatch, type ResourceFilter } from './kyverno-match';
import { askOwnerStep, inspectSourceStep, ownerPrivilege } from '../shared/remediation';
import { clusterScope, quoted, readRequiredString, scopeText } from '../shared/scope-text';

// kyverno.io ClusterPolicy (cluster-scoped) and Policy (namespaced) → one Admission constraint per
// rule, named `<policy>/<rule>` always, so a constraint keeps its name when rules are added.

export const KYVERNO_GROUP = 'kyverno.io';

const RULE_TYPES = ['validate', 'mutate', 'generate', 'verifyImages'] as const;
type RuleType = (typeof RULE_TYPES)[number];

type FailureAction = 'Enforce' | 'Audit';

/** Kyverno accepts the lower-case spellings of older releases. */
function readFailureAction(value: unknown, where: string): FailureAction | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === 'Enforce' || value === 'enforce') return 'Enforce';
  if (value === 'Audit' || value === 'audit') return 'Audit';
  throw new AdapterParseError(`${where} is ${quoted(value)}, expected Enforce or Audit`);
}

/** Actions that per-namespace overrides (`validationFailureActionOverrides`) set. */
function readOverrideActions(value: unknown, where: string): FailureAction[] {
  return readRecordList(value, where).flatMap((override, index) => {
    const action = readFailureAction(override.action, `${where}[${index}].action`);
    return action === undefined ? [] : [action];
  });
}

interface RuleAction {
  action: FailureAction;
  /** Overrides enforce or audit the rule differently in some namespaces. */
  differsInSomeNamespaces: boolean;
}

/**
 * How a validating rule fails: the rule's own `failureAction` (Kyverno 1.13+) wins over the policy's
 * `validationFailureAction` (default Audit). When namespace overrides differ, the stronger action
 * counts: a developer in an enforced namespace must not be told it only audits.
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
  const overrides = readOverrideActions(
    spec.validationFailureActionOverrides,
    'spec.validationFailureActionOverrides',
  );
  if (type === 'validate') {
    const validate = readRecord(rule.validate, `${where}.validate`);
    ruleAction = readFailureAction(validate.failureAction, `${where}.validate.failureAction`);
    overrides.push(
      ...readOverrideActions(validate.failureActionOverrides, `${where}.validate.failureActionOverrides`),
    );
  }
  if (type === 'verifyImages') {
    const actions = readRecordList(rule.verifyImages, `${where}.verifyImages`).map((entry, index) =>
      readFailureAction(entry.failureAction, `${where}.verifyImages[${index}].failureAction`),
    );
    if (actions.includes('Enforce')) ruleAction = 'Enforce';
    else if (actions.includes('Audit')) ruleAction = 'Audit';
  }
  // Kyverno honours per-namespace overrides in ClusterPolicies only (read above to validate them).
  if (!clusterScoped) overrides.length = 0;
  let action = ruleAction ?? policyAction;
  const differsInSomeNamespaces = overrides.some((override) => override !== action);
  if (overrides.includes('Enforce')) action = 'Enforce';
  // `admission: false` runs the policy in background scans only: nothing is rejected on apply.
  if (spec.admission === false) return { action: 'Audit', differsInSomeNamespaces: false };
  return { action, differsInSomeNamespaces };
}

function ruleTypeOf(rule: Record<string, unknown>, where: string): RuleType {
  const present = RULE_TYPES.filter((type) => rule[type] !== undefined && rule[type] !== null);
  if (present.length !== 1)
    throw new AdapterParseError(
      `${where} must have exactly one of ${RULE_TYPES.join(', ')}${present.length > 1 ? ` (has ${present.join(', ')})` : ''}`,
    );
  return present[0];
}

function describeKinds(filter: ResourceFilter): Text {
  const kinds = filter.kindNames ?? [];
  if (kinds.length === 0 || kinds.includes('*')) return text`resources`;
  return [detail(kinds.join(', '), 'matching resources')];
}

/** ` named a, b labelled app=web`: narrowing that is a rule detail. */
function describeNarrowing(filter: ResourceFilter): Text {
  const parts: Text[] = [];
  if (filter.names !== undefined) parts.push(text` named ${detail(filter.names.join(', '), 'by name')}`);
  if (filter.selector !== undefined && !isEmptySelector(filter.selector))
    parts.push(text` labelled ${detail(formatLabelSelector(filter.selector), 'with selected labels')}`);
  return parts.flat();
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
    return { clause, trailer: message ? text`: ${detail(message, 'see the policy message')}` : [] };
  }
  if (type === 'verifyImages') {
    const images = readRecordList(rule.verifyImages, `${where}.verifyImages`).flatMap((entry, index) => {
      const at = `${where}.verifyImages[${index}]`;
      // `image` is the single-reference spelling of Kyverno before 1.9.
      return entry.imageReferences !== undefined
        ? readStringList(entry.imageReferences, `${at}.imageReferences`)
        : [readRequiredString(entry.image, `${at}.imageReferences`)];
    });
    return {
      clause: text` whose images ${detail(images.join(', '), 'from some registries')} are not signed as required`,
      trailer: [],
    };
  }
  if (type === 'generate') {
    const generate = readRecord(rule.generate, `${where}.generate`);
    const kind = readOptionalString(generate.kind, `${where}.generate.kind`);
    return {
      verb: text`creates ${detail(kind ?? 'resources', 'resources')} for each new`,
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
  if (type === 'generate')
    return { severity: 'Info', effect: 'mutate', verb: 'creates resources for each new' };
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

function buildRuleConstraint(
  source: SourceObject,
  spec: Record<string, unknown>,
  rule: Record<string, unknown>,
  where: string,
): ConstraintDraft {
  const ruleName = readRequiredString(rule.name, `${where}.name`);
  const type = ruleTypeOf(rule, where);
  const { action, differsInSomeNamespaces } = ruleActionOf(
    spec,
    rule,
    type,
    where,
    source.namespace === null,
  );
  const matched = readMatch(rule.match, `${where}.match`);
  const excluded = readExcludedNamespaces(rule.exclude, `${where}.exclude`, matched);
  // A namespaced Policy applies in its own namespace only, whatever its rules' namespace lists say.
  const scope: NamespaceScope =
    source.namespace === null
      ? clusterScope(matched.namespaces, excluded, matched.namespaceSelector)
      : { kind: 'namespace', namespace: source.namespace };

  const outcome = outcomeOf(type, action);
  const policy = objectName(source.name, source.namespace);
  const ruleText = objectName(ruleName, source.namespace);
  const varies =
    differsInSomeNamespaces && (type === 'validate' || type === 'verifyImages')
      ? // Overrides only ever raise the action (ruleActionOf), so the others are the audited ones.
        text` (audit only in some namespaces)`
      : [];
  const body = describeRuleBody(rule, type, where);
  const summary = text`Kyverno ${source.kind} "${policy}" rule "${ruleText}" ${body.verb ?? [outcome.verb]} ${describeKinds(matched)}${describeNarrowing(matched)}${body.clause} ${scopeText(scope)}${varies}${body.trailer}`;
  const remediationHint = hintFor(type, action, [policy], [ruleText], source.kind);
  const tags = ['admission', 'policy-engine', 'kyverno', type];
  if (type === 'validate' || type === 'verifyImages') tags.push(action === 'Enforce' ? 'enforce' : 'audit');
  const draft: ConstraintDraft = {
    id: `rule:${ruleName}`,
    name: `${source.name}/${ruleName}`,
    displayName: text`${policy}/${ruleText}`,
    type: 'Admission',
    severity: outcome.severity,
    effect: outcome.effect,
    adapter: 'policyengine',
    source,
    scope,
    tags,
    summary,
    remediationHint,
    remediation: {
      summary: remediationHint,
      steps: [
        // `policy` alone is ambiguous when other engines install a Policy kind; the group settles it.
        inspectSourceStep(
          source,
          source.namespace === null ? 'clusterpolicy.kyverno.io' : 'policy.kyverno.io',
        ),
        askOwnerStep(
          text`Ask the owner of ${source.kind} "${policy}" for an exception to rule "${ruleText}" or a change to it`,
          ownerPrivilege(source),
        ),
      ],
    },
  };
  if (matched.targets !== undefined) draft.resourceTargets = matched.targets;
  if (matched.selector !== undefined) draft.workloadSelector = matched.selector;
  return draft;
}

export function kyvernoPolicyToConstraints(object: KubernetesObject): ConstraintDraft[] {
  if (object.kind !== 'ClusterPolicy' && object.kind !== 'Policy')
    throw new AdapterParseError(`kind ${quoted(object.kind)} is not a Kyverno ClusterPolicy or Policy`);
  const source = sourceOf(object, object.kind === 'Policy');
  const spec = requireSpec(object);
  const rules = readRecordList(spec.rules, 'spec.rules');
  const seen = new Set<string>();
  return rules.map((rule, index) => {
    const draft = buildRuleConstraint(source, spec, rule, `spec.rules[${index}]`);
    // Rule names identify constraints; Kyverno rejects duplicates, and so do we.
    if (seen.has(draft.name))
      throw new AdapterParseError(`spec.rules[${index}].name repeats ${JSON.stringify(draft.name)}`);
    seen.add(draft.name);
    return draft;
  });
}
