import type { CheckedConstraint, ListedConstraint, Severity } from '../../model/api';
import { formatResourceParameter } from '../../model/admission-query';
import type { ResourceTarget } from '../../model/constraint';
import { groupOf, type KubernetesObject, type Labels } from '../../model/kubernetes';
import { pluralOfKind } from '../../model/resources';
import { orderedWarnings, type AdmissionWarning } from '../../model/warnings';
import { isOpaqueReference } from '../../model/opaque-reference';
import { consequenceOf, type ObjectConsequence } from '../../model/object-consequence';
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
> & {
  /**
   * Other constraints of the same source that fail on exactly the same evidence (Pod Security
   * `audit` and `warn` beside `enforce`): one cause, shown once (issue 31).
   */
  sameCause?: Array<Pick<LookedUpConstraint, 'name' | 'summary' | 'severity'>>;
};

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
  /** What will happen to the object: rejections, audits and warnings, rules not evaluated. */
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
  /** Findings of objects that will be admitted but audited, warned about, or lack a companion. */
  auditedOrWarnedCount: number;
  /** Rules about an object that could not be evaluated here, and objects not evaluated at all. */
  unknownCount: number;
  /**
   * Constraints that only apply (network, mesh, mutations, webhooks that decide by themselves):
   * once per namespace, never counted as findings of an object (issue 31).
   */
  standing: StandingConstraints[];
}

export interface StandingConstraints {
  /** Empty for cluster-scoped objects. */
  namespace: string;
  constraints: CheckFinding[];
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
): Promise<{ checked: CheckedObject; warnings: AdmissionWarning[]; standing: CheckFinding[] }> {
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
  if (skipped !== undefined) return { checked: { ...checked, skipped }, warnings: [], standing: [] };
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
  const warnings = orderedWarnings(constraints);
  const findings: LookedUpConstraint[] = [];
  const standing: CheckFinding[] = [];
  const passed: CheckFinding[] = [];
  for (const constraint of constraints) {
    const consequence = consequenceOf(constraint);
    if (consequence === 'passes') passed.push(findingOf(constraint));
    else if (consequence === 'standing') standing.push(findingOf(constraint));
    // Info never warns (spec 4.5), and is no finding about the object either; but a constraint
    // that only records (Gatekeeper dryrun: Info, audit) and could not be evaluated is said: the
    // object may fail it.
    else if (constraint.severity !== 'Info' || (constraint.effect === 'audit' && consequence === 'unknown'))
      findings.push(constraint);
  }
  return {
    checked: {
      ...checked,
      warnings: warnings.map((warning) => warning.text),
      findings: withOneFindingPerCause(findings),
      passed,
    },
    warnings,
    standing,
  };
}

/**
 * One finding per cause: a finding whose source and evidence equal an earlier one's (Pod Security's
 * enforce, audit and warn modes of one level on one object) is folded into it as `sameCause`. The
 * findings come Critical first, so the one kept is the most severe.
 */
function withOneFindingPerCause(constraints: readonly LookedUpConstraint[]): CheckFinding[] {
  const byCause = new Map<string, CheckFinding>();
  const kept: CheckFinding[] = [];
  for (const constraint of constraints) {
    const finding = findingOf(constraint);
    const evidence = constraint.evidence ?? [];
    const cause =
      constraint.verdict === 'violates' && evidence.length > 0
        ? JSON.stringify([constraint.sourceKind, constraint.sourceName, constraint.ref ?? '', evidence])
        : undefined;
    const first = cause === undefined ? undefined : byCause.get(cause);
    if (first) {
      first.sameCause = [
        ...(first.sameCause ?? []),
        { name: finding.name, summary: finding.summary, severity: finding.severity },
      ];
      continue;
    }
    if (cause !== undefined) byCause.set(cause, finding);
    kept.push(finding);
  }
  return kept;
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

/** Findings with this consequence; Info ones (a dryrun not evaluated) are shown but never counted. */
function countOf(objects: readonly CheckedObject[], consequence: ObjectConsequence): number {
  return objects
    .flatMap((object) => object.findings)
    .filter((finding) => finding.severity !== 'Info' && consequenceOf(finding) === consequence).length;
}

/** Standing constraints once per namespace, in the order the objects met them. */
function standingByNamespace(
  standing: ReadonlyArray<{ namespace: string; findings: readonly CheckFinding[] }>,
): StandingConstraints[] {
  const byNamespace = new Map<string, Map<string, CheckFinding>>();
  for (const { namespace, findings } of standing) {
    let seen = byNamespace.get(namespace);
    if (!seen) byNamespace.set(namespace, (seen = new Map()));
    for (const finding of findings) {
      const key = JSON.stringify([finding.sourceKind, finding.name, finding.ref ?? '', finding.summary]);
      if (!seen.has(key)) seen.set(key, finding);
    }
  }
  return [...byNamespace]
    .filter(([, findings]) => findings.size > 0)
    .map(([namespace, findings]) => ({ namespace, constraints: [...findings.values()] }));
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
  const standing: Array<{ namespace: string; findings: CheckFinding[] }> = [];
  // One at a time: against a controller this keeps the load of a large manifest to one request. In
  // the controller, the event loop gets a turn between objects, and once the request's budget is
  // spent the objects left are `unknown` instead of evaluated.
  for (const object of parsed.objects) {
    const step = await budget.step(() => checkObject(object, lookup, options.namespace));
    if (!step.ran) {
      objects.push(unevaluatedObject(object, budget.reason));
      continue;
    }
    const result = step.value;
    objects.push(result.checked);
    severities.push(...result.warnings.map((warning) => warning.severity));
    standing.push({ namespace: result.checked.namespace ?? '', findings: result.standing });
  }
  return {
    file,
    objects,
    problems: parsed.problems,
    criticalCount: severities.filter((severity) => severity === 'Critical').length,
    warningCount: severities.filter((severity) => severity === 'Warning').length,
    rejectionCount: countOf(objects, 'rejected'),
    auditedOrWarnedCount: countOf(objects, 'warned'),
    // An object the budget did not reach is not evaluated either.
    unknownCount:
      countOf(objects, 'unknown') + objects.filter((object) => object.verdict === 'unknown').length,
    standing: standingByNamespace(standing),
  };
}
