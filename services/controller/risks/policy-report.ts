import { createHash } from 'node:crypto';
import type { CheckedConstraint, Severity } from '../../model/api';
import { REDACTED } from '../../model/text';
import type { RiskCounts } from './risk-tracker';
import type { RisksReport, RiskWorkloadEntry } from './risk-view';

// The workloads at risk as PolicyReport objects (`wgpolicyk8s.io/v1alpha2`, issue 35, opt in with
// `--policy-reports`), the pure core: a namespace's risks view (risk-view.ts, rendered at the
// controller's `--detail-level` for that namespace, as any reader of its reports may see it) becomes
// its PolicyReport `forewarn`, and the counts by namespace become the ClusterPolicyReport
// `forewarn`. Only findings are reported (`fail`: would be rejected, `warn`: warned or audited);
// what passes is the engines' own reports' business. docs/decisions.md (Policy reports) says why.

export const POLICY_REPORT_API_VERSION = 'wgpolicyk8s.io/v1alpha2';
/** The one report per namespace, and the one cluster report. */
export const POLICY_REPORT_NAME = 'forewarn';
export const POLICY_REPORT_SOURCE = 'forewarn';
/** Only objects carrying it are ever updated or deleted: Forewarn's own. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_VALUE = 'forewarn';
/** Findings left out of a report by its size limits (the summary still counts them). */
export const OMITTED_RESULTS_ANNOTATION = 'forewarn.io/omitted-results';
/** The level the report's names and details were rendered at. */
export const DETAIL_LEVEL_ANNOTATION = 'forewarn.io/detail-level';

export type PolicyReportKind = 'PolicyReport' | 'ClusterPolicyReport';
export type PolicyResultValue = 'pass' | 'fail' | 'warn' | 'error' | 'skip';
export type PolicyResultSeverity = 'critical' | 'high' | 'medium' | 'low' | 'info';

export interface PolicyReportResource {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  uid?: string;
}

export interface PolicyReportResult {
  source: string;
  policy: string;
  rule?: string;
  category?: string;
  result: PolicyResultValue;
  severity: PolicyResultSeverity;
  scored: boolean;
  message: string;
  resources: PolicyReportResource[];
  properties: Record<string, string>;
  timestamp: { seconds: number; nanos: number };
}

export interface PolicyReportSummary {
  pass: number;
  fail: number;
  warn: number;
  error: number;
  skip: number;
}

export interface PolicyReportObject {
  apiVersion: typeof POLICY_REPORT_API_VERSION;
  kind: PolicyReportKind;
  metadata: {
    name: string;
    namespace?: string;
    /** Always set by the builder; a report read back may lack them (the server drops empty maps). */
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  results: PolicyReportResult[];
  summary: PolicyReportSummary;
}

export interface PolicyReportLimits {
  /** The most results one report holds (the worst first). */
  maxResults: number;
  /** The most bytes the results take as JSON: etcd refuses objects over 1.5 MiB. */
  maxResultBytes: number;
  /** The longest message or property value, in characters. */
  maxTextLength: number;
}

/** 1,000 results of about 1 KiB each stay well under etcd's 1.5 MiB with room for metadata. */
export const DEFAULT_POLICY_REPORT_LIMITS: PolicyReportLimits = {
  maxResults: 1000,
  maxResultBytes: 1024 * 1024,
  maxTextLength: 1024,
};

/** A workload of the risks view, with its uid when known (Policy Reporter links results by it). */
export type ReportedWorkload = RiskWorkloadEntry & { uid?: string };

export type ResultTimestamp = PolicyReportResult['timestamp'];

export interface ReportOptions {
  now: Date;
  /** When the results of the report as last written were first written (firstSeenOf): kept. */
  firstSeen?: ReadonlyMap<string, ResultTimestamp>;
  limits?: PolicyReportLimits;
}

/** Forewarn's severities in the PolicyReport's words: Critical is what will be rejected. */
export function resultSeverityOf(severity: Severity): PolicyResultSeverity {
  if (severity === 'Critical') return 'critical';
  return severity === 'Warning' ? 'medium' : 'info';
}

function shortened(value: string, maxLength: number): string {
  return value.length <= maxLength ? value : `${value.slice(0, maxLength - 1)}…`;
}

/**
 * The policy a finding names, as the report's reader may see it: the source object's name (with its
 * namespace when it is another namespace's, shown only at `full`), or the opaque reference of a
 * redacted constraint, so that two hidden policies stay two results.
 */
export function policyAndRuleOf(
  finding: Pick<CheckedConstraint, 'name' | 'ref' | 'sourceName' | 'sourceNamespace'>,
  reportNamespace: string,
): { policy: string; rule?: string } {
  if (finding.name === REDACTED || finding.sourceName === REDACTED)
    return { policy: finding.ref ?? REDACTED };
  const foreign = finding.sourceNamespace !== null && finding.sourceNamespace !== reportNamespace;
  const policy = foreign ? `${finding.sourceNamespace}/${finding.sourceName}` : finding.sourceName;
  const prefix = `${finding.sourceName}/`;
  const rule = finding.name.startsWith(prefix) ? finding.name.slice(prefix.length) : finding.name;
  return { policy, rule };
}

function secondsOf(now: Date): { seconds: number; nanos: number } {
  return { seconds: Math.floor(now.getTime() / 1000), nanos: 0 };
}

/** When each result of a report was first written, by what makes it the same finding. */
export function firstSeenOf(report: Pick<PolicyReportObject, 'results'>): Map<string, ResultTimestamp> {
  return new Map((report.results ?? []).map((result) => [resultIdentity(result), result.timestamp]));
}

/** What makes two results the same finding over time: its timestamp is kept while it lasts. */
function resultIdentity(result: PolicyReportResult): string {
  const resource = result.resources[0];
  return JSON.stringify([
    result.policy,
    result.rule ?? '',
    result.result,
    resource?.kind ?? '',
    resource?.namespace ?? '',
    resource?.name ?? '',
  ]);
}

function findingResult(
  workload: ReportedWorkload,
  finding: CheckedConstraint,
  reportNamespace: string,
  limits: PolicyReportLimits,
  timestamp: { seconds: number; nanos: number },
): PolicyReportResult {
  const text = (value: string) => shortened(value, limits.maxTextLength);
  const properties: Record<string, string> = {
    outcome: finding.severity === 'Critical' ? 'rejected' : 'warned',
    constraintType: finding.constraintType,
    sourceKind: finding.sourceKind,
    sourceApiVersion: finding.sourceApiVersion,
    detailLevel: finding.detailLevel,
    fix: text(finding.remediationHint),
  };
  const paths = finding.evidence.map((evidence) => evidence.path).filter((path) => path !== '');
  if (paths.length > 0) properties.evidence = text([...new Set(paths)].join(', '));
  if (finding.ref !== undefined) properties.ref = finding.ref;
  if (workload.owner) properties.owner = `${workload.owner.kind}/${workload.owner.name}`;
  return {
    source: POLICY_REPORT_SOURCE,
    ...policyAndRuleOf(finding, reportNamespace),
    category: finding.sourceKind,
    // A violation's severity is Critical exactly when its source denies (object-consequence.ts).
    result: finding.severity === 'Critical' ? 'fail' : 'warn',
    severity: resultSeverityOf(finding.severity),
    scored: true,
    message: text(finding.summary),
    resources: [
      {
        apiVersion: workload.apiVersion,
        kind: workload.kind,
        name: workload.name,
        namespace: workload.namespace,
        ...(workload.uid === undefined ? {} : { uid: workload.uid }),
      },
    ],
    properties,
    timestamp,
  };
}

function compareText(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

/** Fails before warnings, then the worst severity, then by resource and policy: what is cut is the least. */
function compareResults(left: PolicyReportResult, right: PolicyReportResult): number {
  const rank = (result: PolicyReportResult) => (result.result === 'fail' ? 0 : 1);
  const [leftResource, rightResource] = [left.resources[0], right.resources[0]];
  return (
    rank(left) - rank(right) ||
    compareText(leftResource?.kind ?? '', rightResource?.kind ?? '') ||
    compareText(leftResource?.name ?? '', rightResource?.name ?? '') ||
    compareText(left.policy, right.policy) ||
    compareText(left.rule ?? '', right.rule ?? '')
  );
}

/** Results within the limits, the worst first; the rest is counted, not listed. */
function withinLimits(
  results: readonly PolicyReportResult[],
  limits: PolicyReportLimits,
): { kept: PolicyReportResult[]; omitted: number } {
  const kept: PolicyReportResult[] = [];
  let bytes = 2;
  for (const result of results) {
    if (kept.length >= limits.maxResults) break;
    const size = Buffer.byteLength(JSON.stringify(result)) + 1;
    if (bytes + size > limits.maxResultBytes) break;
    kept.push(result);
    bytes += size;
  }
  return { kept, omitted: results.length - kept.length };
}

function summaryOf(results: readonly PolicyReportResult[]): PolicyReportSummary {
  return {
    pass: 0,
    fail: results.filter((result) => result.result === 'fail').length,
    warn: results.filter((result) => result.result === 'warn').length,
    error: 0,
    skip: 0,
  };
}

function assemble(
  kind: PolicyReportKind,
  namespace: string | undefined,
  detailLevel: string | undefined,
  results: PolicyReportResult[],
  options: ReportOptions,
): PolicyReportObject {
  const limits = options.limits ?? DEFAULT_POLICY_REPORT_LIMITS;
  const stamped = results.map((result) => {
    const timestamp = options.firstSeen?.get(resultIdentity(result));
    return timestamp
      ? { ...result, timestamp: { seconds: timestamp.seconds, nanos: timestamp.nanos } }
      : result;
  });
  const sorted = stamped.sort(compareResults);
  const { kept, omitted } = withinLimits(sorted, limits);
  const annotations: Record<string, string> = {};
  if (detailLevel !== undefined) annotations[DETAIL_LEVEL_ANNOTATION] = detailLevel;
  if (omitted > 0) annotations[OMITTED_RESULTS_ANNOTATION] = String(omitted);
  return {
    apiVersion: POLICY_REPORT_API_VERSION,
    kind,
    metadata: {
      name: POLICY_REPORT_NAME,
      ...(namespace === undefined ? {} : { namespace }),
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE },
      annotations,
    },
    results: kept,
    // Every finding is counted, the omitted ones too: `kubectl get polr` shows the true totals.
    summary: summaryOf(sorted),
  };
}

/**
 * The namespace's PolicyReport: one result per finding of each workload at risk, or undefined when
 * none is at risk (its report is then removed).
 */
export function buildNamespacePolicyReport(
  view: Pick<RisksReport, 'namespace' | 'detailLevel'> & { workloads: readonly ReportedWorkload[] },
  options: ReportOptions,
): PolicyReportObject | undefined {
  const limits = options.limits ?? DEFAULT_POLICY_REPORT_LIMITS;
  const timestamp = secondsOf(options.now);
  const results = view.workloads.flatMap((workload) =>
    workload.findings.map((finding) => findingResult(workload, finding, view.namespace, limits, timestamp)),
  );
  if (results.length === 0) return undefined;
  return assemble('PolicyReport', view.namespace, view.detailLevel, results, options);
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

/**
 * The ClusterPolicyReport: one result per namespace with workloads at risk, about the Namespace, with
 * counts only (never a policy name, whatever the level), or undefined when no namespace has any.
 */
export function buildClusterPolicyReport(
  counts: readonly RiskCounts[],
  options: ReportOptions,
): PolicyReportObject | undefined {
  const timestamp = secondsOf(options.now);
  const results = counts
    .filter((entry) => entry.rejected + entry.warned > 0)
    .map(({ namespace, rejected, warned }): PolicyReportResult => ({
      source: POLICY_REPORT_SOURCE,
      policy: 'workloads-at-risk',
      category: 'Namespace',
      result: rejected > 0 ? 'fail' : 'warn',
      severity: rejected > 0 ? 'critical' : 'medium',
      scored: true,
      message: `${plural(rejected, 'workload')} would be rejected and ${warned} only warned about on their next apply; the PolicyReport ${POLICY_REPORT_NAME} in ${namespace} lists them`,
      resources: [{ apiVersion: 'v1', kind: 'Namespace', name: namespace }],
      properties: { rejected: String(rejected), warned: String(warned) },
      timestamp,
    }));
  if (results.length === 0) return undefined;
  return assemble('ClusterPolicyReport', undefined, undefined, results, options);
}

/** JSON with sorted keys: the server may return fields in another order than they were sent. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

/**
 * Whether the stored report already says what the desired one says (results, summary, Forewarn's
 * label and annotations): then nothing is written. Fields others add (their own labels, annotations)
 * are not compared, and are kept by an update.
 */
export function sameReportContent(stored: PolicyReportObject, desired: PolicyReportObject): boolean {
  return reportDigest(stored) === reportDigest(desired);
}

/**
 * A digest of what a report says (sameReportContent): what the publisher keeps of a report it wrote
 * instead of the report itself, a few bytes instead of up to a megabyte per namespace.
 */
export function reportDigest(report: PolicyReportObject): string {
  const ours = {
    managed: report.metadata.labels?.[MANAGED_BY_LABEL],
    detailLevel: report.metadata.annotations?.[DETAIL_LEVEL_ANNOTATION],
    omitted: report.metadata.annotations?.[OMITTED_RESULTS_ANNOTATION],
    results: report.results ?? [],
    summary: report.summary,
  };
  return createHash('sha256').update(canonicalJson(ours)).digest('base64');
}

/** Whether a report carries Forewarn's label: only those are ever updated or deleted. */
export function isManaged(report: PolicyReportObject): boolean {
  return report.metadata.labels?.[MANAGED_BY_LABEL] === MANAGED_BY_VALUE;
}

/** The desired report keeping the labels and annotations others put on the stored one. */
export function withOthersMetadata(
  desired: PolicyReportObject,
  storedMetadata: PolicyReportObject['metadata'],
): PolicyReportObject {
  const othersAnnotations = Object.fromEntries(
    Object.entries(storedMetadata.annotations ?? {}).filter(
      ([key]) => key !== OMITTED_RESULTS_ANNOTATION && key !== DETAIL_LEVEL_ANNOTATION,
    ),
  );
  return {
    ...desired,
    metadata: {
      ...desired.metadata,
      labels: { ...storedMetadata.labels, ...desired.metadata.labels },
      annotations: { ...othersAnnotations, ...desired.metadata.annotations },
    },
  };
}
