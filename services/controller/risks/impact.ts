import type { CheckedConstraint } from '../../model/api';
import type { Constraint } from '../../model/constraint';
import { groupOf, isRecord, objectKey, type KubernetesObject } from '../../model/kubernetes';
import { pluralOfKind, targetsInclude } from '../../model/resources';
import { scopeAdmits, type ConstraintIndex } from '../index/constraint-index';
import { IndexOverlay } from '../index/index-overlay';
import { unlimitedRequestBudget, type RequestBudget } from '../check/request-budget';
import { ParseErrorCounter, type Ingestor } from '../index/ingest';
import { apiVersionOf, renderFindings } from './risk-view';
import {
  evaluateWorkload,
  type KeptWorkload,
  type RiskFinding,
  type WorkloadIdentity,
} from './workload-risk';

// `POST /api/v1/impact` (issue 35): which running workloads would change verdict if these policy
// objects were applied. The objects are ingested into a copy-on-write overlay of the index (new, or
// replacing the object of the same kind, namespace and name), the workloads the changed constraints
// can reach are evaluated against the index and against the overlay, and the differences are the
// answer. Nothing is applied; the index is not written. The evaluation yields between slices as the
// background evaluation does, so a large impact never holds up the webhook.

export type ImpactChange = 'newly-rejected' | 'newly-warned' | 'no-longer-rejected';

export interface ProposedPolicy {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  /** It replaces an object of the same kind, namespace and name already in the cluster. */
  replaces: boolean;
  /** The constraints Forewarn reads from it (0 with `problem`). */
  constraintCount: number;
  /** Why it could not be read; its constraints are not part of the answer. */
  problem?: string;
}

export interface ImpactedWorkload {
  kind: string;
  apiVersion: string;
  namespace: string;
  name: string;
  owner?: { kind: string; name: string };
  change: ImpactChange;
  /** What now rejects or warns (for `no-longer-rejected`: what rejected it before). */
  findings: CheckedConstraint[];
}

export interface ImpactReport {
  proposed: ProposedPolicy[];
  /** Workloads evaluated (those the changed constraints can reach, as far as the budget went). */
  evaluatedWorkloads: number;
  /**
   * Workloads the changed constraints can reach that the request's CPU budget did not (their change
   * is not known); 0 when every one was evaluated. Present only when some were left.
   */
  unevaluatedWorkloads?: number;
  /** Why workloads were left unevaluated (the budget, named), with `unevaluatedWorkloads`. */
  incomplete?: string;
  newlyRejectedCount: number;
  newlyWarnedCount: number;
  noLongerRejectedCount: number;
  namespaces: Array<{ namespace: string; workloads: ImpactedWorkload[] }>;
}

export interface ImpactDependencies {
  index: ConstraintIndex;
  ingestor: Ingestor;
  /** The kept workloads of these namespaces (all when undefined): the risk tracker's. */
  workloads(namespaces?: ReadonlySet<string>): KeptWorkload[];
  objectOf(workload: WorkloadIdentity): KubernetesObject | undefined;
  /** Yields to pending I/O between slices of evaluation; absent: no yield (one-shot commands). */
  yieldToRequests?: () => Promise<void>;
  /** The most CPU one slice takes before yielding. */
  sliceBudgetMs?: number;
}

export class ImpactRequestError extends Error {}

export const MAX_PROPOSED_OBJECTS = 50;

/** The proposed objects of a request body `{"objects": [...]}` (or a single object), checked. */
export function proposedObjectsOf(body: unknown): KubernetesObject[] {
  if (!isRecord(body)) throw new ImpactRequestError('the request must be a JSON object {"objects": [...]}');
  const objects: unknown[] = Array.isArray(body.objects) ? body.objects : [body];
  if (objects.length === 0) throw new ImpactRequestError('objects is empty: give at least one policy object');
  if (objects.length > MAX_PROPOSED_OBJECTS)
    throw new ImpactRequestError(
      `at most ${MAX_PROPOSED_OBJECTS} objects per request, got ${objects.length}`,
    );
  return objects.map((object, position) => {
    if (
      !isRecord(object) ||
      typeof object.apiVersion !== 'string' ||
      object.apiVersion === '' ||
      typeof object.kind !== 'string' ||
      object.kind === '' ||
      !isRecord(object.metadata) ||
      typeof object.metadata.name !== 'string' ||
      object.metadata.name === ''
    )
      throw new ImpactRequestError(
        `objects[${position}] must be a Kubernetes object with apiVersion, kind and metadata.name`,
      );
    return object as KubernetesObject;
  });
}

/** A constraint's content for comparison: what it is, not when it was observed. */
function constraintContent(constraints: readonly Constraint[]): string {
  return JSON.stringify(
    constraints.map((constraint) => JSON.stringify({ ...constraint, lastObserved: undefined })).sort(),
  );
}

/** The proposal with the identity of the object it replaces, so that the index keys it the same. */
function asReplacement(
  index: ConstraintIndex,
  object: KubernetesObject,
): { object: KubernetesObject; replaces: boolean } {
  const namespace = typeof object.metadata?.namespace === 'string' ? object.metadata.namespace : null;
  const existing = index.findSource(
    groupOf(object.apiVersion),
    object.kind ?? '',
    namespace,
    String(object.metadata?.name),
  );
  const uid = existing?.metadata?.uid;
  if (!existing) return { object, replaces: false };
  return {
    object: typeof uid === 'string' ? { ...object, metadata: { ...object.metadata, uid } } : object,
    replaces: true,
  };
}

/** The changed constraints: before (the index's) and after (the overlay's), of every key that differs. */
function changedConstraints(index: ConstraintIndex, overlay: IndexOverlay): Constraint[] {
  const changed: Constraint[] = [];
  for (const key of overlay.overlaidKeys()) {
    const before = index.constraintsOfObject(key);
    const after = overlay.constraintsOfObject(key);
    if (constraintContent(before) !== constraintContent(after)) changed.push(...before, ...after);
  }
  return changed;
}

/** The workloads a set of constraints can reach: by namespace, resource and (cluster-wide) scope. */
function reachedWorkloads(
  dependencies: ImpactDependencies,
  overlay: IndexOverlay,
  changed: readonly Constraint[],
): KeptWorkload[] {
  const namespaces = new Set<string>(overlay.overlaidNamespaceNames());
  const clusterWide = changed.filter((constraint) => constraint.scope.kind !== 'namespace');
  for (const constraint of changed)
    if (constraint.scope.kind === 'namespace') namespaces.add(constraint.scope.namespace);
  const candidates = dependencies.workloads(clusterWide.length > 0 ? undefined : namespaces);
  return candidates.filter((workload) => {
    const { namespace, group, kind } = workload.identity;
    if (namespaces.has(namespace)) return true;
    const resource = { group, resource: pluralOfKind(kind) };
    return clusterWide.some(
      (constraint) =>
        (scopeAdmits(constraint.scope, namespace, dependencies.index.labelsOfNamespace(namespace)) ||
          scopeAdmits(constraint.scope, namespace, overlay.labelsOfNamespace(namespace))) &&
        (constraint.resourceTargets === undefined || targetsInclude(constraint.resourceTargets, resource)),
    );
  });
}

function compare(before: readonly RiskFinding[], after: readonly RiskFinding[]) {
  const rejectedBefore = new Set(before.filter((f) => f.outcome === 'rejected').map((f) => f.constraint.id));
  const failedBefore = new Set(before.map((finding) => finding.constraint.id));
  const newlyRejecting = after.filter(
    (finding) => finding.outcome === 'rejected' && !rejectedBefore.has(finding.constraint.id),
  );
  if (newlyRejecting.length > 0) return { change: 'newly-rejected' as const, findings: newlyRejecting };
  const newlyWarning = after.filter((finding) => !failedBefore.has(finding.constraint.id));
  if (newlyWarning.length > 0) return { change: 'newly-warned' as const, findings: newlyWarning };
  if (rejectedBefore.size > 0 && !after.some((finding) => finding.outcome === 'rejected'))
    return {
      change: 'no-longer-rejected' as const,
      findings: before.filter((finding) => finding.outcome === 'rejected'),
    };
  return undefined;
}

export interface ImpactOptions {
  /**
   * The request's CPU budget (check/request-budget.ts), as the admission check's and MCP check's
   * requests have: reading the proposals is one step, each slice of workloads one step; once it is
   * spent the workloads left are counted, not evaluated. Absent: unlimited (the CLI offline).
   */
  budget?: RequestBudget;
}

export async function computeImpact(
  dependencies: ImpactDependencies,
  proposedObjects: readonly KubernetesObject[],
  options: ImpactOptions = {},
): Promise<ImpactReport> {
  const budget = options.budget ?? unlimitedRequestBudget();
  const ingested = await budget.step(() => ingestProposals(dependencies, proposedObjects));
  if (!ingested.ran) return unevaluatedReport(proposedObjects, budget.reason);
  const { overlay, proposed } = ingested.value;
  const { index } = dependencies;
  const workloads = reachedWorkloads(dependencies, overlay, changedConstraints(index, overlay));
  const byNamespace = new Map<string, ImpactedWorkload[]>();
  const sliceBudgetMs = dependencies.sliceBudgetMs ?? 1;
  let next = 0;
  while (next < workloads.length) {
    // One slice per budget step: workloads until the slice's time is used, then a turn for I/O.
    const slice = await budget.step(() => {
      const sliceStarted = performance.now();
      do evaluateImpactOn(dependencies, overlay, workloads[next++]!, byNamespace);
      while (next < workloads.length && performance.now() - sliceStarted < sliceBudgetMs);
    });
    if (!slice.ran) break;
    if (dependencies.yieldToRequests && next < workloads.length) await dependencies.yieldToRequests();
  }
  const left = workloads.length - next;
  return {
    ...impactReport(proposed, next, byNamespace),
    ...(left > 0 ? { unevaluatedWorkloads: left, incomplete: budget.reason } : {}),
  };
}

/** A request whose budget ran out before its proposals were read: nothing evaluated. */
function unevaluatedReport(objects: readonly KubernetesObject[], reason: string): ImpactReport {
  return {
    proposed: objects.map((object) => ({
      apiVersion: object.apiVersion ?? '',
      kind: object.kind ?? '',
      name: String(object.metadata?.name),
      ...(typeof object.metadata?.namespace === 'string' ? { namespace: object.metadata.namespace } : {}),
      replaces: false,
      constraintCount: 0,
      problem: reason,
    })),
    evaluatedWorkloads: 0,
    newlyRejectedCount: 0,
    newlyWarnedCount: 0,
    noLongerRejectedCount: 0,
    namespaces: [],
    incomplete: reason,
  };
}

function ingestProposals(
  dependencies: ImpactDependencies,
  proposedObjects: readonly KubernetesObject[],
): { overlay: IndexOverlay; proposed: ProposedPolicy[] } {
  const { index } = dependencies;
  const overlay = new IndexOverlay(index);
  const errors = new ParseErrorCounter();
  const ingestor = dependencies.ingestor.overlay(overlay, errors);
  const proposed: ProposedPolicy[] = [];
  for (const original of proposedObjects) {
    const { object, replaces } = asReplacement(index, original);
    const namespace = object.metadata?.namespace;
    const entry: ProposedPolicy = {
      apiVersion: object.apiVersion ?? '',
      kind: object.kind ?? '',
      name: String(object.metadata?.name),
      ...(typeof namespace === 'string' ? { namespace } : {}),
      replaces,
      constraintCount: 0,
    };
    const isNamespace = groupOf(object.apiVersion) === '' && object.kind === 'Namespace';
    const failuresBefore = errors.failingObjects().length;
    const handledBy = ingestor.upsert(object);
    const failure = errors.failingObjects()[failuresBefore];
    if (!handledBy && !isNamespace) entry.problem = `${entry.kind} is not a policy object Forewarn reads`;
    else if (failure) entry.problem = failure.message;
    else entry.constraintCount = overlay.constraintsOfObject(objectKey(object)).length;
    proposed.push(entry);
  }
  return { overlay, proposed };
}

/** The workload before and after the proposals; an entry under its namespace when its verdict changes. */
function evaluateImpactOn(
  dependencies: ImpactDependencies,
  overlay: IndexOverlay,
  workload: KeptWorkload,
  byNamespace: Map<string, ImpactedWorkload[]>,
): void {
  const before = evaluateWorkload(dependencies.index, workload).findings;
  const after = evaluateWorkload(overlay, workload).findings;
  const difference = compare(before, after);
  if (!difference) return;
  const object = dependencies.objectOf(workload.identity) ?? (JSON.parse(workload.json) as KubernetesObject);
  const { identity } = workload;
  const viewer = { level: 'full' as const, namespace: identity.namespace };
  const entry: ImpactedWorkload = {
    kind: identity.kind,
    apiVersion: apiVersionOf(identity, object),
    namespace: identity.namespace,
    name: identity.name,
    ...(identity.owner ? { owner: identity.owner } : {}),
    change: difference.change,
    findings: renderFindings(difference.findings, object, () => viewer),
  };
  const list = byNamespace.get(identity.namespace) ?? [];
  list.push(entry);
  byNamespace.set(identity.namespace, list);
}

function impactReport(
  proposed: ProposedPolicy[],
  evaluatedWorkloads: number,
  byNamespace: ReadonlyMap<string, ImpactedWorkload[]>,
): ImpactReport {
  const all = [...byNamespace.values()].flat();
  const count = (change: ImpactChange) => all.filter((entry) => entry.change === change).length;
  return {
    proposed,
    evaluatedWorkloads,
    newlyRejectedCount: count('newly-rejected'),
    newlyWarnedCount: count('newly-warned'),
    noLongerRejectedCount: count('no-longer-rejected'),
    namespaces: [...byNamespace.entries()]
      .sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0))
      .map(([namespace, entries]) => ({
        namespace,
        workloads: entries.sort(
          (left, right) =>
            (left.kind < right.kind ? -1 : left.kind > right.kind ? 1 : 0) ||
            (left.name < right.name ? -1 : left.name > right.name ? 1 : 0),
        ),
      })),
  };
}
