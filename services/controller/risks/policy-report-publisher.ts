import { errorMessage } from '../../model/error-message';
import {
  buildClusterPolicyReport,
  buildNamespacePolicyReport,
  firstSeenOf,
  isManaged,
  POLICY_REPORT_NAME,
  reportDigest,
  withOthersMetadata,
  type PolicyReportKind,
  type PolicyReportObject,
  type ReportedWorkload,
  type ResultTimestamp,
} from './policy-report';
import {
  addressKey,
  addressOf,
  DEFAULT_POLICY_REPORT_SETTINGS,
  isSystemic,
  knownReport,
  PolicyReportStoreError,
  remedyOf,
  type KnownReport,
  type PolicyReportAddress,
  type PolicyReportLog,
  type PolicyReportOperation,
  type PolicyReportSettings,
  type PolicyReportStore,
  type PolicyReportWriteCount,
  type StoredPolicyReport,
} from './policy-report-store';
import type { RiskCounts } from './risk-tracker';
import type { RisksReport } from './risk-view';

// Keeps Forewarn's PolicyReports in step with the workloads at risk (`--policy-reports`, issue 35).
// Changes are batched (a namespace changed → its report is rebuilt at most once per batch window),
// a report is written only when its content differs from what the server holds, updates and deletes
// carry the resourceVersion read, and only reports labelled as Forewarn's are ever touched. A failed
// write is logged with what to do and retried with backoff; nothing here throws into the controller.
// Without the CRDs, that is said once, and checked again now and then.

export interface PolicyReportSource {
  /** Whether the first evaluation of every workload has completed (before, reports would be partial). */
  evaluated(): boolean;
  /** Namespaces with a workload at risk, with their counts. */
  countsByNamespace(): readonly RiskCounts[];
  /** The namespace's risks view at the reports' detail level, workloads with their uids. */
  namespaceView(
    namespace: string,
  ): Pick<RisksReport, 'namespace' | 'detailLevel'> & { workloads: ReportedWorkload[] };
  /** Called with a namespace whose workloads at risk may have changed. */
  onRiskChange(listener: (namespace: string) => void): void;
}

/** The longest a batch builds reports before it yields to pending requests (as the risks' slices do). */
const BUILD_SLICE_MS = 2;

const REPORT_KIND_BY_NAMESPACE = (namespace: string | undefined): PolicyReportKind =>
  namespace === undefined ? 'ClusterPolicyReport' : 'PolicyReport';

export class PolicyReportPublisher {
  /** What the server holds of Forewarn's reports, by address key; filled by the first list. */
  private readonly stored = new Map<string, KnownReport>();
  /** Namespaces whose report must be rebuilt; `undefined` stands for the cluster report. */
  private readonly dirty = new Set<string | undefined>();
  /** Reports of Forewarn's name that someone else owns, with when that was seen: never written, said once. */
  private readonly foreign = new Map<string, number>();
  private readonly writes = new Map<string, PolicyReportWriteCount>();
  private listed = false;
  private crdMissingSaid = false;
  private failures = 0;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly source: PolicyReportSource,
    private readonly store: PolicyReportStore,
    private readonly logger: PolicyReportLog,
    private readonly settings: PolicyReportSettings = DEFAULT_POLICY_REPORT_SETTINGS,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  start(): void {
    this.source.onRiskChange((namespace) => {
      this.dirty.add(namespace);
      this.dirty.add(undefined);
      this.schedule(this.settings.batchWindowMs);
    });
    this.schedule(0);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.resolveIdle();
  }

  /** Resolves once nothing is waiting to be written and no write is running (tests). */
  idle(): Promise<void> {
    if (this.timer === undefined && this.running === undefined) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  writeCounts(): PolicyReportWriteCount[] {
    return [...this.writes.values()];
  }

  /** Runs a batch `delayMs` from now, unless one is already due (or running). */
  private schedule(delayMs: number): void {
    if (this.stopped || this.timer !== undefined || this.running !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.runBatch().then(
        (retryInMs) => this.afterBatch(retryInMs),
        (failure: unknown) => {
          // runBatch catches what the store throws; anything else is a bug, logged, and retried.
          this.logger.error({ err: failure }, 'policy report batch failed; retrying');
          this.afterBatch(this.settings.maxRetryMs);
        },
      );
    }, delayMs);
    this.timer.unref();
  }

  private afterBatch(retryInMs: number | undefined): void {
    this.running = undefined;
    if (retryInMs !== undefined) this.schedule(retryInMs);
    else if (this.dirty.size > 0) this.schedule(this.settings.batchWindowMs);
    if (this.timer === undefined) this.resolveIdle();
  }

  private retryDelay(): number {
    this.failures++;
    return Math.min(
      this.settings.maxRetryMs,
      this.settings.initialRetryMs * 2 ** Math.min(this.failures - 1, 20),
    );
  }

  /** One batch of writes; resolves to the delay before the next try when it could not finish. */
  private async runBatch(): Promise<number | undefined> {
    if (this.stopped) return undefined;
    if (!this.source.evaluated()) return this.settings.batchWindowMs;
    if (!this.listed) {
      const retryInMs = await this.listStored();
      if (retryInMs !== undefined) return retryInMs;
    }
    const batch = [...this.dirty];
    this.dirty.clear();
    let retryInMs: number | undefined;
    let sliceStart = performance.now();
    for (let position = 0; position < batch.length; position++) {
      // Reports that need no write are built without awaiting anything: a batch of every namespace
      // would hold the event loop for its whole length, so it makes way for requests between slices.
      if (performance.now() - sliceStart > BUILD_SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        sliceStart = performance.now();
      }
      if (this.stopped) return undefined;
      const namespace = batch[position];
      try {
        await this.reconcile(namespace);
      } catch (failure) {
        if (failure instanceof SkippedReport) continue;
        const error =
          failure instanceof PolicyReportStoreError
            ? failure
            : new PolicyReportStoreError(errorMessage(failure), undefined);
        this.dirty.add(namespace);
        retryInMs ??= this.retryDelay();
        this.logFailure(namespace, error, retryInMs);
        // The reports are listed again: the CRDs may be gone, or the report deleted by someone.
        if (error.status === 404) this.listed = false;
        if (isSystemic(error) || error.status === 404) {
          for (const rest of batch.slice(position + 1)) this.dirty.add(rest);
          return retryInMs;
        }
      }
    }
    if (retryInMs === undefined) this.failures = 0;
    return retryInMs;
  }

  private logFailure(namespace: string | undefined, error: PolicyReportStoreError, retryInMs: number): void {
    const kind = REPORT_KIND_BY_NAMESPACE(namespace);
    this.logger.warn(
      {
        kind,
        namespace: namespace ?? null,
        name: POLICY_REPORT_NAME,
        status: error.status ?? null,
        error: error.message,
        retryInMs,
        remedy: remedyOf(error, kind),
      },
      `${kind} could not be written; retrying with backoff`,
    );
  }

  /** Reads what the server holds of Forewarn's reports; resolves to a retry delay when it could not. */
  private async listStored(): Promise<number | undefined> {
    let reports: StoredPolicyReport[];
    try {
      reports = await this.store.listManaged();
    } catch (failure) {
      const error =
        failure instanceof PolicyReportStoreError
          ? failure
          : new PolicyReportStoreError(errorMessage(failure), undefined);
      if (error.status === 404) {
        if (!this.crdMissingSaid)
          this.logger.warn(
            { retryInMs: this.settings.missingCrdRetryMs },
            'the PolicyReport CRDs (wgpolicyk8s.io/v1alpha2 policyreports, clusterpolicyreports) are not installed: --policy-reports writes nothing until they are (install them with Kyverno or Policy Reporter); looking again periodically',
          );
        this.crdMissingSaid = true;
        return this.settings.missingCrdRetryMs;
      }
      const retryInMs = this.retryDelay();
      this.logger.warn(
        {
          status: error.status ?? null,
          error: error.message,
          retryInMs,
          remedy: remedyOf(error, 'PolicyReport'),
        },
        "Forewarn's PolicyReports could not be listed; retrying with backoff",
      );
      return retryInMs;
    }
    if (this.crdMissingSaid)
      this.logger.info('the PolicyReport CRDs are installed now: writing the policy reports');
    this.crdMissingSaid = false;
    this.stored.clear();
    for (const stored of reports) this.stored.set(addressKey(addressOf(stored.report)), knownReport(stored));
    this.listed = true;
    // Every namespace held or at risk, and the cluster report, are brought in step.
    for (const stored of reports) this.dirty.add(stored.report.metadata.namespace);
    for (const { namespace } of this.source.countsByNamespace()) this.dirty.add(namespace);
    this.dirty.add(undefined);
    return undefined;
  }

  private desiredReport(
    namespace: string | undefined,
    firstSeen: ReadonlyMap<string, ResultTimestamp> | undefined,
  ): PolicyReportObject | undefined {
    const options = {
      now: this.clock(),
      ...(firstSeen ? { firstSeen } : {}),
      ...(this.settings.limits ? { limits: this.settings.limits } : {}),
    };
    if (namespace === undefined) return buildClusterPolicyReport(this.source.countsByNamespace(), options);
    return buildNamespacePolicyReport(this.source.namespaceView(namespace), options);
  }

  /** Brings one report in step: created, updated, deleted, or left alone when it already says the same. */
  private async reconcile(namespace: string | undefined): Promise<void> {
    const address: PolicyReportAddress = {
      kind: REPORT_KIND_BY_NAMESPACE(namespace),
      ...(namespace === undefined ? {} : { namespace }),
      name: POLICY_REPORT_NAME,
    };
    const key = addressKey(address);
    const stored = this.stored.get(key);
    const desired = this.desiredReport(namespace, stored?.firstSeen);
    if (!desired) {
      if (!stored) return;
      await this.counted(address.kind, 'delete', () => this.removeStored(address, stored));
      return;
    }
    if (stored && stored.digest === reportDigest(desired)) return;
    // Someone else's report of this name is looked at again only now and then, not on every change.
    const foreignSince = this.foreign.get(key);
    if (
      !stored &&
      foreignSince !== undefined &&
      this.clock().getTime() - foreignSince < this.settings.missingCrdRetryMs
    )
      return;
    if (stored) {
      const written = await this.counted(address.kind, 'update', () =>
        this.store.update(withOthersMetadata(desired, stored.metadata), stored.resourceVersion),
      ).catch((failure: unknown) => this.afterConflict(failure, address, namespace));
      this.stored.set(key, knownReport(written));
      return;
    }
    const created = await this.counted(address.kind, 'create', () => this.store.create(desired)).catch(
      (failure: unknown) => this.afterConflict(failure, address, namespace),
    );
    this.stored.set(key, knownReport(created));
    this.foreign.delete(key);
  }

  private async removeStored(address: PolicyReportAddress, stored: KnownReport): Promise<void> {
    const key = addressKey(address);
    try {
      await this.store.remove(address, stored.resourceVersion);
    } catch (failure) {
      // Already gone: what was wanted. Changed since read: read again, and only ours is deleted.
      if (failure instanceof PolicyReportStoreError && failure.status === 404) {
        this.stored.delete(key);
        return;
      }
      if (!(failure instanceof PolicyReportStoreError) || failure.status !== 409) throw failure;
      const current = await this.store.get(address);
      if (current && isManaged(current.report)) await this.store.remove(address, current.resourceVersion);
    }
    this.stored.delete(key);
  }

  /**
   * A create that met an existing object, or an update that met a newer one (409): read it; when it
   * is Forewarn's, write over what was read; when it is someone else's, leave it and say so once.
   */
  private async afterConflict(
    failure: unknown,
    address: PolicyReportAddress,
    namespace: string | undefined,
  ): Promise<StoredPolicyReport> {
    const status = failure instanceof PolicyReportStoreError ? failure.status : undefined;
    if (status !== 409) throw failure;
    const key = addressKey(address);
    const current = await this.store.get(address);
    if (!current) {
      const desired = this.desiredReport(namespace, undefined);
      this.stored.delete(key);
      if (!desired) throw new SkippedReport(); // gone, and no longer wanted
      return this.counted(address.kind, 'create', () => this.store.create(desired));
    }
    if (!isManaged(current.report)) {
      this.stored.delete(key);
      if (!this.foreign.has(key))
        this.logger.warn(
          { kind: address.kind, namespace: address.namespace ?? null, name: address.name },
          `a ${address.kind} named ${address.name} exists and is not Forewarn's (no app.kubernetes.io/managed-by=forewarn label); it is left alone and Forewarn's findings there are not reported`,
        );
      this.foreign.set(key, this.clock().getTime());
      // Nothing is written; the foreign object is not kept as Forewarn's.
      throw new SkippedReport();
    }
    // Rebuilt on what the server holds (another replica's write): its first timestamps are kept, so
    // the same findings compare equal and are not written again.
    const desired = this.desiredReport(namespace, firstSeenOf(current.report));
    if (!desired) {
      // No longer wanted while the write was on its way: the next batch deletes what is there.
      this.stored.set(key, knownReport(current));
      this.dirty.add(namespace);
      throw new SkippedReport();
    }
    if (reportDigest(current.report) === reportDigest(desired)) return current;
    return this.counted(address.kind, 'update', () =>
      this.store.update(withOthersMetadata(desired, current.report.metadata), current.resourceVersion),
    );
  }

  private async counted<T>(
    kind: PolicyReportKind,
    operation: PolicyReportOperation,
    write: () => Promise<T>,
  ): Promise<T> {
    try {
      const result = await write();
      this.count(kind, operation, 'ok');
      return result;
    } catch (failure) {
      if (!(failure instanceof PolicyReportStoreError && failure.status === 409))
        this.count(kind, operation, 'failed');
      throw failure;
    }
  }

  private count(kind: PolicyReportKind, operation: PolicyReportOperation, outcome: 'ok' | 'failed'): void {
    const key = `${kind}/${operation}/${outcome}`;
    const entry = this.writes.get(key) ?? { kind, operation, outcome, count: 0 };
    entry.count++;
    this.writes.set(key, entry);
  }

  private resolveIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

/** A report left as it is, not retried: someone else's object has its name, or nothing is left to write. */
class SkippedReport extends Error {}
