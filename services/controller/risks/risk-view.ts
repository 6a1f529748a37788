import { SCHEMA_VERSION, type CheckedConstraint, type DetailLevel } from '../../model/api';
import type { Constraint, ConstraintDraft } from '../../model/constraint';
import type { KubernetesObject } from '../../model/kubernetes';
import type { Viewer } from '../../model/text';
import { checkedEntry, compareChecked } from '../verdicts/admission-check';
import type { RiskFinding, RiskOutcome, WorkloadIdentity, WorkloadRisk } from './workload-risk';
import { outcomeOf } from './workload-risk';

// `GET /resources/risks/{namespace}` (issue 35): the namespace's workloads that would be refused or
// warned about on their next apply, each finding rendered exactly as `check` renders an entry of
// the admission check, at the caller's level (section 4: the workloads are the namespace's own,
// constraints from elsewhere are redacted below `full`, per constraint where the caller's RBAC was
// asked).

export interface RiskWorkloadEntry {
  kind: string;
  apiVersion: string;
  namespace: string;
  name: string;
  owner?: { kind: string; name: string };
  /** `rejected` when at least one finding rejects it, else `warned`. */
  outcome: RiskOutcome;
  findings: CheckedConstraint[];
}

export interface RisksReport {
  namespace: string;
  schemaVersion: string;
  detailLevel: DetailLevel;
  generatedAt: string;
  /** False until the first evaluation of every workload after the first sync has completed. */
  evaluated: boolean;
  /** Changes waiting to be evaluated (the answer may lag behind them by the debounce). */
  pending: number;
  /** Workloads that would be rejected on their next apply. */
  atRiskCount: number;
  /** Workloads that would only be warned about (or audited). */
  warnedCount: number;
  workloads: RiskWorkloadEntry[];
}

export interface RisksSource {
  risksInNamespace(namespace: string): WorkloadRisk[];
  /** The kept object of a workload (evidence paths are cut back to its fields for hidden policies). */
  objectOf(workload: WorkloadIdentity): KubernetesObject | undefined;
  status(): { evaluated: boolean; pending: number };
}

/** The constraints a namespace's findings name: whose source the caller's RBAC is asked about. */
export function constraintsOfRisks(risks: readonly WorkloadRisk[]): Constraint[] {
  return [...new Set(risks.flatMap((risk) => risk.findings.map((finding) => finding.constraint)))];
}

export function apiVersionOf(workload: Pick<WorkloadIdentity, 'group'>, object?: KubernetesObject): string {
  return object?.apiVersion ?? (workload.group === '' ? 'v1' : `${workload.group}/v1`);
}

/** Findings as `check` shows them: the admission check's entries, in its order. */
export function renderFindings(
  findings: readonly RiskFinding[],
  object: KubernetesObject,
  viewerOf: (constraint: ConstraintDraft) => Viewer,
): CheckedConstraint[] {
  return findings
    .map(({ constraint, verdict }) => checkedEntry(constraint, verdict, object, viewerOf(constraint)))
    .sort(compareChecked);
}

export function renderWorkloadRisk(
  risk: WorkloadRisk,
  object: KubernetesObject,
  viewerOf: (constraint: ConstraintDraft) => Viewer,
): RiskWorkloadEntry {
  const { workload } = risk;
  return {
    kind: workload.kind,
    apiVersion: apiVersionOf(workload, object),
    namespace: workload.namespace,
    name: workload.name,
    ...(workload.owner ? { owner: workload.owner } : {}),
    outcome: outcomeOf(risk) ?? 'warned',
    findings: renderFindings(risk.findings, object, viewerOf),
  };
}

export function buildRisksReport(
  source: RisksSource,
  namespace: string,
  level: DetailLevel,
  now: Date,
  levelOf?: (constraint: Constraint) => DetailLevel,
): RisksReport {
  const viewer: Viewer = { level, namespace };
  const viewerOf = levelOf
    ? (constraint: ConstraintDraft): Viewer => ({ level: levelOf(constraint as Constraint), namespace })
    : () => viewer;
  const workloads = source.risksInNamespace(namespace).flatMap((risk) => {
    const object = source.objectOf(risk.workload);
    return object ? [renderWorkloadRisk(risk, object, viewerOf)] : [];
  });
  const status = source.status();
  return {
    namespace,
    schemaVersion: SCHEMA_VERSION,
    detailLevel: level,
    generatedAt: now.toISOString(),
    evaluated: status.evaluated,
    pending: status.pending,
    atRiskCount: workloads.filter((entry) => entry.outcome === 'rejected').length,
    warnedCount: workloads.filter((entry) => entry.outcome === 'warned').length,
    workloads,
  };
}
