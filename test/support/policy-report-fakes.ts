import type { CheckedConstraint } from '../../services/model/api';
import type { PolicyReportObject, ReportedWorkload } from '../../services/controller/risks/policy-report';
import type { PolicyReportSource } from '../../services/controller/risks/policy-report-publisher';
import {
  addressKey,
  addressOf,
  PolicyReportStoreError,
  type PolicyReportAddress,
  type PolicyReportStore,
  type StoredPolicyReport,
} from '../../services/controller/risks/policy-report-store';
import type { RiskCounts } from '../../services/controller/risks/risk-tracker';

// Stand-ins for the policy-report publisher's tests: a store that keeps resourceVersions as the API
// server does (409 on a stale one) and fails on demand, a risks source changed by hand, findings.

type Failure = { status: number | undefined; times: number };

export class MemoryStore implements PolicyReportStore {
  readonly objects = new Map<string, StoredPolicyReport>();
  crdInstalled = true;
  calls: string[] = [];
  /** The next calls of an operation fail with this status. */
  failing = new Map<string, Failure>();
  private version = 0;

  private check(operation: string): void {
    this.calls.push(operation);
    if (!this.crdInstalled)
      throw new PolicyReportStoreError('the server could not find the requested resource', 404);
    const failure = this.failing.get(operation);
    if (failure && failure.times > 0) {
      failure.times--;
      throw new PolicyReportStoreError(`${operation} failed`, failure.status);
    }
  }

  put(report: PolicyReportObject): StoredPolicyReport {
    const stored = { report: structuredClone(report), resourceVersion: String(++this.version) };
    this.objects.set(addressKey(addressOf(report)), stored);
    return stored;
  }

  /** Runs after a list has answered (another writer acting between the list and the next write). */
  afterList?: () => void;

  listManaged(): Promise<StoredPolicyReport[]> {
    this.check('list');
    const listed = [...this.objects.values()].filter(
      (stored) => stored.report.metadata.labels?.['app.kubernetes.io/managed-by'] === 'forewarn',
    );
    this.afterList?.();
    return Promise.resolve(listed);
  }

  get(address: PolicyReportAddress): Promise<StoredPolicyReport | undefined> {
    this.check('get');
    return Promise.resolve(this.objects.get(addressKey(address)));
  }

  create(report: PolicyReportObject): Promise<StoredPolicyReport> {
    this.check('create');
    if (this.objects.has(addressKey(addressOf(report))))
      return Promise.reject(new PolicyReportStoreError('already exists', 409));
    return Promise.resolve(this.put(report));
  }

  update(report: PolicyReportObject, resourceVersion: string): Promise<StoredPolicyReport> {
    this.check('update');
    const current = this.objects.get(addressKey(addressOf(report)));
    if (!current) return Promise.reject(new PolicyReportStoreError('not found', 404));
    if (current.resourceVersion !== resourceVersion)
      return Promise.reject(new PolicyReportStoreError('the object has been modified', 409));
    return Promise.resolve(this.put(report));
  }

  remove(address: PolicyReportAddress, resourceVersion: string): Promise<void> {
    this.check('delete');
    const current = this.objects.get(addressKey(address));
    if (!current) return Promise.reject(new PolicyReportStoreError('not found', 404));
    if (current.resourceVersion !== resourceVersion)
      return Promise.reject(new PolicyReportStoreError('precondition failed', 409));
    this.objects.delete(addressKey(address));
    return Promise.resolve();
  }

  namespacedReport(namespace: string): PolicyReportObject | undefined {
    return this.objects.get(`PolicyReport/${namespace}/forewarn`)?.report;
  }

  clusterReport(): PolicyReportObject | undefined {
    return this.objects.get('ClusterPolicyReport//forewarn')?.report;
  }
}

export function finding(name: string, severity: 'Critical' | 'Warning'): CheckedConstraint {
  return {
    name,
    namespace: 'shop',
    constraintType: 'Admission',
    severity,
    effect: 'deny',
    summary: `will be rejected by ${name}`,
    remediationHint: `fix it for ${name}`,
    sourceKind: 'ValidatingAdmissionPolicy',
    sourceApiVersion: 'admissionregistration.k8s.io/v1',
    sourceName: name,
    sourceNamespace: null,
    tags: [],
    detailLevel: 'full',
    verdict: 'violates',
    evidence: [{ path: 'metadata.labels', message: 'set a label' }],
  };
}

export function workload(namespace: string, name: string, findings: CheckedConstraint[]): ReportedWorkload {
  const rejected = findings.some((entry) => entry.severity === 'Critical');
  return {
    kind: 'Deployment',
    apiVersion: 'apps/v1',
    namespace,
    name,
    outcome: rejected ? 'rejected' : 'warned',
    findings,
  };
}

/** A risks source the test changes by hand, telling the publisher as the tracker would. */
export class FakeRisks implements PolicyReportSource {
  isEvaluated = true;
  readonly byNamespace = new Map<string, ReportedWorkload[]>();
  private listener?: (namespace: string) => void;

  set(namespace: string, workloads: ReportedWorkload[]): void {
    if (workloads.length === 0) this.byNamespace.delete(namespace);
    else this.byNamespace.set(namespace, workloads);
    this.listener?.(namespace);
  }

  evaluated(): boolean {
    return this.isEvaluated;
  }

  countsByNamespace(): RiskCounts[] {
    return [...this.byNamespace].map(([namespace, workloads]) => ({
      namespace,
      rejected: workloads.filter((entry) => entry.outcome === 'rejected').length,
      warned: workloads.filter((entry) => entry.outcome === 'warned').length,
    }));
  }

  namespaceView(namespace: string) {
    return { namespace, detailLevel: 'full' as const, workloads: this.byNamespace.get(namespace) ?? [] };
  }

  onRiskChange(listener: (namespace: string) => void): void {
    this.listener = listener;
  }
}
