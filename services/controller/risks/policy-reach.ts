import type { Constraint } from '../../model/constraint';
import type { Labels } from '../../model/kubernetes';
import { pluralOfKind, targetsInclude } from '../../model/resources';
import { scopeAdmits } from '../index/constraint-index';
import type { WorkloadIdentity } from './workload-risk';

// Which kept workloads a changed cluster-wide policy can reach (issue 35), worked out in slices.
// Finding them means matching the policy's namespace selector against every namespace holding
// workloads: at cluster scale (10,000 namespaces) that was one synchronous step of 4–9 ms on a quiet
// machine (more on a busy one), the longest the controller held the event loop for a policy change
// (docs/benchmarks.md), so the tracker now walks the namespaces a few at a time between requests,
// as it evaluates workloads.
//
// Only the set of workloads to re-evaluate is worked out late: the index swaps a policy's
// constraints in one step (every answer sees the old version or the new one, never a mix), and
// each workload is evaluated against the index as it is when its turn comes.

/** What a scan reads of the kept workloads and the index; read live, as the scan goes. */
export interface ReachSource {
  /** Every namespace holding workloads, with their keys (a live iterator: changes show or are skipped). */
  namespaces(): Iterator<[string, readonly string[] | ReadonlySet<string>]>;
  identityOf(key: string): WorkloadIdentity | undefined;
  labelsOfNamespace(namespace: string): Labels;
}

/** Namespaces walked between two looks at the clock. */
const NAMESPACES_PER_CHECK = 8;

interface Scan {
  constraints: readonly Constraint[];
  namespaces: Iterator<[string, readonly string[] | ReadonlySet<string>]>;
}

/** Whether a cluster-wide constraint targets the workload's kind (no targets: every kind). */
function targetsWorkload(constraint: Constraint, identity: WorkloadIdentity): boolean {
  return (
    constraint.resourceTargets === undefined ||
    targetsInclude(constraint.resourceTargets, {
      group: identity.group,
      resource: pluralOfKind(identity.kind),
    })
  );
}

/**
 * The unfinished scans, one per changed source object. A later change of the same object replaces
 * its scan (the latest version is the one in the index); dropping the rest of the earlier scan
 * loses nothing, because a workload evaluated while the earlier version was in force and failing
 * it is among the source's former failures, which the tracker re-evaluates on every change.
 */
export class PolicyReachScans {
  private readonly scans = new Map<string, Scan>();

  constructor(private readonly source: ReachSource) {}

  /** Unfinished scans. */
  get size(): number {
    return this.scans.size;
  }

  /** Starts (or restarts) the scan of a source object's cluster-wide constraints. */
  start(sourceKey: string, constraints: readonly Constraint[]): void {
    this.scans.delete(sourceKey);
    if (constraints.length === 0) return;
    this.scans.set(sourceKey, { constraints, namespaces: this.source.namespaces() });
  }

  /** The source object is gone: what its scan had left to find needs no evaluation for it. */
  cancel(sourceKey: string): void {
    this.scans.delete(sourceKey);
  }

  /**
   * Walks namespaces, handing every workload a scanned constraint reaches to `reached`, until
   * every scan is done or `keepGoing` says stop (asked every few namespaces, after at least one).
   */
  advance(reached: (workloadKey: string) => void, keepGoing: () => boolean = () => true): void {
    for (const [sourceKey, scan] of this.scans) {
      let finished = false;
      while (!finished) {
        finished = this.walk(scan, reached);
        if (finished) this.scans.delete(sourceKey);
        if (!keepGoing()) return;
      }
    }
  }

  /** A few more namespaces of one scan; true when it has walked them all. */
  private walk(scan: Scan, reached: (workloadKey: string) => void): boolean {
    for (let walked = 0; walked < NAMESPACES_PER_CHECK; walked++) {
      const next = scan.namespaces.next();
      if (next.done === true) return true;
      this.reachIn(scan.constraints, next.value[0], next.value[1], reached);
    }
    return false;
  }

  private reachIn(
    constraints: readonly Constraint[],
    namespace: string,
    keys: readonly string[] | ReadonlySet<string>,
    reached: (workloadKey: string) => void,
  ): void {
    const labels = this.source.labelsOfNamespace(namespace);
    for (const constraint of constraints) {
      if (!scopeAdmits(constraint.scope, namespace, labels)) continue;
      for (const key of keys) {
        const identity = this.source.identityOf(key);
        if (identity && targetsWorkload(constraint, identity)) reached(key);
      }
    }
  }
}
