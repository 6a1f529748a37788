import type { ConstraintDraft as Constraint } from '../../model/constraint';
import type { KubernetesObject, Labels } from '../../model/kubernetes';
import type { Text } from '../../model/text';
import type { EvaluationGuard } from './guard/evaluation-guard';
import type { ParamObjectsOfKind } from '../index/param-objects';

// What the verdict evaluators share (DESIGN.md 7b). Every evaluator is a pure function of the
// admitted object, the constraint, the source object the constraint came from and what else the
// index holds (limit ranges for defaulting, params, bound policies).

export type VerdictKind = 'violates' | 'passes' | 'applies' | 'unknown';

/**
 * One failing field. The message is Text: the object's own values are plain strings (they are the
 * caller's), what the policy requires is a `detail` part so the views hide it where section 4 says.
 */
export interface Evidence {
  /** Field path in the admitted object: `spec.template.spec.containers[1].resources.limits.memory`. */
  path: string;
  message: Text;
}

export interface Verdict {
  verdict: VerdictKind;
  evidence: Evidence[];
  /** Why the verdict is `unknown`, or a note (defaults a LimitRange will set). */
  reason?: Text;
  /**
   * Who the engine rejects: the object itself (admission policies) or the pods its controller
   * creates (quotas, limit ranges, Pod Security Admission) — "its pods will be rejected".
   */
  rejects?: 'object' | 'pods';
  /** The rule named in a violation's summary when it is not the constraint's source (a bound policy). */
  rule?: Text;
  /**
   * Set on an `unknown` the evaluation guard caused: the object's evaluation was stopped (its CPU
   * deadline or wall backstop, or its work budget) before this constraint was decided. A deadline
   * stop depends on how busy the process was, so background evaluations try again later.
   */
  stoppedBy?: 'deadline' | 'work';
}

/** The constraint does not apply to this object (its own match conditions exclude it): not listed. */
export const NOT_APPLICABLE = 'not-applicable' as const;
export type VerdictOutcome = Verdict | typeof NOT_APPLICABLE;

export type AdmissionOperation = 'CREATE' | 'UPDATE';

/**
 * Who makes the request, as the API server's AdmissionReview says (`request.userInfo`). Role names
 * come from the requester's RoleBindings and ClusterRoleBindings, which the review does not carry:
 * absent, rules that name roles cannot be decided.
 */
export interface Requester {
  username: string;
  groups: readonly string[];
  roles?: readonly string[];
  clusterRoles?: readonly string[];
}

/** The object being admitted and where it goes. */
export interface AdmittedObject {
  object: KubernetesObject;
  oldObject?: KubernetesObject;
  operation: AdmissionOperation;
  /**
   * A CREATE of an object that may already exist (`check` of a kind the controller does not read,
   * such as ConfigMaps): applying it may be the UPDATE of a stored one. What only a CREATE is
   * charged for (a quota's object count) is then undecided.
   */
  mayExist?: boolean;
  /**
   * A running workload judged for its next rollout (risks, impact), not one request: a rollout
   * creates new ReplicaSets and Pods, so a violation the stored object already had is not allowed
   * as it is for an UPDATE of the object alone (Kyverno's `allowExistingViolations`).
   */
  rollout?: boolean;
  namespace: string;
  namespaceLabels: Labels;
  /** Absent offline (`check` of manifests): rules that depend on who asks are then `unknown`. */
  requester?: Requester;
}

/** What evaluators may look up in the index. */
export interface VerdictIndex {
  /** The source object a constraint was derived from. */
  sourceOf(constraint: Constraint): KubernetesObject | undefined;
  /** Any indexed source object by group, kind, namespace (null: cluster-scoped) and name. */
  find(group: string, kind: string, namespace: string | null, name: string): KubernetesObject | undefined;
  /** Indexed source objects of one kind in a namespace (LimitRanges for defaulting). */
  listInNamespace(group: string, kind: string, namespace: string): readonly KubernetesObject[];
  /** Every known namespace with its labels (Gatekeeper's synced Namespaces); absent: none known. */
  namespaces?(): Array<{ name: string; labels: Labels }>;
  /** ValidatingAdmissionPolicy params of a kind; undefined when the index reads no object of it. */
  paramsOfKind(group: string, kind: string): ParamObjectsOfKind | undefined;
}

export interface VerdictContext {
  admitted: AdmittedObject;
  index: VerdictIndex;
  /** Bounds the time and work of this object's evaluation (guard/evaluation-guard.ts). */
  guard: EvaluationGuard;
  /**
   * Every constraint evaluated for this object: evaluators that run in the evaluation isolate send
   * the object's others along in the same call (gatekeeper/rego-template.ts).
   */
  constraints?: readonly Constraint[];
}

export type ConstraintEvaluator = (
  constraint: Constraint,
  source: KubernetesObject,
  context: VerdictContext,
) => VerdictOutcome;

export function applies(reason?: Text): Verdict {
  return reason ? { verdict: 'applies', evidence: [], reason } : { verdict: 'applies', evidence: [] };
}

export function unknown(reason: Text): Verdict {
  return { verdict: 'unknown', evidence: [], reason };
}
