import { groupOf, objectKey, referenceKey, type KubernetesObject } from '../../model/kubernetes';
import type { ConstraintIndex } from '../index/constraint-index';
import {
  evaluateWorkload,
  isEvaluatedWorkload,
  keepWorkload,
  outcomeOf,
  sourceKeyOfConstraint,
  workloadKeyOf,
  type KeptWorkload,
  type WorkloadIdentity,
  type WorkloadRisk,
} from './workload-risk';

import { KeptWorkloads } from './kept-workloads';
import { PolicyReachScans } from './policy-reach';
import type { RisksSource } from './risk-view';
import { StoppedEvaluationRetries } from './stopped-retries';
import { EvaluationsAwaitingPreparation, type BackgroundPreparation } from './awaiting-preparation';

// Keeps the workloads at risk current in the controller (issue 35) as background work: a workload
// change re-evaluates that workload, a policy change the workloads its constraints can apply to
// (and those its old constraints failed). Changes are debounced, then evaluated in slices bounded
// by time and count, each slice yielding with setImmediate so that the webhook's and the API's
// requests are answered between slices: their latency grows by at most one slice. Which workloads a
// cluster-wide policy reaches is worked out in the same slices (policy-reach.ts): observing a change
// costs the same whatever the number of namespaces.

export interface RiskTrackerSettings {
  /** Wait after a change before evaluating (changes come in bursts: a sync, a rollout). */
  debounceMs: number;
  /** The most CPU one slice takes before it yields to pending requests. */
  sliceBudgetMs: number;
  /** The most workloads one slice evaluates, whatever the budget. */
  maxWorkloadsPerSlice: number;
  /**
   * Kinds whose change re-derives other objects' constraints (a ValidatingAdmissionPolicy its
   * bindings use, a ConstraintTemplate its constraints use): the adapters' retained kinds.
   */
  rederivesOthers?: (group: string, kind: string) => boolean;
  /**
   * Whether the API is answering requests now (one started within the last moments): slices are
   * then spaced by `pauseWhileServingMs`, so requests rarely arrive during one.
   */
  serving?: () => boolean;
  /** The pause between slices while `serving`; default 50 ms. */
  pauseWhileServingMs?: number;
  /** The pause after a slice of `sliceMs` while `serving`, when the wiring measures the loop. */
  pauseWhileServing?: (sliceMs: number) => number;
  /** Verdicts prepared in the background (Rego compiling): workloads judged meanwhile are judged again. */
  preparation?: BackgroundPreparation;
}

export const DEFAULT_RISK_SETTINGS: RiskTrackerSettings = {
  debounceMs: 200,
  sliceBudgetMs: 0.5,
  maxWorkloadsPerSlice: 32,
  pauseWhileServingMs: 50,
};

export interface RiskTrackerStatus {
  /** Workloads kept for evaluation. */
  workloads: number;
  /**
   * Workloads waiting for (re-)evaluation, plus one per policy change whose reach over the
   * namespaces is still being worked out.
   */
  pending: number;
  /** Evaluations since start. */
  evaluations: number;
  /** Whether the first full evaluation after the first sync has completed. */
  evaluated: boolean;
}

/** Per namespace, per outcome: how many workloads would be rejected or warned about. */
export interface RiskCounts {
  namespace: string;
  rejected: number;
  warned: number;
}

export class RiskTracker implements RisksSource {
  private readonly kept = new KeptWorkloads();
  private readonly risks = new Map<string, WorkloadRisk>();
  /** Source object key → workloads one of its constraints fails: who to re-evaluate when it changes. */
  private readonly failedBySource = new Map<string, Set<string>>();
  private readonly pending = new Set<string>();
  private readonly reach: PolicyReachScans;
  private started = false;
  private stopped = false;
  private firstPassDone = false;
  private evaluations = 0;
  private timer?: NodeJS.Timeout;
  private sliceScheduled = false;
  private idleWaiters: Array<() => void> = [];
  private readonly retries = new StoppedEvaluationRetries((key) => this.enqueue([key]));
  private readonly awaitingPreparation: EvaluationsAwaitingPreparation;
  private readonly changeListeners: Array<(namespace: string) => void> = [];

  constructor(
    private readonly index: ConstraintIndex,
    private readonly settings: RiskTrackerSettings = DEFAULT_RISK_SETTINGS,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.reach = new PolicyReachScans({
      namespaces: () => this.kept.namespaces(),
      identityOf: (key) => this.kept.get(key)?.identity,
      labelsOfNamespace: (namespace) => this.index.labelsOfNamespace(namespace),
    });
    this.awaitingPreparation = new EvaluationsAwaitingPreparation(settings.preparation, (keys) =>
      this.enqueue(keys),
    );
  }

  /** Feeds every object change of the source (Ingestor.onChange). */
  observe(object: KubernetesObject, removed: boolean): void {
    if (isEvaluatedWorkload(object) || (removed && this.kept.has(workloadKeyOf(object)))) {
      this.observeWorkload(object, removed);
      return;
    }
    if (!this.started) return;
    this.observePolicyChange(object);
  }

  /**
   * Called with the namespace of every workload evaluated or removed (its findings may have
   * changed): the policy reports follow it (policy-report-publisher.ts).
   */
  onRiskChange(listener: (namespace: string) => void): void {
    this.changeListeners.push(listener);
  }

  /** After the first sync: evaluates every workload once, then follows changes. */
  start(): void {
    if (this.started) return;
    this.started = true;
    for (const key of this.kept.keys()) this.pending.add(key);
    this.scheduleSlices();
  }

  /** Evaluates every workload again, now (benchmarks; the start's first pass does the same). */
  reevaluateAll(): void {
    for (const key of this.kept.keys()) this.pending.add(key);
    this.scheduleSlices();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.retries.stop();
    this.awaitingPreparation.stop();
    this.resolveIdle();
  }

  /** Resolves once nothing is pending (tests, benchmarks, one-shot commands). */
  idle(): Promise<void> {
    if (this.pending.size === 0 && this.reach.size === 0 && !this.sliceScheduled && this.timer === undefined)
      return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Evaluates everything pending now, in one go (one-shot commands: nothing else waits). */
  evaluatePendingNow(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.reach.advance((key) => this.pending.add(key));
    for (const key of [...this.pending]) this.evaluateOne(key);
    this.firstPassDone = this.started;
    this.resolveIdle();
  }

  status(): RiskTrackerStatus {
    return {
      workloads: this.kept.size,
      pending: this.pending.size + this.reach.size + this.retries.scheduled,
      evaluations: this.evaluations,
      evaluated: this.firstPassDone,
    };
  }

  /** The namespace's workloads with at least one violation, by kind then name. */
  risksInNamespace(namespace: string): WorkloadRisk[] {
    const risks: WorkloadRisk[] = [];
    for (const key of this.kept.keysIn(namespace)) {
      const risk = this.risks.get(key);
      if (risk) risks.push(risk);
    }
    return risks.sort(
      (left, right) =>
        compareText(left.workload.kind, right.workload.kind) ||
        compareText(left.workload.name, right.workload.name),
    );
  }

  /** The workloads of the namespace that would be rejected on their next apply. */
  atRiskCount(namespace: string): number {
    return this.risksInNamespace(namespace).filter((risk) => outcomeOf(risk) === 'rejected').length;
  }

  /** Every namespace with a workload at risk, with its counts (the metrics' gauges). */
  countsByNamespace(): RiskCounts[] {
    const counts = new Map<string, RiskCounts>();
    for (const risk of this.risks.values()) {
      const { namespace } = risk.workload;
      let entry = counts.get(namespace);
      if (!entry) counts.set(namespace, (entry = { namespace, rejected: 0, warned: 0 }));
      if (outcomeOf(risk) === 'rejected') entry.rejected++;
      else entry.warned++;
    }
    return [...counts.values()];
  }

  /** The kept workloads of the given namespaces, or of all (impact.ts evaluates them on an overlay). */
  keptWorkloads(namespaces?: ReadonlySet<string>): KeptWorkload[] {
    if (!namespaces) return [...this.kept.values()];
    return [...namespaces].flatMap((namespace) =>
      [...this.kept.keysIn(namespace)].flatMap((key) => {
        const workload = this.kept.get(key);
        return workload ? [workload] : [];
      }),
    );
  }

  /** The kept object of a workload, parsed (rendering cuts evidence paths back to its fields). */
  objectOf(workload: WorkloadIdentity): KubernetesObject | undefined {
    const kept = this.kept.get(referenceKey(workload));
    return kept ? (JSON.parse(kept.json) as KubernetesObject) : undefined;
  }

  private observeWorkload(object: KubernetesObject, removed: boolean): void {
    const key = workloadKeyOf(object);
    if (removed || !isEvaluatedWorkload(object)) {
      if (!this.kept.delete(key)) return;
      this.setRisk(key, undefined);
      this.pending.delete(key);
      this.retries.forget(key);
      return;
    }
    const workload = keepWorkload(object);
    const previous = this.kept.get(key);
    // A status-only update (most updates of a running workload) changes nothing a rule reads.
    if (previous?.json === workload.json) return;
    this.kept.set(workload);
    if (this.started) this.enqueue([key]);
  }

  /**
   * A policy object (or Namespace, or param) changed: the workloads its constraints can apply to
   * now, and those its constraints failed before. A kind whose change re-derives other objects'
   * constraints (a ValidatingAdmissionPolicy its bindings use, a template its constraints use, a
   * param) reaches every workload; a cluster-wide constraint, every workload of the resources it
   * targets in the namespaces it admits, found in slices (policy-reach.ts).
   */
  private observePolicyChange(object: KubernetesObject): void {
    const group = groupOf(object.apiVersion);
    const kind = object.kind ?? '';
    const name = typeof object.metadata?.name === 'string' ? object.metadata.name : '';
    if (group === '' && kind === 'Namespace') {
      this.enqueue(this.kept.keysIn(name));
      return;
    }
    if (this.settings.rederivesOthers?.(group, kind)) return this.enqueueAll();
    const key = objectKey(object);
    const affected = new Set(this.failedBySource.get(key) ?? []);
    const constraints = this.index.constraintsOfObject(key);
    if (constraints.length === 0 && !this.index.sourceOfConstraint({ id: `${key}#` })) {
      // Not a policy the index keeps (another kind), or one it removed: only former failures change.
      this.reach.cancel(key);
      if (!this.index.keepsParamGroup(group) && affected.size === 0) return;
      if (this.index.keepsParamGroup(group)) return this.enqueueAll();
      return this.enqueue(affected);
    }
    if (constraints.length === 0) {
      // Kept for others (bindings, templates): every workload, so no scan of an earlier version is needed.
      this.reach.cancel(key);
      return this.enqueueAll();
    }
    for (const constraint of constraints)
      if (constraint.scope.kind === 'namespace')
        for (const workloadKey of this.kept.keysIn(constraint.scope.namespace)) affected.add(workloadKey);
    this.reach.start(
      key,
      constraints.filter((constraint) => constraint.scope.kind !== 'namespace'),
    );
    this.enqueue(affected, this.reach.size > 0);
  }

  private enqueueAll(): void {
    this.enqueue(this.kept.keys());
  }

  /** Adds workloads to evaluate; `scanning`: a policy's reach is being worked out (evaluate even if none). */
  private enqueue(keys: Iterable<string>, scanning = false): void {
    let added = scanning;
    for (const key of keys) {
      this.pending.add(key);
      added = true;
    }
    if (!added || this.stopped) return;
    // Debounced: a burst of changes is evaluated once, after it.
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.scheduleSlices();
    }, this.settings.debounceMs);
    this.timer.unref();
  }

  private scheduleSlices(): void {
    if (this.sliceScheduled || this.stopped) return;
    this.sliceScheduled = true;
    setImmediate(() => this.runSlice());
  }

  private runSlice(): void {
    this.sliceScheduled = false;
    if (this.stopped) return;
    const started = this.now();
    const withinBudget = () => this.now() - started < this.settings.sliceBudgetMs;
    // The reach of policy changes first (it decides what else to evaluate); a slice that scanned
    // evaluates within what is left of its budget, one that did not evaluates at least one workload.
    const scanning = this.reach.size > 0;
    if (scanning) this.reach.advance((key) => this.pending.add(key), withinBudget);
    let evaluated = 0;
    if (!scanning || withinBudget())
      for (const key of this.pending) {
        this.evaluateOne(key);
        evaluated++;
        if (evaluated >= this.settings.maxWorkloadsPerSlice) break;
        if (!withinBudget()) break;
      }
    if (this.pending.size > 0 || this.reach.size > 0) {
      this.sliceScheduled = true;
      // While requests are being answered, slices are spaced out (background-share.ts: at most half
      // of the loop's idle time goes to this work then); otherwise they follow each other, yielding
      // to I/O in between.
      if (this.settings.serving?.()) {
        const pauseMs =
          this.settings.pauseWhileServing?.(this.now() - started) ?? this.settings.pauseWhileServingMs ?? 50;
        const pause = setTimeout(() => this.runSlice(), pauseMs);
        pause.unref();
      } else setImmediate(() => this.runSlice());
      return;
    }
    if (this.started) this.firstPassDone = true;
    if (this.timer === undefined) this.resolveIdle();
  }

  private evaluateOne(key: string): void {
    this.pending.delete(key);
    const workload = this.kept.get(key);
    if (!workload) return;
    this.evaluations++;
    const risk = this.awaitingPreparation.evaluate(key, () => evaluateWorkload(this.index, workload));
    this.setRisk(key, risk.findings.length > 0 ? risk : undefined);
    // Stopped at the guard's deadline (a busy process): evaluated again a little later.
    this.retries.evaluated(key, risk.stoppedAtDeadline === true);
  }

  private setRisk(key: string, risk: WorkloadRisk | undefined): void {
    const previous = this.risks.get(key);
    const namespace = (risk ?? previous)?.workload.namespace;
    if (namespace !== undefined) for (const listener of this.changeListeners) listener(namespace);
    for (const finding of previous?.findings ?? []) {
      const sourceKey = sourceKeyOfConstraint(finding.constraint);
      const failed = this.failedBySource.get(sourceKey);
      failed?.delete(key);
      if (failed?.size === 0) this.failedBySource.delete(sourceKey);
    }
    if (!risk) {
      this.risks.delete(key);
      return;
    }
    this.risks.set(key, risk);
    for (const finding of risk.findings) {
      const sourceKey = sourceKeyOfConstraint(finding.constraint);
      let failed = this.failedBySource.get(sourceKey);
      if (!failed) this.failedBySource.set(sourceKey, (failed = new Set()));
      failed.add(key);
    }
  }

  private resolveIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

function compareText(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}
