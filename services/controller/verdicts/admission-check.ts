import type {
  AdmissionCheck,
  AdmissionCheckView,
  AdmissionCheckWarnings,
  AdmissionWarningEntry,
  CheckedConstraint,
  DetailLevel,
  ListedConstraint,
  VerdictName,
} from '../../model/api';
import { severityRank } from '../../model/api';
import { severityForObject } from '../../model/object-consequence';
import type { Constraint, ConstraintDraft } from '../../model/constraint';
import { groupOf, isStringRecord, type KubernetesObject } from '../../model/kubernetes';
import { pluralOfKind, targetsInclude } from '../../model/resources';
import { isNameVisible, renderText, type Text, type Viewer } from '../../model/text';
import { viewerForConstraint } from '../../model/name-visibility';
import { workloadLabels } from '../../model/workload-kinds';
import { withFields } from '../../model/object-copy';
import type { ConstraintIndex } from '../index/constraint-index';
import { matchingConstraints, toListedConstraint } from '../views/constraint-list';
import { compareBySeverityThenName } from '../views/ordering';
import { withServerDefaults } from './defaulting';
import { evaluateVerdicts } from './evaluate';
import { EvaluationAborted, EvaluationGuard } from './guard/evaluation-guard';
import { pathWithinObject } from './evidence-path';
import type { AdmittedObject, Verdict } from './types';
import { verdictIndexOf } from './verdict-index';

export { verdictIndexOf } from './verdict-index';

// `POST /api/v1/admission-check` (DESIGN.md 7b): the constraints the list query would return for the
// object, each with the verdict on the object itself. A violation's summary starts with what fails,
// so the admission warning reads "will be rejected: container "web" sets no memory limit (...)".

/** The admitted object, its operation (and `mayExist`), and who asks (absent offline): types.ts. */
type RequestFields = 'object' | 'oldObject' | 'operation' | 'mayExist' | 'rollout' | 'requester';
export interface AdmissionCheckRequest extends Pick<AdmittedObject, RequestFields> {
  /**
   * The object is cluster-scoped (a Namespace, a ClusterRole): checked against the cluster-wide
   * constraints that intercept its resource, not a namespace's. Only `check` asks this (the webhook
   * is registered for namespaced resources alone).
   */
  clusterScoped?: boolean;
}

export interface AdmissionCheckOptions {
  /** Who reads the answer; absent: unredacted (the webhook). */
  viewer?: Omit<Viewer, 'namespace'>;
  /** Companion findings about the object itself (MissingResource at admission time). */
  prospective?: readonly ConstraintDraft[];
  /**
   * The level of each constraint for this caller (issue 24: `full` where its own RBAC lets it read
   * the source); absent: every entry at the viewer's level. With it, warning entries say their level.
   */
  levelOf?: (constraint: ConstraintDraft) => DetailLevel;
}

/** The webhook's view: only what becomes an admission warning (see AdmissionCheckWarnings). */
export interface AdmissionWarningsOptions extends AdmissionCheckOptions {
  view: AdmissionCheckView;
}

const VERDICT_RANK: Record<VerdictName, number> = { violates: 0, applies: 1, unknown: 1, passes: 2 };

/** A violation of this constraint is a rejection (Critical), not a warning or an audit entry. */
export function denies(constraint: ConstraintDraft): boolean {
  return constraint.effect === 'deny' || constraint.effect === 'limit';
}

function consequence(constraint: ConstraintDraft, verdict: Verdict): string {
  if (constraint.effect === 'warn') return 'will get a warning';
  if (constraint.effect === 'audit') return 'will be recorded in the audit log';
  return verdict.rejects === 'pods' ? 'its pods will be rejected' : 'will be rejected';
}

function violationSummary(
  constraint: ConstraintDraft,
  verdict: Verdict,
  render: (value: Text) => string,
): string {
  const first = verdict.evidence[0] ? render(verdict.evidence[0].message) : 'the rule fails';
  const more = verdict.evidence.length > 1 ? ` (and ${verdict.evidence.length - 1} more)` : '';
  const rule = verdict.rule
    ? render(verdict.rule)
    : `${constraint.source.kind} "${render(constraint.displayName)}"`;
  return `${consequence(constraint, verdict)}: ${first}${more} (${rule})`;
}

// A constraint's list entry depends on the constraint and the viewer only, not on the object:
// rendered once per constraint revision (the index replaces the object on every change).
// By level, then namespace: no key string is built per constraint and check.
const listedEntries = new WeakMap<ConstraintDraft, Map<DetailLevel, Map<string, ListedConstraint>>>();

function listedEntryOf(constraint: ConstraintDraft, viewer: Viewer): ListedConstraint {
  let byLevel = listedEntries.get(constraint);
  if (!byLevel) listedEntries.set(constraint, (byLevel = new Map()));
  let byNamespace = byLevel.get(viewer.level);
  if (!byNamespace) byLevel.set(viewer.level, (byNamespace = new Map()));
  let entry = byNamespace.get(viewer.namespace);
  if (!entry) {
    entry = toListedConstraint(constraint, viewer.namespace, viewer);
    byNamespace.set(viewer.namespace, entry);
  }
  return entry;
}

/**
 * An evidence path as the viewer may read it: whole where they may see the policy, else cut back to
 * the fields the object has (evidence-path.ts), so a hidden policy's CEL never names a field.
 */
function renderEvidencePath(
  constraint: ConstraintDraft,
  path: string,
  object: KubernetesObject,
  viewer: Viewer,
): string {
  // The namespace rule, not the naming rule: a policy prints its name, never the fields it reads.
  return isNameVisible(constraint.source.namespace, viewer) ? path : pathWithinObject(object, path);
}

/** One constraint's entry of an admission check for the viewer; workloads at risk render theirs with it too. */
export function checkedEntry(
  constraint: ConstraintDraft,
  verdict: Verdict,
  object: KubernetesObject,
  baseViewer: Viewer,
): CheckedConstraint {
  const viewer = viewerForConstraint(constraint, baseViewer);
  const render = (value: Text) => renderText(value, viewer);
  const listed = listedEntryOf(constraint, baseViewer);
  // Field by field rather than spread: copying the cached entry with a spread measured as a quarter
  // of an admission check's CPU. The order is the listed entry's, then the verdict's.
  const entry: CheckedConstraint = {
    name: listed.name,
    ...(listed.ref === undefined ? {} : { ref: listed.ref }),
    namespace: listed.namespace,
    constraintType: listed.constraintType,
    severity: listed.severity,
    effect: listed.effect,
    summary: listed.summary,
    remediationHint: listed.remediationHint,
    sourceKind: listed.sourceKind,
    sourceApiVersion: listed.sourceApiVersion,
    sourceName: listed.sourceName,
    sourceNamespace: listed.sourceNamespace,
    tags: [...constraint.tags],
    detailLevel: listed.detailLevel,
    verdict: verdict.verdict,
    evidence: verdict.evidence.map((item) => ({
      path: renderEvidencePath(constraint, item.path, object, viewer),
      message: render(item.message),
    })),
  };
  if (verdict.reason) entry.reason = render(verdict.reason);
  entry.severity = severityForObject(listed, verdict.verdict, denies(constraint));
  if (verdict.verdict === 'violates') entry.summary = violationSummary(constraint, verdict, render);
  return entry;
}

/** The entry a warning is made of, or undefined when the constraint gives no warning. */
function warningEntry(
  constraint: ConstraintDraft,
  verdict: Verdict,
  baseViewer: Viewer,
): AdmissionWarningEntry | undefined {
  const listed = listedEntryOf(constraint, baseViewer);
  if (verdict.verdict === 'violates') {
    // Only a violation's summary renders the verdict's text: the other warnings are the listed entry's.
    const viewer = viewerForConstraint(constraint, baseViewer);
    return {
      name: listed.name,
      severity: denies(constraint) ? 'Critical' : 'Warning',
      summary: violationSummary(constraint, verdict, (value: Text) => renderText(value, viewer)),
      remediationHint: listed.remediationHint,
      verdict: verdict.verdict,
    };
  }
  const severity = severityForObject(listed, verdict.verdict, false);
  if (verdict.verdict === 'passes' || severity === 'Info') return undefined;
  return {
    name: listed.name,
    severity,
    summary: listed.summary,
    remediationHint: listed.remediationHint,
    verdict: verdict.verdict,
  };
}

/** Warnings are read by whoever applies: names by the one naming rule (model/name-visibility.ts), details kept. */
function warningViewer(viewer: Viewer): Viewer {
  return viewer.level === 'full' ? withFields(viewer, { level: 'detailed' as const }) : viewer;
}

/**
 * The order warnings are read in (DESIGN.md 7): Critical first, within a severity what the object
 * violates first; what it passes (no warning) after everything that warns.
 */
export function compareChecked(
  left: Pick<CheckedConstraint, 'verdict' | 'severity' | 'name'>,
  right: Pick<CheckedConstraint, 'verdict' | 'severity' | 'name'>,
): number {
  return (
    Number(left.verdict === 'passes') - Number(right.verdict === 'passes') ||
    severityRank(left.severity) - severityRank(right.severity) ||
    VERDICT_RANK[left.verdict] - VERDICT_RANK[right.verdict] ||
    (left.name < right.name ? -1 : left.name > right.name ? 1 : 0)
  );
}

export function namespaceOfObject(object: KubernetesObject, fallback = 'default'): string {
  const namespace = object.metadata?.namespace;
  return typeof namespace === 'string' && namespace !== '' ? namespace : fallback;
}

/**
 * A cluster-scoped object's constraints and the namespace its rules see: a Namespace is its own
 * namespace (namespace selectors match its labels, as in the API server); anything else has none.
 */
function clusterScopedCheck(
  index: ConstraintIndex,
  object: KubernetesObject,
): { constraints: ConstraintDraft[]; namespace: string; namespaceLabels: Record<string, string> } {
  const group = groupOf(object.apiVersion);
  const kind = object.kind ?? '';
  const isNamespace = group === '' && kind === 'Namespace';
  const labels = object.metadata?.labels;
  return {
    constraints: index
      .constraintsTargetingClusterResource({ group, resource: pluralOfKind(kind) })
      .sort(compareBySeverityThenName),
    namespace: isNamespace ? (object.metadata?.name ?? '') : '',
    namespaceLabels: isNamespace && isStringRecord(labels) ? labels : {},
  };
}

export function buildAdmissionCheck(
  index: ConstraintIndex,
  request: AdmissionCheckRequest,
  options?: AdmissionCheckOptions,
): AdmissionCheck;
export function buildAdmissionCheck(
  index: ConstraintIndex,
  request: AdmissionCheckRequest,
  options: AdmissionWarningsOptions,
): AdmissionCheckWarnings;
export function buildAdmissionCheck(
  index: ConstraintIndex,
  request: AdmissionCheckRequest,
  options: AdmissionCheckOptions | AdmissionWarningsOptions = {},
): AdmissionCheck | AdmissionCheckWarnings {
  const evaluated = evaluateAdmission(index, request, options.prospective ?? []);
  return renderedCheck(evaluated, options);
}

/** The verdicts of an admission check before rendering: what workloads at risk keep (risks/). */
export interface EvaluatedAdmission {
  /** The request with its objects defaulted as the API server defaults them. */
  request: AdmissionCheckRequest;
  /** The namespace the rules see ('' for a cluster-scoped object other than a Namespace). */
  namespace: string;
  verdicts: ReturnType<typeof evaluateVerdicts>;
}

/**
 * Matches and evaluates the constraints of the request: the one evaluation behind the admission
 * check, `check` and the workloads at risk, under one guard per object.
 */
export function evaluateAdmission(
  index: ConstraintIndex,
  request: AdmissionCheckRequest,
  prospective: readonly ConstraintDraft[] = [],
  alreadyJudged?: ReadonlySet<string>, // constraint ids: a rollout's Pods skip their controller's
): EvaluatedAdmission {
  // The server defaults the object before any admission sees it (defaulting/index.ts): matching
  // (a Job takes its template's labels) and every verdict use the defaulted copy, once per object.
  // The object's guard starts here, so that its deadline bounds the copy too: a huge object's
  // verdicts are then all `unknown` (evaluate.ts), matched on the object as written.
  const guard = new EvaluationGuard();
  const defaulted = withDefaultsUnderGuard(request, guard);
  if (defaulted.clusterScoped) {
    const scoped = clusterScopedCheck(index, defaulted.object);
    return evaluateScope(index, defaulted, scoped, guard);
  }
  const { object } = defaulted;
  const namespace = namespaceOfObject(object);
  const group = groupOf(object.apiVersion);
  const kind = object.kind ?? '';
  const matching = matchingConstraints(
    index,
    {
      namespace,
      resource: { group, resource: pluralOfKind(kind) },
      // An object without labels matches only empty selectors, as the webhook asks with `labels=`.
      labels: workloadLabels({ group, kind }, object),
      object,
    },
    prospective,
  );
  const constraints = alreadyJudged ? matching.filter(({ id }) => !alreadyJudged.has(id)) : matching;
  const namespaceLabels = index.labelsOfNamespace(namespace);
  return evaluateScope(
    index,
    defaulted,
    { constraints, namespace, namespaceLabels: isStringRecord(namespaceLabels) ? namespaceLabels : {} },
    guard,
  );
}

function withDefaultsUnderGuard(
  request: AdmissionCheckRequest,
  guard: EvaluationGuard,
): AdmissionCheckRequest {
  try {
    const object = withServerDefaults(request.object, guard);
    const oldObject = request.oldObject && withServerDefaults(request.oldObject, guard);
    return withFields(request, oldObject ? { object, oldObject } : { object });
  } catch (error) {
    if (error instanceof EvaluationAborted) return request;
    throw error;
  }
}

function evaluateScope(
  index: ConstraintIndex,
  request: AdmissionCheckRequest,
  scope: { constraints: ConstraintDraft[]; namespace: string; namespaceLabels: Record<string, string> },
  guard: EvaluationGuard,
): EvaluatedAdmission {
  const { namespace } = scope;
  const verdicts = evaluateVerdicts(scope.constraints, {
    guard,
    admitted: {
      object: request.object,
      ...(request.oldObject ? { oldObject: request.oldObject } : {}),
      operation: request.operation,
      ...(request.mayExist ? { mayExist: true } : {}),
      ...(request.rollout ? { rollout: true } : {}),
      namespace,
      namespaceLabels: scope.namespaceLabels,
      ...(request.requester ? { requester: request.requester } : {}),
    },
    index: verdictIndexOf(index),
  });
  return { request, namespace, verdicts };
}

/** Verdicts on the object for the constraints that apply, rendered for the viewer and ordered. */
function renderedCheck(
  { request, namespace, verdicts }: EvaluatedAdmission,
  options: AdmissionCheckOptions,
): AdmissionCheck | AdmissionCheckWarnings {
  // Unredacted (`full`) for the webhook; other callers see the level they are allowed, constraint
  // by constraint where their own RBAC was asked (`levelOf`).
  const viewer: Viewer = { level: options.viewer?.level ?? 'full', namespace };
  const { levelOf } = options;
  const viewerOf = levelOf
    ? (constraint: ConstraintDraft): Viewer => ({ level: levelOf(constraint), namespace })
    : () => viewer;
  if ('view' in options) {
    const warningsViewer = warningViewer(viewer);
    const entries: AdmissionWarningEntry[] = [];
    for (const { constraint, verdict } of verdicts) {
      // A level the caller's own RBAC granted (`levelOf`) stands; the webhook's `full` does not.
      const entry = warningEntry(constraint, verdict, levelOf ? viewerOf(constraint) : warningsViewer);
      if (entry) entries.push(levelOf ? withFields(entry, { detailLevel: levelOf(constraint) }) : entry);
    }
    return { constraints: entries.sort(compareChecked) };
  }
  return {
    constraints: verdicts
      .map(({ constraint, verdict }) =>
        checkedEntry(constraint, verdict, request.object, viewerOf(constraint)),
      )
      .sort(compareChecked),
  };
}

/**
 * The indexed constraints an admission check of this request may show: a superset of those it
 * shows (the namespace's constraints that intercept the object's resource, before selectors and
 * scopes), known without defaulting or evaluating the object. A caller's RBAC is asked about these
 * (issue 24) before the check runs; companion findings are not in the index and never elevated.
 */
export function admissionCheckCandidates(
  index: ConstraintIndex,
  request: AdmissionCheckRequest,
): Constraint[] {
  const group = groupOf(request.object.apiVersion);
  const resource = { group, resource: pluralOfKind(request.object.kind ?? '') };
  if (request.clusterScoped) return index.constraintsTargetingClusterResource(resource);
  return index
    .constraintsForNamespace(namespaceOfObject(request.object))
    .filter((constraint) => targetsInclude(constraint.resourceTargets, resource));
}
