import type { KubeConfig } from '@kubernetes/client-node';
import { ADAPTER_NAMES, type AdapterName, type HealthProblem } from '../../../model/api';
import type { KubernetesObject } from '../../../model/kubernetes';
import type { Logger } from '../../../logging/logger';
import type { AdapterRegistry } from '../../adapters/registry';
import type { AdapterSourceState, KubernetesObjectSink, ObjectSource, SourceStatus } from '../source';
import { KubernetesTransport } from './api-transport';
import {
  candidatesOf,
  groupsOfInterest,
  parseGroupList,
  parseResourceList,
  resolveWatchTargets,
  targetKey,
  type DiscoveryDocument,
  type ServedResource,
  type WatchCandidate,
  type WatchTarget,
} from './discovery';
import { DEFAULT_REFLECTOR_TIMING, Reflector, type ReflectorTiming, type WatchObserver } from './reflector';
import { errorMessage } from '../../../model/error-message';

// The production source: discovers which policy kinds the cluster serves (at start, every
// --rescan-interval, and soon after a CRD changes), runs one reflector per served kind, and reports
// the truth to health. Every replica runs its own; there is no leader election.

export interface ClusterSourceOptions {
  kubeConfig: KubeConfig;
  sink: KubernetesObjectSink;
  registry: AdapterRegistry;
  logger: Logger;
  rescanIntervalMs: number;
  clock?: () => Date;
  timing?: Partial<ReflectorTiming>;
  /** Delay before rescanning after a CustomResourceDefinition changed. */
  crdRescanDelayMs?: number;
  /** Longest a rescan waits for newly watched kinds to be listed before it counts as complete. */
  syncWaitMs?: number;
  /** Extra kinds to watch (e.g. companion resources for missing-resource rules). */
  extraCandidates?: readonly WatchCandidate[];
  /** Hooks for watch failures and restarts (controller metrics). */
  watchObserver?: WatchObserver;
}

export class ClusterSource implements ObjectSource {
  private readonly transport: KubernetesTransport;
  private readonly reflectors = new Map<string, Reflector>();
  private readonly candidates: WatchCandidate[];
  private readonly timing: ReflectorTiming;
  private readonly clock: () => Date;
  private lastScan: Date | null = null;
  private discoveryError?: string;
  private synced = false;
  private stopped = false;
  private rescanTimer?: NodeJS.Timeout;
  private crdTimer?: NodeJS.Timeout;
  private scanning: Promise<void> = Promise.resolve();

  constructor(private readonly options: ClusterSourceOptions) {
    this.transport = new KubernetesTransport(options.kubeConfig);
    this.candidates = candidatesOf(options.registry);
    if (options.extraCandidates) this.candidates.push(...options.extraCandidates);
    this.timing = { ...DEFAULT_REFLECTOR_TIMING, ...options.timing };
    this.clock = options.clock ?? (() => new Date());
  }

  async start(): Promise<void> {
    // Discovery must succeed once before anything can be watched; keep trying with backoff.
    let attempt = 0;
    while (!this.stopped) {
      try {
        await this.rescan();
        break;
      } catch (error) {
        attempt++;
        const delay = Math.min(this.timing.backoffMaxMs, this.timing.backoffInitialMs * 2 ** (attempt - 1));
        this.options.logger.warn(
          { attempt, retryInMs: delay, reason: errorMessage(error) },
          'cannot reach the API server for discovery; retrying (check --kubeconfig, network and RBAC)',
        );
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
    await Promise.all([...this.reflectors.values()].map((reflector) => reflector.synced));
    this.synced = !this.stopped;
    this.scheduleRescan();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.rescanTimer);
    clearTimeout(this.crdTimer);
    for (const reflector of this.reflectors.values()) reflector.stop();
    await this.scanning.catch(() => undefined);
  }

  /** Runs a discovery now (also used by tests instead of waiting for the interval). */
  rescanNow(): Promise<void> {
    this.scanning = this.scanning.catch(() => undefined).then(() => this.rescan());
    return this.scanning;
  }

  private scheduleRescan(): void {
    if (this.stopped) return;
    clearTimeout(this.rescanTimer);
    this.rescanTimer = setTimeout(() => {
      this.rescanNow()
        .catch((error: Error) =>
          this.options.logger.warn(
            { reason: error.message },
            'rescan failed; keeping current watches, retrying at next interval',
          ),
        )
        .finally(() => this.scheduleRescan());
    }, this.options.rescanIntervalMs);
    this.rescanTimer.unref();
  }

  private async discover(): Promise<DiscoveryDocument> {
    const dynamicGroups = this.dynamicGroups();
    const interesting = groupsOfInterest(this.candidates, [...dynamicGroups.keys()]);
    const groups: DiscoveryDocument['groups'] = new Map();
    const core = parseResourceList(await this.transport.getJson('/api/v1'));
    groups.set('', { preferredVersion: 'v1', versions: new Map([['v1', core]]) });
    const groupList = parseGroupList(await this.transport.getJson('/apis'));
    for (const [name, group] of groupList) {
      if (!interesting.has(name)) continue;
      const versions = new Map<string, ServedResource[]>();
      for (const version of group.versions)
        versions.set(version, parseResourceList(await this.transport.getJson(`/apis/${name}/${version}`)));
      groups.set(name, { preferredVersion: group.preferredVersion, versions });
    }
    return { groups };
  }

  private dynamicGroups(): Map<string, AdapterName> {
    const groups = new Map<string, AdapterName>();
    for (const adapter of this.options.registry.adapters)
      for (const group of adapter.dynamicGroups ?? []) groups.set(group, adapter.name);
    return groups;
  }

  private async rescan(): Promise<void> {
    let targets: WatchTarget[];
    try {
      targets = resolveWatchTargets(await this.discover(), this.candidates, this.dynamicGroups());
      this.discoveryError = undefined;
    } catch (error) {
      this.discoveryError = errorMessage(error);
      throw error;
    }
    if (this.stopped) return;
    const wanted = new Map(targets.map((target) => [targetKey(target), target]));
    for (const [key, reflector] of this.reflectors) {
      const target = wanted.get(key);
      if (
        !target ||
        target.version !== reflector.target.version ||
        target.plural !== reflector.target.plural
      ) {
        this.options.logger.info(
          { kind: reflector.target.kind, group: reflector.target.group },
          'kind no longer served; dropping its constraints',
        );
        reflector.stop();
        reflector.forgetAll();
        this.reflectors.delete(key);
      }
    }
    const started: Reflector[] = [];
    for (const [key, target] of wanted) {
      if (this.reflectors.has(key)) continue;
      const reflector = new Reflector(
        target,
        this.transport,
        this.sinkFor(target),
        this.options.logger,
        this.timing,
        undefined,
        this.options.watchObserver,
      );
      this.reflectors.set(key, reflector);
      reflector.start();
      started.push(reflector);
      this.options.logger.info(
        { kind: target.kind, group: target.group, version: target.version, owner: target.owner },
        'watching kind',
      );
    }
    // A scan is complete when the kinds it found are listed (so lastScan never runs ahead of the
    // index), or after a bounded wait when a new kind cannot be listed yet (its reflector retries).
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(started.map((reflector) => reflector.synced)),
      new Promise((resolve) => (timer = setTimeout(resolve, this.options.syncWaitMs ?? 30_000))),
    ]);
    clearTimeout(timer);
    this.lastScan = this.clock();
  }

  /** CRDs are not indexed; a change to one triggers an early rescan so new kinds are watched soon. */
  private sinkFor(target: WatchTarget): KubernetesObjectSink {
    if (target.kind !== 'CustomResourceDefinition') return this.options.sink;
    const scheduleCrdRescan = (_object: KubernetesObject) => {
      if (!this.synced || this.stopped) return;
      clearTimeout(this.crdTimer);
      this.crdTimer = setTimeout(() => {
        this.rescanNow().catch((error: Error) =>
          this.options.logger.warn(
            { reason: error.message },
            'rescan after a CRD change failed; the next interval retries',
          ),
        );
      }, this.options.crdRescanDelayMs ?? 2_000);
      this.crdTimer.unref();
    };
    // CRDs still reach the main sink: the companion-resource inventory learns which kinds exist.
    return {
      upsert: (object) => {
        this.options.sink.upsert(object);
        scheduleCrdRescan(object);
      },
      delete: (object) => {
        this.options.sink.delete(object);
        scheduleCrdRescan(object);
      },
    };
  }

  watchesKind(group: string, kind: string): boolean {
    return this.reflectors.has(targetKey({ group, kind }));
  }

  isSynced(): boolean {
    return this.synced;
  }

  status(): SourceStatus {
    const reflectors = [...this.reflectors.values()];
    const adapters: Partial<Record<AdapterName, AdapterSourceState>> = {};
    for (const name of ADAPTER_NAMES) {
      const adapter = this.options.registry.byName(name);
      if (!adapter) continue;
      const own = reflectors.filter((reflector) => reflector.target.owner === name);
      const state: AdapterSourceState = {
        enabled: own.length > 0,
        watchedResources: own.length,
        watchFailing: own.some((reflector) => reflector.consecutiveFailures > 0),
      };
      if (own.length === 0) {
        const kinds = adapter.kinds.map(
          (kind) => `${kind.group ? `${kind.group}/` : ''}${kind.versions[0]} ${kind.kind}`,
        );
        const groups = (adapter.dynamicGroups ?? []).map((group) => `${group} (any kind)`);
        state.reason = this.lastScan
          ? `no served kinds: ${[...kinds, ...groups].join(', ')}`
          : 'discovery has not completed yet';
      }
      adapters[name] = state;
    }
    const failing = reflectors.filter((reflector) => reflector.consecutiveFailures > 0);
    const problems: HealthProblem[] = failing.map((reflector) => ({
      source: `${reflector.target.owner}: watch ${reflector.target.group || 'core'}/${reflector.target.kind}`,
      message: reflector.lastFailure ?? 'failing',
      since: (this.lastScan ?? this.clock()).toISOString(),
    }));
    if (this.discoveryError)
      problems.push({ source: 'discovery', message: this.discoveryError, since: this.clock().toISOString() });
    // Lost the API server: nothing can be listed or watched any more.
    const connected =
      reflectors.length === 0
        ? this.discoveryError === undefined && this.lastScan !== null
        : failing.length < reflectors.length;
    return { synced: this.synced, connected, lastScan: this.lastScan, adapters, problems };
  }
}
