import {
  firstSeenOf,
  reportDigest,
  type PolicyReportKind,
  type PolicyReportLimits,
  type PolicyReportObject,
  type ResultTimestamp,
} from './policy-report';

// The policy-report publisher's ports, settings and bookkeeping. What it asks of the API server is
// injected (the Kubernetes client in ../policy-report-kubernetes-store.ts, an in-memory store in
// tests), only five calls: list Forewarn's own reports, read one, create, update with the
// resourceVersion read, delete with it; and it logs through an injected structured logger.

export type PolicyReportOperation = 'create' | 'update' | 'delete';

/** Writes by kind, operation and outcome since start (the metrics' counter). */
export interface PolicyReportWriteCount {
  kind: PolicyReportKind;
  operation: PolicyReportOperation;
  outcome: 'ok' | 'failed';
  count: number;
}

/** What the publisher logs through: the controller's structured logger (injected; risks/ does no I/O). */
export interface PolicyReportLog {
  info(message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

export interface PolicyReportSettings {
  /** A change is written at most this long after it (changes within the window go together). */
  batchWindowMs: number;
  /** First retry after a failed write; doubled per failure up to `maxRetryMs`. */
  initialRetryMs: number;
  maxRetryMs: number;
  /** How often the CRDs are looked for again while they are not installed. */
  missingCrdRetryMs: number;
  limits?: PolicyReportLimits;
}

export const DEFAULT_POLICY_REPORT_SETTINGS: PolicyReportSettings = {
  batchWindowMs: 2_000,
  initialRetryMs: 1_000,
  maxRetryMs: 300_000,
  missingCrdRetryMs: 300_000,
};

/** A report as the server holds it. */
export interface StoredPolicyReport {
  report: PolicyReportObject;
  resourceVersion: string;
}

export interface PolicyReportAddress {
  kind: PolicyReportKind;
  /** Absent for a ClusterPolicyReport. */
  namespace?: string;
  name: string;
}

/** A failed call, with the HTTP status when the server answered (undefined: it could not be reached). */
export class PolicyReportStoreError extends Error {
  constructor(
    message: string,
    readonly status: number | undefined,
  ) {
    super(message);
    this.name = 'PolicyReportStoreError';
  }
}

export interface PolicyReportStore {
  /**
   * Every report of both kinds labelled as Forewarn's, in every namespace. A 404 means the
   * PolicyReport CRDs are not installed.
   */
  listManaged(): Promise<StoredPolicyReport[]>;
  /** One report whoever manages it, or undefined when there is none. */
  get(address: PolicyReportAddress): Promise<StoredPolicyReport | undefined>;
  create(report: PolicyReportObject): Promise<StoredPolicyReport>;
  /** Replaces the report read at `resourceVersion` (409 when it changed since). */
  update(report: PolicyReportObject, resourceVersion: string): Promise<StoredPolicyReport>;
  /** Deletes the report read at `resourceVersion` (409 when it changed since, 404 when gone). */
  remove(address: PolicyReportAddress, resourceVersion: string): Promise<void>;
}

export function addressOf(report: PolicyReportObject): PolicyReportAddress {
  return {
    kind: report.kind,
    ...(report.metadata.namespace === undefined ? {} : { namespace: report.metadata.namespace }),
    name: report.metadata.name,
  };
}

export function addressKey(address: PolicyReportAddress): string {
  return `${address.kind}/${address.namespace ?? ''}/${address.name}`;
}

/** Failures that will fail every other write as well: the batch stops and is retried whole. */
export function isSystemic(error: PolicyReportStoreError): boolean {
  const status = error.status;
  return status === undefined || status === 401 || status === 403 || status === 429 || status >= 500;
}

export function remedyOf(error: PolicyReportStoreError, kind: PolicyReportKind): string {
  const resource = kind === 'PolicyReport' ? 'policyreports' : 'clusterpolicyreports';
  switch (error.status) {
    case undefined:
      return 'check that the API server is reachable from the controller pod (network policy, --kubeconfig)';
    case 401:
      return "check the controller's ServiceAccount token or --kubeconfig credentials";
    case 403:
      return `grant the controller's ServiceAccount get, list, create, update and delete on wgpolicyk8s.io ${resource} (the component does with policyReports: true)`;
    case 404:
      return 'the PolicyReport CRDs (wgpolicyk8s.io/v1alpha2) or the namespace are gone; the reports are listed again';
    case 422:
      return "the server refused the report's content; report it as a Forewarn bug with this line";
    default:
      return "check the API server's answer; the write is retried";
  }
}

/** What is kept of a report the server holds: enough to compare and update it, not its results. */
export interface KnownReport {
  resourceVersion: string;
  digest: string;
  firstSeen: ReadonlyMap<string, ResultTimestamp>;
  metadata: PolicyReportObject['metadata'];
}

export function knownReport(stored: StoredPolicyReport): KnownReport {
  return {
    resourceVersion: stored.resourceVersion,
    digest: reportDigest(stored.report),
    firstSeen: firstSeenOf(stored.report),
    metadata: stored.report.metadata,
  };
}
