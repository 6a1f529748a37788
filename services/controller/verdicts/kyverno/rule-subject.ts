import type { ConstraintDraft as Constraint } from '../../../model/constraint';
import { isRecord, type KubernetesObject } from '../../../model/kubernetes';
import { objectName, text, type Text } from '../../../model/text';
import { withFields } from '../../../model/object-copy';
import { podTemplateLocationOf } from '../../../model/workload';
import { KeptLately } from '../kept-lately';

// Which rule of a Kyverno policy a constraint names (and how a verdict names it), the kinds it
// matches, and what it sees as `request.object`: the object, or a pod controller's template when
// the rule reaches the controller only through Kyverno's auto-generation.

type Fields = Record<string, unknown>;

// Read once per policy revision (the index keeps one object per revision), not once per admission.
const rulesByPolicy = new WeakMap<KubernetesObject, Map<unknown, Fields>>();
const kindsByRule = new WeakMap<Fields, string[]>();

export function ruleOf(policy: KubernetesObject, constraintName: string): Fields | undefined {
  let rules = rulesByPolicy.get(policy);
  if (!rules) {
    const spec = isRecord(policy.spec) ? policy.spec : {};
    const list = Array.isArray(spec.rules) ? spec.rules.filter(isRecord) : [];
    // The first rule of a name wins, as a search from the start would find it.
    rules = new Map([...list].reverse().map((rule) => [rule.name, rule]));
    rulesByPolicy.set(policy, rules);
  }
  return rules.get(constraintName.slice(constraintName.indexOf('/') + 1));
}

export function matchedKinds(rule: Fields): string[] {
  let kinds = kindsByRule.get(rule);
  if (!kinds) {
    kinds = readMatchedKinds(rule);
    kindsByRule.set(rule, kinds);
  }
  return kinds;
}

function readMatchedKinds(rule: Fields): string[] {
  const match = isRecord(rule.match) ? rule.match : {};
  const blocks = [
    match,
    ...(['any', 'all'] as const).flatMap((key) =>
      Array.isArray(match[key]) ? match[key].filter(isRecord) : [],
    ),
  ];
  return blocks.flatMap((block) => {
    const resources = isRecord(block.resources) ? block.resources : {};
    const kinds = Array.isArray(resources.kinds) ? resources.kinds : [];
    return kinds
      .filter((kind): kind is string => typeof kind === 'string')
      .map((kind) => kind.slice(kind.lastIndexOf('/') + 1));
  });
}

export interface Subject {
  /** What the rule sees as `request.object`: the object, or a controller's pod template as a pod. */
  value: Fields;
  /** Prefix of evidence paths: `spec.template` when a pod controller is checked through its template. */
  prefix: string;
}

/**
 * How auto-generation rewrites the rule: kyverno.io policies (pkg/autogen/v1) rewrite every
 * `object.metadata` path; policies.kyverno.io policies (pkg/cel/autogen/replacement.go) leave
 * `object.metadata.namespace` on the controller's own metadata, since templates carry none.
 */
export type AutogenRewrite = 'all-metadata' | 'metadata-but-namespace';

/** The object, or a controller's pod template when the rule names Pods and not the controller. */
export function subjectOf(
  kinds: readonly string[],
  object: KubernetesObject,
  rewrite: AutogenRewrite = 'all-metadata',
): Subject {
  const kind = object.kind ?? '';
  if (kind !== 'Pod' && !kinds.includes(kind) && kinds.includes('Pod')) {
    const location = podTemplateLocationOf(object);
    if (location) {
      const templateMetadata = isRecord(location.template.metadata) ? location.template.metadata : {};
      const { namespace: _templateNamespace, ...withoutNamespace } = templateMetadata;
      const ownNamespace = object.metadata?.namespace;
      const metadata =
        rewrite === 'all-metadata'
          ? templateMetadata
          : ownNamespace === undefined
            ? withoutNamespace
            : withFields(withoutNamespace, { namespace: ownNamespace });
      return {
        // Auto-generation rewrites request.object.spec / .metadata to the template's: the same as
        // evaluating the rule on the template as if it were the object.
        value: { apiVersion: object.apiVersion, kind: object.kind, metadata, spec: location.template.spec },
        prefix: location.path.join('.'),
      };
    }
  }
  return { value: object as Fields, prefix: '' };
}

/** Whether the rule reaches the object only through Kyverno's auto-generation for pod controllers. */
export function reachedThroughAutogen(rule: Fields, object: KubernetesObject): boolean {
  return subjectOf(matchedKinds(rule), object).prefix !== '';
}

// The rule's name as a verdict shows it: made once per constraint object while admission checks
// keep meeting it, not per admission. Not for as long as the constraint: a sweep of every workload
// evaluates every Kyverno constraint, and kept per constraint these texts held ~1.5 MiB for 5,000
// Kyverno policies at cluster scale (issue 33: heap per constraint).
export const RULE_TEXTS_PER_GENERATION = 512;
const ruleTexts = new KeptLately<Constraint, Text>(RULE_TEXTS_PER_GENERATION);

function ruleTextOf(constraint: Constraint): Text {
  const ruleName = constraint.name.slice(constraint.name.indexOf('/') + 1);
  const name = objectName(constraint.source.name, constraint.source.namespace);
  return text`Kyverno ${constraint.source.kind} "${name}" rule "${objectName(ruleName, constraint.source.namespace)}"`;
}

export function ruleText(constraint: Constraint): Text {
  return ruleTexts.get(constraint, ruleTextOf);
}

/** How many rule texts are kept (tests). */
export function ruleTextsKept(): number {
  return ruleTexts.size;
}

// The rule's `validate` without the preconditions the rule's evaluation has already taken: made
// once per policy revision (the index keeps one object per revision), not once per admission.
const validateWithoutPreconditions = new WeakMap<Fields, Fields>();

export function withoutPreconditions(validate: Fields): Fields {
  let copy = validateWithoutPreconditions.get(validate);
  if (!copy) {
    copy = withFields(validate, { preconditions: undefined });
    validateWithoutPreconditions.set(validate, copy);
  }
  return copy;
}
