import type { CheckedConstraint, ListedConstraint, Severity } from '../../model/api';
import { formatResourceParameter } from '../../model/admission-query';
import type { ResourceTarget } from '../../model/constraint';
import { groupOf, type KubernetesObject, type Labels } from '../../model/kubernetes';
import { pluralOfKind } from '../../model/resources';
import { orderedWarnings, type AdmissionWarning } from '../../model/warnings';
import { isOpaqueReference } from '../../model/opaque-reference';
import { workloadLabels } from '../../model/workload-kinds';
import { parseManifestIsolated } from '../sources/isolated-parsing';
import { isClusterScoped, type ManifestProblem } from '../sources/manifest-parsing';
import { unlimitedRequestBudget, type RequestBudget } from './request-budget';

// `check`: the admission warnings a manifest would get, without applying it. Shared by the MCP
// `check` tool and `forewarn check` (offline against a manifests directory, or against a running
// controller): each object is turned into the query the webhook would send (namespace,
// `request.resource`, pod-template labels) and the answer into warnings by the model's warning
// functions the webhook uses too, so the three can only differ in where the constraints come from.

/** The question the webhook asks the controller for one admitted object. */
export interface AdmissionQuery {
  namespace: string;
  resource: ResourceTarget;
  /** Pod-template labels (or the object's own); empty: the object has none and matches only empty selectors. */
  labels: Labels;
  /** The object itself, for companion checks (missing resources it references). */
  object: KubernetesObject;
  /**
   * A cluster-scoped object (a Namespace): checked against the cluster-wide constraints that
   * intercept its resource (`namespace` is then its own name for a Namespace, else empty).
   */
  clusterScoped?: boolean;
}

/** A constraint as a lookup gives it: with the verdict on the object when it was evaluated. */
export type LookedUpConstraint = Omit<ListedConstraint, 'detailLevel'> &
  Partial<Pick<CheckedConstraint, 'verdict' | 'evidence' | 'reason' | 'detailLevel'>>;

/** Where constraints come from: an in-process index, or a controller's `POST /api/v1/admission-check`. */
export type ConstraintLookup = (query: AdmissionQuery) => Promise<readonly LookedUpConstraint[]>;

/**
 * A constraint behind one of the warnings (Warning or Critical; Info never warns), an audit-only one
 * that could not be evaluated, or one passed.
 */
export type CheckFinding = Pick<
  LookedUpConstraint,
  | 'name'
  | 'ref'
  | 'constraintType'
  | 'severity'
  | 'effect'
  | 'summary'
  | 'remediationHint'
  | 'sourceKind'
  | 'verdict'
  | 'evidence'
  | 'reason'
  | 'detailLevel'
>;

export interface CheckedObject {
  kind: string;
  apiVersion: string;
  name: string;
  /** null for cluster-scoped objects. */
  namespace: string | null;
  /** `request.resource` as the webhook sees it, e.g. `apps/deployments` or `pods`. */
  resource: string;
  /** Why the object was not checked (kubectl would refuse it); absent when it was checked. */
  skipped?: string;
  /**
   * `unknown` when the request's CPU budget ran out before this object (request-budget.ts): it was
   * not evaluated, `reason` says why, and its empty warnings mean nothing.
   */
  verdict?: 'unknown';
  reason?: string;
  /** Exactly the admission warnings, Critical first. */
  warnings: string[];
  findings: CheckFinding[];
  /** Constraints evaluated on the object that it passes: no warning. */
  passed: CheckFinding[];
}

export interface ManifestCheckReport {
  file: string;
  objects: CheckedObject[];
  /** Documents that do not parse (file and line); their objects are not checked. */
  problems: ManifestProblem[];
  criticalCount: number;
  warningCount: number;
  /** Violations of a denying source: objects (or their pods) the cluster will reject. */
  rejectionCount: number;
}

export interface ManifestCheckOptions {
  /** Namespace for objects that set none (`kubectl apply -n`); default `default`. */
  namespace?: string;
  /**
   * The request's CPU budget, shared by every call of one HTTP request (the MCP `check` tool);
   * default: none (the CLI checks the user's own files on the user's own machine).
   */
  budget?: RequestBudget;
}

/**
 * Why an object is not checked. Every kind is checked against the constraints that can apply to it,
 * whatever Forewarn's webhook is registered for: the API server enforces quotas, LimitRanges,
 * ValidatingAdmissionPolicies and the policy engines' webhooks on Ingresses, Secrets and
 * PersistentVolumeClaims as on workloads. Only an object kubectl itself would refuse is left out.
 */
function skipReason(object: KubernetesObject, requestedNamespace: string | undefined): string | undefined {
  if (isClusterScoped(object.apiVersion, object.kind)) return undefined;
  const namespace = object.metadata?.namespace;
  if (requestedNamespace !== undefined && namespace !== requestedNamespace)
    return `the manifest sets namespace ${namespace}, not ${requestedNamespace}; kubectl apply -n ${requestedNamespace} would refuse it`;
  return undefined;
}

async function checkObject(
  object: KubernetesObject,
  lookup: ConstraintLookup,
  requestedNamespace: string | undefined,
): Promise<{ checked: CheckedObject; warnings: AdmissionWarning[] }> {
  const kind = object.kind ?? '';
  const apiVersion = object.apiVersion ?? '';
  const group = groupOf(apiVersion);
  const resource: ResourceTarget = { group, resource: pluralOfKind(kind) };
  const skipped = skipReason(object, requestedNamespace);
  const checked: CheckedObject = {
    kind,
    apiVersion,
    name: object.metadata?.name ?? '',
    namespace: object.metadata?.namespace ?? null,
    resource: formatResourceParameter(resource),
    warnings: [],
    findings: [],
    passed: [],
  };
  if (skipped !== undefined) return { checked: { ...checked, skipped }, warnings: [] };
  const clusterScoped = isClusterScoped(apiVersion, kind);
  const constraints = await lookup({
    namespace: clusterScoped
      ? kind === 'Namespace' && group === ''
        ? checked.name
        : ''
      : (object.metadata?.namespace ?? 'default'),
    resource,
    labels: workloadLabels({ group, kind }, object),
    object,
    ...(clusterScoped ? { clusterScoped } : {}),
  });
  const warned = constraints.filter(
    (constraint) => constraint.severity !== 'Info' && constraint.verdict !== 'passes',
  );
  const warnings = orderedWarnings(warned);
  // A constraint that only records (Gatekeeper dryrun: Info, audit) gives no warning, but when it
  // could not be evaluated the check says so rather than leave it out: the object may fail it.
  const findings = constraints
    .filter(
      (constraint) =>
        warned.includes(constraint) ||
        (constraint.severity === 'Info' && constraint.effect === 'audit' && constraint.verdict === 'unknown'),
    )
    .map(findingOf);
  const passed = constraints.filter((constraint) => constraint.verdict === 'passes').map(findingOf);
  return {
    checked: { ...checked, warnings: warnings.map((warning) => warning.text), findings, passed },
    warnings,
  };
}

/** An object the request's budget did not reach: named, with the reason, evaluated not at all. */
function unevaluatedObject(object: KubernetesObject, reason: string): CheckedObject {
  const kind = object.kind ?? '';
  const apiVersion = object.apiVersion ?? '';
  return {
    kind,
    apiVersion,
    name: object.metadata?.name ?? '',
    namespace: object.metadata?.namespace ?? null,
    resource: formatResourceParameter({ group: groupOf(apiVersion), resource: pluralOfKind(kind) }),
    verdict: 'unknown',
    reason,
    warnings: [],
    findings: [],
    passed: [],
  };
}

function findingOf(constraint: LookedUpConstraint): CheckFinding {
  const finding: CheckFinding = {
    name: constraint.name,
    constraintType: constraint.constraintType,
    severity: constraint.severity,
    effect: constraint.effect,
    summary: constraint.summary,
    remediationHint: constraint.remediationHint,
    sourceKind: constraint.sourceKind,
  };
  if (isOpaqueReference(constraint.ref)) finding.ref = constraint.ref;
  if (constraint.verdict) finding.verdict = constraint.verdict;
  if (constraint.evidence) finding.evidence = constraint.evidence;
  if (constraint.reason) finding.reason = constraint.reason;
  // The level it was rendered at (issue 24: `full` where the caller's own RBAC lets it read the source).
  if (constraint.detailLevel) finding.detailLevel = constraint.detailLevel;
  return finding;
}

/**
 * What the cluster will reject: Critical violations. A lookup without verdicts (an older controller)
 * falls back to every Critical warning, as before verdicts existed.
 */
function rejectionsOf(objects: readonly CheckedObject[]): number {
  const findings = objects.flatMap((object) => object.findings);
  const withVerdicts =
    objects.some((object) => object.passed.length > 0) || findings.some((finding) => finding.verdict);
  return findings.filter(
    (finding) => finding.severity === 'Critical' && (!withVerdicts || finding.verdict === 'violates'),
  ).length;
}

/** Parses a manifest (multi-document YAML or JSON) and checks each object; never applies anything. */
export async function checkManifest(
  file: string,
  content: string,
  lookup: ConstraintLookup,
  options: ManifestCheckOptions = {},
): Promise<ManifestCheckReport> {
  const budget = options.budget ?? unlimitedRequestBudget();
  // Isolated: the MCP `check` tool takes up to 1 MiB and runs on the controller's event loop. A
  // step of the request too, so that the calls of a batch do not parse in the same turn.
  const parsing = await budget.step(() =>
    parseManifestIsolated(file, content, { defaultNamespace: options.namespace ?? 'default' }),
  );
  const parsed = parsing.ran
    ? parsing.value
    : { objects: [], problems: [{ file, line: 1, message: budget.reason }] };
  const objects: CheckedObject[] = [];
  const severities: Severity[] = [];
  // One at a time: against a controller this keeps the load of a large manifest to one request. In
  // the controller, the event loop gets a turn between objects, and once the request's budget is
  // spent the objects left are `unknown` instead of evaluated.
  for (const object of parsed.objects) {
    const step = await budget.step(() => checkObject(object, lookup, options.namespace));
    if (!step.ran) {
      objects.push(unevaluatedObject(object, budget.reason));
      continue;
    }
    const { checked, warnings } = step.value;
    objects.push(checked);
    severities.push(...warnings.map((warning) => warning.severity));
  }
  return {
    file,
    objects,
    problems: parsed.problems,
    criticalCount: severities.filter((severity) => severity === 'Critical').length,
    warningCount: severities.filter((severity) => severity === 'Warning').length,
    rejectionCount: rejectionsOf(objects),
  };
}
