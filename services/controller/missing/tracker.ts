import type { Constraint } from '../../model/constraint';
import type { KubernetesObject } from '../../model/kubernetes';
import type { ConstraintIndex } from '../index/constraint-index';
import { Inventory } from './inventory';
import type { MissingFinding, MissingRuleName } from './finding';
import { findingsForWorkload, meshFindings, type CompanionLookup } from './rules';

// Turns companion findings into MissingResource constraints in the index, once a finding has held
// for the debounce (a rollout that creates a Deployment and its Issuer in a row is never reported).
// Findings of a namespace are stored as one pseudo-object, so a namespace's set is replaced whole.

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
}

const PSEUDO_OBJECT_PREFIX = 'missingresource:';

export class MissingResourceTracker {
  readonly inventory = new Inventory();
  private readonly firstSeen = new Map<string, number>();
  private readonly reportedNamespaces = new Set<string>();
  private evaluationTimer?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly index: ConstraintIndex,
    private readonly settings: MissingResourceSettings,
    private readonly clock: () => Date = () => new Date(),
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
  }

  lookup(): CompanionLookup {
    return {
      records: (group, kind, namespace) => this.inventory.records(group, kind, namespace),
      hasKind: (group, kind) => this.inventory.hasKind(group, kind),
      canSee: (group, kind) => this.settings.canSee(group, kind),
      namespaceLabels: (namespace) => this.index.labelsOfNamespace(namespace),
      meshRootNamespace: this.settings.meshRootNamespace,
    };
  }

  private scheduleEvaluation(delayMs: number): void {
    if (this.stopped) return;
    if (this.evaluationTimer && delayMs > 0) clearTimeout(this.evaluationTimer);
    this.evaluationTimer = setTimeout(() => this.evaluate(), Math.max(0, delayMs));
    this.evaluationTimer.unref();
  }

  /** Every current finding, debounced or not. */
  currentFindings(): MissingFinding[] {
    const lookup = this.lookup();
    const findings = this.inventory
      .allWorkloads()
      .flatMap((workload) => findingsForWorkload(workload, lookup, this.settings.disabledRules));
    if (!this.settings.disabledRules.has('mesh-mtls'))
      for (const namespace of this.index.knownNamespaces())
        findings.push(
          ...meshFindings(namespace, lookup).filter(
            (finding) => !(finding.rule === 'crd' && this.settings.disabledRules.has('crd')),
          ),
        );
    return findings;
  }

  /** Recomputes findings and writes the debounced ones into the index. */
  evaluate(): void {
    const now = this.clock().getTime();
    const findings = this.currentFindings();
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
