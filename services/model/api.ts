// The wire shapes of the spec (constraint-service-spec.md, part 2), shared by controller, webhook,
// MCP server and command line. Field names follow the spec exactly: the report is camelCase, the
// single-constraint view is snake_case.

export const SCHEMA_VERSION = '1';
export const API_VERSION = '1';

export const SEVERITIES = ['Critical', 'Warning', 'Info'] as const;
export type Severity = (typeof SEVERITIES)[number];

export const CONSTRAINT_TYPES = [
  'NetworkIngress',
  'NetworkEgress',
  'Admission',
  'ResourceLimit',
  'MeshPolicy',
  'MissingResource',
] as const;
export type ConstraintType = (typeof CONSTRAINT_TYPES)[number];

export const DETAIL_LEVELS = ['summary', 'detailed', 'full'] as const;
export type DetailLevel = (typeof DETAIL_LEVELS)[number];

/** Effects: `deny` and `limit` are in the spec; the rest are decided in DESIGN.md section 3. */
export const EFFECTS = [
  'deny',
  'restrict',
  'limit',
  'mutate',
  'warn',
  'audit',
  'require',
  'missing',
  'delete',
] as const;
export type Effect = (typeof EFFECTS)[number];

export const ADAPTER_NAMES = [
  'networkpolicy',
  'resourcequota',
  'limitrange',
  'webhookconfig',
  'admissionpolicy',
  'cni',
  'policyengine',
  'mesh',
  'missingresource',
  'adminnetworkpolicy',
  'podsecurity',
] as const;
export type AdapterName = (typeof ADAPTER_NAMES)[number];

export type RemediationStepType = 'manual' | 'cli';
export type Privilege = 'developer' | 'namespace-admin' | 'cluster-admin';

export interface RemediationStep {
  type: RemediationStepType;
  description: string;
  contact?: string;
  command?: string;
  requires_privilege?: Privilege;
  automated?: boolean;
}

export interface Remediation {
  summary: string;
  steps: RemediationStep[];
}

export type MetricUnit = 'cores' | 'bytes' | 'count';

export interface MetricValue {
  hard: string;
  used: string;
  unit: MetricUnit;
  percent_used: number;
}

export type Metrics = Record<string, MetricValue>;

export interface ReportEntry {
  name: string;
  /** The opaque reference of a constraint whose name is redacted (`fw-` and 16 hex digits); absent otherwise. */
  ref?: string;
  /** Addition to the spec: what the constraint does, one line, at the detail level applied. */
  summary: string;
  type: ConstraintType;
  severity: Severity;
  effect: Effect;
  source: string;
  tags: string[];
  remediation?: Remediation;
  /**
   * The level this entry was rendered at: the report's level, or `full` where the caller's own RBAC
   * lets it read the source object (issue 24).
   */
  detailLevel: DetailLevel;
}

export interface Report {
  namespace: string;
  constraintCount: number;
  criticalCount: number;
  warningCount: number;
  infoCount: number;
  schemaVersion: string;
  detailLevel: DetailLevel;
  generatedAt: string;
  constraints: ReportEntry[];
}

export interface ConstraintView {
  name: string;
  /** Addition to the spec: what the constraint does, one line, at the detail level applied. */
  summary: string;
  namespace: string;
  constraint_type: ConstraintType;
  severity: Severity;
  source_kind: string;
  source_api_version: string;
  effect: Effect;
  affected_workloads: string[];
  tags: string[];
  detail_level: DetailLevel;
  last_observed: string;
  remediation: Remediation;
  metrics: Metrics | null;
}

export type HealthStatus = 'healthy' | 'degraded' | 'unhealthy';

export interface AdapterHealth {
  enabled: boolean;
  watched_resources: number;
  error_count: number;
  reason?: string;
}

/** Something wrong right now: a file that does not parse, an object an adapter cannot read. */
export interface HealthProblem {
  /** What is affected: a file path, or `<adapter>: <Kind> <namespace>/<name>`. */
  source: string;
  message: string;
  since: string;
}

export interface Health {
  status: HealthStatus;
  adapters: Record<string, AdapterHealth>;
  flowobserver: { enabled: boolean; connected: boolean; address: string };
  mcp: { enabled: boolean; transport: string; port: number };
  indexer: { total_constraints: number; namespaces_with_constraints: number };
  last_scan: string;
  /** Addition to the spec: why the status is not healthy, so operators need not grep logs. */
  problems: HealthProblem[];
}

export interface Capabilities {
  version: string;
  adapters: string[];
  constraintTypes: Record<ConstraintType, number>;
  totalConstraints: number;
  namespaceCount: number;
  flowobserverEnabled: boolean;
  mcpEnabled: boolean;
  lastScan: string;
}

/** An entry of `GET /api/v1/constraints` (spec 2.9, DESIGN.md 5): unredacted, for the webhook. */
export interface ListedConstraint {
  name: string;
  /** The opaque reference of a constraint whose name is redacted (`fw-` and 16 hex digits); absent otherwise. */
  ref?: string;
  namespace: string;
  constraintType: ConstraintType;
  severity: Severity;
  effect: Effect;
  summary: string;
  remediationHint: string;
  sourceKind: string;
  sourceApiVersion: string;
  sourceName: string;
  sourceNamespace: string | null;
  tags: string[];
  /**
   * The level this entry was rendered at: the answer's level (`full` for the webhook), or `full`
   * where the caller's own RBAC lets it `get` the source (issue 24).
   */
  detailLevel: DetailLevel;
}

/** `GET /resources/references/{ref}` (callers at `full` only): the constraint an opaque reference stands for. */
export interface ReferencedConstraint {
  ref: string;
  name: string;
  constraintType: ConstraintType;
  severity: Severity;
  effect: Effect;
  summary: string;
  remediationHint: string;
  sourceKind: string;
  sourceApiVersion: string;
  sourceName: string;
  sourceNamespace: string | null;
}

export interface ConstraintList {
  constraints: ListedConstraint[];
}

export interface ApiHealth {
  status: HealthStatus;
  synced: boolean;
}

export interface ErrorBody {
  error: string;
}

export function isSeverity(value: unknown): value is Severity {
  return typeof value === 'string' && (SEVERITIES as readonly string[]).includes(value);
}

export function isDetailLevel(value: unknown): value is DetailLevel {
  return typeof value === 'string' && (DETAIL_LEVELS as readonly string[]).includes(value);
}

export function isConstraintType(value: unknown): value is ConstraintType {
  return typeof value === 'string' && (CONSTRAINT_TYPES as readonly string[]).includes(value);
}

/** Rank for sorting: Critical first. */
export function severityRank(severity: Severity): number {
  return SEVERITIES.indexOf(severity);
}

/** Detail levels are ordered: a request may lower the configured level, never raise it. */
export function detailLevelRank(level: DetailLevel): number {
  return DETAIL_LEVELS.indexOf(level);
}

/** DESIGN.md 7b: what the admitted object itself will meet. */
export const VERDICTS = ['violates', 'passes', 'applies', 'unknown'] as const;
export type VerdictName = (typeof VERDICTS)[number];

export interface EvidenceEntry {
  /** Field path in the object: `spec.template.spec.containers[1].resources.limits.memory`. */
  path: string;
  message: string;
}

/** An entry of `POST /api/v1/admission-check`: the list entry plus the verdict on the object. */
export interface CheckedConstraint extends ListedConstraint {
  verdict: VerdictName;
  evidence: EvidenceEntry[];
  /** Why the verdict is `unknown`, or a note such as the defaults a LimitRange will set. */
  reason?: string;
}

export interface AdmissionCheck {
  constraints: CheckedConstraint[];
}

/**
 * `"view": "warnings"` in an admission-check request (the webhook's): only the constraints that
 * become admission warnings (Warning or Critical, verdict other than `passes`), with only what a
 * warning is made of. The webhook read 5 of 14 fields of every entry; the rest was serialised,
 * sent and parsed on every review (issue 26).
 */
export const ADMISSION_CHECK_VIEWS = ['warnings'] as const;
export type AdmissionCheckView = (typeof ADMISSION_CHECK_VIEWS)[number];

/** `detailLevel` only when rendered for a caller's own RBAC: the webhook's entries stay as small as before. */
export type AdmissionWarningEntry = Pick<
  CheckedConstraint,
  'name' | 'severity' | 'summary' | 'remediationHint' | 'verdict'
> &
  Partial<Pick<CheckedConstraint, 'detailLevel'>>;

export interface AdmissionCheckWarnings {
  constraints: AdmissionWarningEntry[];
}
