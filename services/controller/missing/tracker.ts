import type { Constraint } from '../../model/constraint';
import type { KubernetesObject } from '../../model/kubernetes';
import type { ConstraintIndex } from '../index/constraint-index';
import { Inventory } from './inventory';
import type { MissingFinding, MissingRuleName } from './finding';
import { findingsForWorkload, meshFindings, type CompanionLookup } from './rules';

// Turns companion findings into MissingResource constraints in the index, once a finding has held
// for the debounce (a rollout that creates a Deployment and its Issuer in a row is never reported).
// Findings of a namespace are stored as one pseudo-object, so a namespace's set is replaced whole.
//
// In the controller, the evaluation after a change goes over every workload and namespace: 2–10 ms
// at 10,000 of each (docs/benchmarks.md), in one step on the event loop until it was sliced. It now
// works the findings out a slice at a time and writes them in one step once complete, so every
// reader sees the previous findings until the new ones are all known (one-shot commands still
// evaluate in one go, `evaluate()`). A change during an evaluation is evaluated after it.

export interface MissingResourceSettings {
  /** How long something must be missing before it is reported (`--missing-debounce`). */
  debounceMs: number;
  disabledRules: ReadonlySet<MissingRuleName>;
  meshRootNamespace: string;
  defaultContact: string;
  /** Whether Forewarn sees objects of a kind (the cluster source watches only some kinds). */
  canSee(group: string, kind: string): boolean;
  /** Delay before re-evaluating after a change (changes come in bursts). */
  evaluationDelayMs?: number;
  /**
   * The longest a change waits for its evaluation while more changes keep coming (the delay above
   * restarts at each change); default 2 s.
   */
  maxEvaluationWaitMs?: number;
  /** The most time one slice of the background evaluation takes before it yields; default 1 ms. */
  sliceBudgetMs?: number;
}

/** Workloads or namespaces looked at between two looks at the clock. */
const ITEMS_PER_CHECK = 32;

const PSEUDO_OBJECT_PREFIX = 'missingresource:';

export class MissingResourceTracker {
  readonly inventory = new Inventory();
  private readonly firstSeen = new Map<string, number>();
  private readonly reportedNamespaces = new Set<string>();
  private evaluationTimer?: NodeJS.Timeout;
  /** When the oldest change not yet evaluated came (clock time), while one is waiting. */
  private waitingSince?: number;
  private stopped = false;
  /** The background evaluation under way; a synchronous one replaces it. */
  private running?: object;
  /** A change came while the evaluation under way had begun: evaluate again once it is written. */
  private evaluateAgain = false;
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly index: ConstraintIndex,
    private readonly settings: MissingResourceSettings,
    private readonly clock: () => Date = () => new Date(),
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Feeds every object change of the source; evaluation follows shortly after. */
  observe(object: KubernetesObject, removed: boolean): void {
    if (removed) this.inventory.remove(object);
    else this.inventory.upsert(object);
    this.scheduleEvaluation(this.settings.evaluationDelayMs ?? 100);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.evaluationTimer);
    this.running = undefined;
    this.evaluateAgain = false;
    this.resolveIdle();
  }

  /** Resolves once no evaluation is scheduled or under way (tests). */
  idle(): Promise<void> {
    if (this.evaluationTimer === undefined && this.running === undefined) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  lookup(): CompanionLookup {
    return {
      records: (group, kind, namespace) => this.inventory.records(group, kind, namespace),
      record: (group, kind, namespace, name) => this.inventory.record(group, kind, namespace, name),
      hasKind: (group, kind) => this.inventory.hasKind(group, kind),
      canSee: (group, kind) => this.settings.canSee(group, kind),
      namespaceLabels: (namespace) => this.index.labelsOfNamespace(namespace),
      meshRootNamespace: this.settings.meshRootNamespace,
    };
  }

  /**
   * A trailing debounce with a ceiling: under a steady stream of changes (a rollout, a churning
   * cluster) the delay would restart for ever and findings would never be brought up to date.
   */
  private scheduleEvaluation(delayMs: number): void {
    if (this.stopped) return;
    const now = this.clock().getTime();
    this.waitingSince ??= now;
    const ceiling = this.waitingSince + (this.settings.maxEvaluationWaitMs ?? 2_000) - now;
    clearTimeout(this.evaluationTimer);
    this.evaluationTimer = setTimeout(
      () => {
        this.evaluationTimer = undefined;
        this.waitingSince = undefined;
        if (this.running === undefined) this.evaluateInBackground();
        else this.evaluateAgain = true;
      },
      Math.max(0, Math.min(delayMs, ceiling)),
    );
    this.evaluationTimer.unref();
  }

  /** Every current finding, debounced or not. */
  currentFindings(): MissingFinding[] {
    const findings = this.findingsInSteps();
    for (;;) {
      const step = findings.next();
      if (step.done === true) return step.value;
    }
  }

  /**
   * The current findings, pausing (a `yield`) every few workloads and namespaces. Each one is read
   * as it is when reached; a change meanwhile has scheduled the next evaluation, which sees it.
   */
  private *findingsInSteps(): Generator<void, MissingFinding[]> {
    const lookup = this.lookup();
    const findings: MissingFinding[] = [];
    let sinceCheck = 0;
    for (const workload of this.inventory.allWorkloads()) {
      findings.push(...findingsForWorkload(workload, lookup, this.settings.disabledRules));
      if (++sinceCheck % ITEMS_PER_CHECK === 0) yield;
    }
    if (!this.settings.disabledRules.has('mesh-mtls'))
      for (const namespace of this.index.knownNamespaces()) {
        findings.push(
          ...meshFindings(namespace, lookup).filter(
            (finding) => !(finding.rule === 'crd' && this.settings.disabledRules.has('crd')),
          ),
        );
        if (++sinceCheck % ITEMS_PER_CHECK === 0) yield;
      }
    return findings;
  }

  /**
   * The controller's evaluation: the findings worked out in slices of at most `sliceBudgetMs`
   * (setImmediate between them, so requests are answered), then written in one step.
   */
  private evaluateInBackground(): void {
    if (this.stopped) return;
    const run = {};
    this.running = run;
    const findings = this.findingsInSteps();
    const budgetMs = this.settings.sliceBudgetMs ?? 1;
    const slice = () => {
      if (this.running !== run) return; // replaced by a newer evaluation, or stopped
      const started = this.now();
      for (;;) {
        const step = findings.next();
        if (step.done === true) {
          this.running = undefined;
          this.write(step.value);
          // Finished rather than restarted at each change, so that a stream of changes faster than
          // one evaluation still brings findings up to date; what changed meanwhile is seen next.
          if (this.evaluateAgain) {
            this.evaluateAgain = false;
            this.evaluateInBackground();
          } else if (this.evaluationTimer === undefined) this.resolveIdle();
          return;
        }
        if (this.now() - started >= budgetMs) break;
      }
      setImmediate(slice);
    };
    slice();
  }

  /** Recomputes findings and writes the debounced ones into the index, in one go. */
  evaluate(): void {
    this.running = undefined;
    this.evaluateAgain = false;
    this.write(this.currentFindings());
    if (this.evaluationTimer === undefined) this.resolveIdle();
  }

  /** Writes the debounced findings into the index, replacing every namespace's set. */
  private write(findings: readonly MissingFinding[]): void {
    const now = this.clock().getTime();
    const current = new Set(findings.map((finding) => finding.key));
    for (const key of [...this.firstSeen.keys()]) if (!current.has(key)) this.firstSeen.delete(key);
    const byNamespace = new Map<string, Constraint[]>();
    let nextDue = Infinity;
    for (const finding of findings) {
      const since = this.firstSeen.get(finding.key) ?? now;
      this.firstSeen.set(finding.key, since);
      const due = since + this.settings.debounceMs;
      if (due > now) {
        nextDue = Math.min(nextDue, due);
        continue;
      }
      const namespace = finding.draft.source.namespace ?? '';
      const list = byNamespace.get(namespace) ?? [];
      list.push(this.finish(finding, namespace, since));
      byNamespace.set(namespace, list);
    }
    for (const namespace of [...this.reportedNamespaces])
      if (!byNamespace.has(namespace)) {
        this.index.replaceObject(`${PSEUDO_OBJECT_PREFIX}${namespace}`, []);
        this.reportedNamespaces.delete(namespace);
      }
    for (const [namespace, constraints] of byNamespace) {
      this.index.replaceObject(`${PSEUDO_OBJECT_PREFIX}${namespace}`, constraints);
      this.reportedNamespaces.add(namespace);
    }
    if (nextDue !== Infinity) this.scheduleEvaluation(nextDue - now + 1);
  }

  private resolveIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private finish(finding: MissingFinding, namespace: string, since: number): Constraint {
    return {
      ...finding.draft,
      id: `${PSEUDO_OBJECT_PREFIX}${namespace}#${finding.draft.id}`,
      remediation: {
        summary: finding.draft.remediation.summary,
        steps: finding.draft.remediation.steps.map((step) =>
          step.type === 'manual' ? { ...step, contact: step.contact ?? this.settings.defaultContact } : step,
        ),
      },
      lastObserved: new Date(since).toISOString(),
    };
  }
}
