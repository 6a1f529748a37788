import type { Constraint, ConstraintDraft } from '../../model/constraint';
import { groupOf, isRecord, readPath, referenceKey, type KubernetesObject } from '../../model/kubernetes';
import { COMPANION_KINDS } from '../../model/watched-kinds';
import { isRepresentedByOwner, workloadKind } from '../../model/workload-kinds';
import type { ConstraintIndex } from '../index/constraint-index';
import { denies, evaluateAdmission } from '../verdicts/admission-check';
import type { Verdict } from '../verdicts/types';
import { asControllerVerdict, rolloutPodOf, rolloutRequest, templatePathOf } from './rollout-objects';

// Workloads at risk (issue 35), the pure core: which running objects would be refused or warned
// about if they were applied again now. Each object is evaluated exactly as the admission check
// evaluates an object the API server sends (same matching, defaulting, engines and guard), as an
// UPDATE whose old object is itself: a re-apply, a rollout restart, a scale-up's template.

/** Who a workload is: what a finding names. */
export interface WorkloadIdentity {
  group: string;
  kind: string;
  namespace: string;
  name: string;
  /** The controller that owns it (a Deployment owned by an operator's custom resource), if any. */
  owner?: { kind: string; name: string };
}

/** What the cluster would do with the workload on its next apply. */
export type RiskOutcome = 'rejected' | 'warned';

/** One constraint the workload violates, as evaluated: rendered per viewer when read (risk-view.ts). */
export interface RiskFinding {
  constraint: Constraint;
  verdict: Verdict;
  outcome: RiskOutcome;
}

export interface WorkloadRisk {
  workload: WorkloadIdentity;
  /** Only violations: a workload that passes everything has none and is not at risk. */
  findings: RiskFinding[];
  /**
   * The evaluation guard stopped the evaluation at its deadline (a busy process, or an object too
   * costly to judge): the verdicts after that point are `unknown` and the findings may be missing
   * some. Worth evaluating again later (stopped-retries.ts).
   */
  stoppedAtDeadline?: boolean;
}

/** A workload kept for evaluation: its identity and the object as JSON (compact; parsed per evaluation). */
export interface KeptWorkload {
  key: string;
  identity: WorkloadIdentity;
  json: string;
}

/**
 * Namespaced kinds other than pod controllers that policies are written for and the controller
 * already watches for its companion rules (Services, Ingresses, PodDisruptionBudgets, ...).
 */
const OTHER_EVALUATED_KINDS = new Set(
  COMPANION_KINDS.filter((kind) => kind.namespaced).map(({ group, kind }) => `${group}/${kind}`),
);

/**
 * Whether the object is one the workloads at risk evaluate: a pod controller or bare Pod that is
 * not represented by its owner (a ReplicaSet of a Deployment, a Pod of a ReplicaSet, a Job of a
 * CronJob are evaluated through their owner's template), or another watched namespaced kind.
 */
export function isEvaluatedWorkload(object: KubernetesObject): boolean {
  const group = groupOf(object.apiVersion);
  const kind = object.kind ?? '';
  const name = object.metadata?.name;
  if (typeof name !== 'string' || name === '') return false;
  const entry = workloadKind(group, kind);
  if (entry) return !isRepresentedByOwner(entry, object);
  return OTHER_EVALUATED_KINDS.has(`${group}/${kind}`);
}

/** The key a workload is kept under: group, kind, namespace and name. */
export function workloadKeyOf(object: KubernetesObject): string {
  return referenceKey({
    group: groupOf(object.apiVersion),
    kind: object.kind ?? '',
    namespace: namespaceOf(object),
    name: typeof object.metadata?.name === 'string' ? object.metadata.name : '',
  });
}

function namespaceOf(object: KubernetesObject): string {
  const namespace = object.metadata?.namespace;
  return typeof namespace === 'string' && namespace !== '' ? namespace : 'default';
}

function ownerOf(object: KubernetesObject): WorkloadIdentity['owner'] {
  const owners = readPath(object, ['metadata', 'ownerReferences']);
  if (!Array.isArray(owners)) return undefined;
  const owner: unknown =
    owners.find((candidate) => isRecord(candidate) && candidate.controller === true) ?? owners[0];
  if (!isRecord(owner) || typeof owner.kind !== 'string' || typeof owner.name !== 'string') return undefined;
  return { kind: owner.kind, name: owner.name };
}

/**
 * What is kept of a workload: everything admission rules read (metadata the user sets, spec), not
 * what the cluster writes about it (status, managed fields, resource version): a re-apply sends
 * the former. Kept as JSON, a fifth of the size of the parsed object.
 */
export function keepWorkload(object: KubernetesObject): KeptWorkload {
  const metadata = isRecord(object.metadata) ? object.metadata : {};
  const kept = {
    apiVersion: object.apiVersion,
    kind: object.kind,
    metadata: {
      name: metadata.name,
      namespace: namespaceOf(object),
      ...(metadata.uid === undefined ? {} : { uid: metadata.uid }),
      ...(metadata.generateName === undefined ? {} : { generateName: metadata.generateName }),
      ...(metadata.labels === undefined ? {} : { labels: metadata.labels }),
      ...(metadata.annotations === undefined
        ? {}
        : { annotations: withoutLastApplied(metadata.annotations) }),
      ...(metadata.ownerReferences === undefined ? {} : { ownerReferences: metadata.ownerReferences }),
    },
    ...Object.fromEntries(
      Object.entries(object).filter(
        ([field]) => !['apiVersion', 'kind', 'metadata', 'status'].includes(field),
      ),
    ),
  };
  const owner = ownerOf(object);
  return {
    key: workloadKeyOf(object),
    identity: {
      group: groupOf(object.apiVersion),
      kind: object.kind ?? '',
      namespace: namespaceOf(object),
      name: String(metadata.name),
      ...(owner ? { owner } : {}),
    },
    json: JSON.stringify(kept),
  };
}

/** kubectl's copy of the whole object in an annotation doubles what is kept and no rule reads it. */
function withoutLastApplied(annotations: unknown): unknown {
  if (!isRecord(annotations) || !('kubectl.kubernetes.io/last-applied-configuration' in annotations))
    return annotations;
  return Object.fromEntries(
    Object.entries(annotations).filter(([key]) => key !== 'kubectl.kubernetes.io/last-applied-configuration'),
  );
}

/** One constraint's verdict on a workload's next rollout. */
export interface RolloutVerdict {
  constraint: Constraint;
  verdict: Verdict;
}

/**
 * Every verdict on the workload's next rollout (violations, passes, `unknown`s), as the admission
 * check evaluates it (rollout-objects.ts): a controller's update (its old object itself) and then
 * the Pods it creates, judged by the constraints its own update does not meet (those written for
 * Pods alone); a bare Pod's or Job's re-creation. The fidelity tier compares them with the engines;
 * the workloads at risk keep the violations.
 */
export function rolloutVerdicts(index: ConstraintIndex, workload: KeptWorkload): RolloutVerdict[] {
  const object = JSON.parse(workload.json) as KubernetesObject;
  const own = evaluateAdmission(index, rolloutRequest(object)).verdicts;
  // Without companion findings every constraint evaluated is one of the index's.
  const verdicts: RolloutVerdict[] = own.map(({ constraint, verdict }) => ({
    constraint: constraint as Constraint,
    verdict,
  }));
  const pod = rolloutPodOf(object);
  if (!pod) return verdicts;
  // The constraints the update already judged are not evaluated again on the Pod (Pod Security,
  // quotas, Kyverno's auto-generated rules judge the template): the controller's verdict stands.
  const judged = new Set(own.map(({ constraint }) => constraint.id));
  const templatePath = templatePathOf(object);
  const podRequest = { object: pod, operation: 'CREATE', rollout: true } as const;
  for (const { constraint, verdict } of evaluateAdmission(index, podRequest, [], judged).verdicts)
    verdicts.push({
      constraint: constraint as Constraint,
      verdict: asControllerVerdict(verdict, templatePath),
    });
  return verdicts;
}

/** The workload's violations against the index: what would be refused or warned about. */
export function evaluateWorkload(index: ConstraintIndex, workload: KeptWorkload): WorkloadRisk {
  const findings: RiskFinding[] = [];
  let stoppedAtDeadline = false;
  for (const { constraint, verdict } of rolloutVerdicts(index, workload)) {
    if (verdict.stoppedBy === 'deadline') stoppedAtDeadline = true;
    if (verdict.verdict === 'violates')
      findings.push({ constraint, verdict, outcome: denies(constraint) ? 'rejected' : 'warned' });
  }
  return { workload: workload.identity, findings, ...(stoppedAtDeadline ? { stoppedAtDeadline } : {}) };
}

/** The worst outcome of a workload's findings, or undefined when it has none. */
export function outcomeOf(risk: Pick<WorkloadRisk, 'findings'>): RiskOutcome | undefined {
  if (risk.findings.some((finding) => finding.outcome === 'rejected')) return 'rejected';
  return risk.findings.length > 0 ? 'warned' : undefined;
}

/** The index key of the source object a constraint came from (its id up to `#`). */
export function sourceKeyOfConstraint(constraint: Pick<ConstraintDraft, 'id'>): string {
  const separator = constraint.id.indexOf('#');
  return separator === -1 ? constraint.id : constraint.id.slice(0, separator);
}
