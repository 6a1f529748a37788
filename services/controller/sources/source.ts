import type { AdapterName, HealthProblem } from '../../model/api';
import type { KubernetesObject } from '../../model/kubernetes';

// What every source of objects (manifest files, a cluster) offers the rest of the controller: it
// feeds an ObjectSink and reports its state for health and readiness.

export interface AdapterSourceState {
  enabled: boolean;
  /** Resource types watched for this adapter. */
  watchedResources: number;
  /** Why the adapter is disabled, e.g. `no served kinds: cilium.io/v2 CiliumNetworkPolicy`. */
  reason?: string;
  /** A watch of this adapter is failing right now (being retried). */
  watchFailing: boolean;
}

export interface SourceStatus {
  /** The first complete sync has finished: the index holds the source's truth. */
  synced: boolean;
  /** The source can reach its backing store (always true for files). */
  connected: boolean;
  /** When the last discovery / file scan completed; null before the first. */
  lastScan: Date | null;
  adapters: Partial<Record<AdapterName, AdapterSourceState>>;
  /** Current problems of the source itself (broken files, failing watches); they degrade health. */
  problems: HealthProblem[];
}

export interface KubernetesObjectSink {
  upsert(object: KubernetesObject): unknown;
  delete(object: KubernetesObject): void;
}

export interface ObjectSource {
  /** Starts feeding the sink; resolves once the first sync completed. */
  start(): Promise<void>;
  stop(): Promise<void>;
  status(): SourceStatus;
  /**
   * `status().synced` without building the status (every adapter's state, every problem): read on
   * every admission check.
   */
  isSynced(): boolean;
  /** Whether objects of a kind reach the sink (a cluster source watches only some kinds). */
  watchesKind(group: string, kind: string): boolean;
}
