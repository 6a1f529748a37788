import type { Effect } from './api';
import type { ConstraintDraft, SourceObject } from './constraint';
import { groupOf } from './kubernetes';
import { isNameVisible, revealedNameKey, type Viewer } from './text';
import { withFields } from './object-copy';

// The one rule for showing a policy's name (docs/decisions.md, "One naming rule across views"),
// applied by every view that names a constraint: the report, a single constraint, the list and the
// admission check (`forewarn check`, the webhook), the MCP tools and `explain`. A name is shown to a
// viewer of namespace N when
//   1. the viewer is at `full` (the controller's level, or its own RBAC lets it read the source), or
//   2. the source object is in N, or
//   3. the source is an admission policy that names itself, in the API server's answer, to whoever
//      it rejects or warns in N: a ValidatingAdmissionPolicy and its binding ("ValidatingAdmission
//      Policy 'p' with binding 'b' denied request"), a Kyverno policy ("policy p/rule"), a Gatekeeper
//      constraint ("[c] ..."). Hiding such a name hides nothing from that caller, yet keeps `explain`
//      from matching the message and makes remediation commands unusable.
// Everything else (another namespace's NetworkPolicy, a cluster-wide network, mesh or webhook
// configuration, an audit-only or mutating policy, which print nothing to the caller) stays hidden
// below `full`, in every view, texts and commands included.

/** Source kinds whose denials and warnings carry their own name, by API group (`*`: every kind). */
const SELF_NAMING_KINDS: Readonly<Record<string, readonly string[]>> = {
  'admissionregistration.k8s.io': ['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'],
  'kyverno.io': ['ClusterPolicy', 'Policy'],
  'policies.kyverno.io': [
    'ValidatingPolicy',
    'NamespacedValidatingPolicy',
    'ImageValidatingPolicy',
    'NamespacedImageValidatingPolicy',
  ],
  'constraints.gatekeeper.sh': ['*'],
};

/** Effects whose message reaches the caller at admission: a rejection or a warning. */
const EFFECTS_SEEN_BY_THE_CALLER: ReadonlySet<Effect> = new Set(['deny', 'warn']);

function isSelfNamingKind(source: Pick<SourceObject, 'apiVersion' | 'kind'>): boolean {
  const kinds = SELF_NAMING_KINDS[groupOf(source.apiVersion)];
  return kinds !== undefined && (kinds.includes('*') || kinds.includes(source.kind));
}

/** Rule 3: the constraint's enforcement prints its own name to the caller it reaches. */
export function namesItselfToCaller(constraint: Pick<ConstraintDraft, 'source' | 'effect'>): boolean {
  return EFFECTS_SEEN_BY_THE_CALLER.has(constraint.effect) && isSelfNamingKind(constraint.source);
}

/** Whether the viewer sees the constraint's own name (and its source's). */
export function isConstraintNameVisible(
  constraint: Pick<ConstraintDraft, 'source' | 'effect'>,
  viewer: Viewer,
): boolean {
  return isNameVisible(constraint.source.namespace, viewer) || namesItselfToCaller(constraint);
}

const revealedNames = new WeakMap<object, ReadonlySet<string>>();

/**
 * The viewer to render one constraint's texts for: under rule 3 the names its enforcement prints
 * (the source, the policy a binding binds, a Kyverno rule) are shown in its summary, hint and commands too;
 * any other name in them (a param object in another namespace) keeps the viewer's rule.
 */
export function viewerForConstraint(
  constraint: Pick<ConstraintDraft, 'source' | 'effect' | 'relatedSources' | 'name'>,
  viewer: Viewer,
): Viewer {
  if (viewer.level === 'full' || !namesItselfToCaller(constraint)) return viewer;
  let revealed = revealedNames.get(constraint);
  if (!revealed) {
    // The parts of its name too: Kyverno's message names the rule (`policy/rule`) it failed.
    const segments = constraint.name
      .split('/')
      .map((name) => ({ name, namespace: constraint.source.namespace }));
    revealed = new Set(
      [constraint.source, ...(constraint.relatedSources ?? []).filter(isSelfNamingKind), ...segments].map(
        revealedNameKey,
      ),
    );
    revealedNames.set(constraint, revealed);
  }
  return withFields(viewer, { revealed });
}
