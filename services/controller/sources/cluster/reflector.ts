import { isRecord, type KubernetesObject } from '../../../model/kubernetes';
import type { Logger } from '../../../logging/logger';
import type { KubernetesObjectSink } from '../source';
import { KubernetesApiError, type KubernetesTransport } from './api-transport';
import { apiVersionOf, collectionPath, type WatchTarget } from './discovery';
import { errorMessage } from '../../../model/error-message';
import { KnownObjects, type KnownObject } from './known-objects';

// List+watch of one kind, as client-go's reflector does it: list (paginated), then watch from the
// list's resourceVersion with bookmarks; a clean end re-watches, a 410 or any failure relists; every
// relist compares with what is known and deletes what vanished, so no delete is lost across a
// reconnect. Failures back off with jitter. Only identities are kept, never whole objects.

export interface ReflectorTiming {
  backoffInitialMs: number;
  backoffMaxMs: number;
  /** Server-side watch timeout; the server ends the watch cleanly and we re-watch. */
  watchTimeoutSeconds: number;
  /** No line (event or bookmark) for this long means the connection is dead. */
  inactivityMs: number;
  listPageSize: number;
}

export const DEFAULT_REFLECTOR_TIMING: ReflectorTiming = {
  backoffInitialMs: 500,
  backoffMaxMs: 30_000,
  watchTimeoutSeconds: 300,
  inactivityMs: 330_000,
  listPageSize: 500,
};

export type ReflectorState = 'listing' | 'watching' | 'failing' | 'stopped';

/** Why a reflector lists or watches again after its first watch: a failure, a 410, or a clean end. */
export type WatchRestartCause = 'failure' | 'expired' | 'closed';

/** Optional hooks for metrics; a reflector works the same without them. */
export interface WatchObserver {
  /** A list or watch failed; it is retried with backoff. */
  onWatchFailure?(target: WatchTarget, reason: string): void;
  /** The reflector starts listing or watching again. */
  onWatchRestart?(target: WatchTarget, cause: WatchRestartCause): void;
}

class WatchExpired extends Error {}

export class Reflector {
  private readonly known = new KnownObjects();
  private resourceVersion?: string;
  private stopped = false;
  private abortWatch?: () => void;
  private wakeUp?: () => void;
  private failures = 0;
  private currentState: ReflectorState = 'listing';
  private lastError?: string;
  private resolveSynced!: () => void;
  /** Resolves after the first complete list. */
  readonly synced: Promise<void>;
  private hasSynced = false;
  /** Built once: every object delivered carries it. */
  private readonly apiVersion: string;

  constructor(
    readonly target: WatchTarget,
    private readonly transport: KubernetesTransport,
    private readonly sink: KubernetesObjectSink,
    private readonly logger: Logger,
    private readonly timing: ReflectorTiming = DEFAULT_REFLECTOR_TIMING,
    private readonly onStateChange: () => void = () => undefined,
    private readonly observer: WatchObserver = {},
  ) {
    this.synced = new Promise((resolve) => (this.resolveSynced = resolve));
    this.apiVersion = apiVersionOf(target);
  }

  get state(): ReflectorState {
    return this.currentState;
  }

  get isSynced(): boolean {
    return this.hasSynced;
  }

  get consecutiveFailures(): number {
    return this.failures;
  }

  get lastFailure(): string | undefined {
    return this.lastError;
  }

  get objectCount(): number {
    return this.known.size;
  }

  start(): void {
    void this.run();
  }

  /** Stops watching; what was delivered stays in the sink unless `forgetAll` is called. */
  stop(): void {
    this.stopped = true;
    this.setState('stopped');
    this.abortWatch?.();
    this.wakeUp?.();
  }

  /** Deletes every object this reflector delivered (the kind is no longer served). */
  forgetAll(): void {
    for (const known of this.known.all()) this.sink.delete(this.identityOf(known));
    this.known.clear();
  }

  private setState(state: ReflectorState): void {
    if (this.currentState === state) return;
    this.currentState = state;
    this.onStateChange();
  }

  private async run(): Promise<void> {
    let restartCause: WatchRestartCause | undefined;
    while (!this.stopped) {
      try {
        if (restartCause) this.observer.onWatchRestart?.(this.target, restartCause);
        if (this.resourceVersion === undefined) await this.list();
        if (this.stopped) return;
        if (this.failures > 0) {
          // Listing worked again: the API server is back.
          this.failures = 0;
          this.lastError = undefined;
          this.onStateChange();
        }
        await this.watch();
        // A clean end (server timeout): watch again from the last resourceVersion.
        restartCause = 'closed';
      } catch (error) {
        if (this.stopped) return;
        this.resourceVersion = undefined;
        if (error instanceof WatchExpired) {
          this.logger.info({ kind: this.target.kind }, 'watch history expired (410); relisting');
          restartCause = 'expired';
          continue;
        }
        this.failures++;
        this.lastError = errorMessage(error);
        this.observer.onWatchFailure?.(this.target, this.lastError);
        restartCause = 'failure';
        this.setState('failing');
        const delay = this.backoffDelay();
        this.logger.warn(
          {
            kind: this.target.kind,
            group: this.target.group,
            attempt: this.failures,
            retryInMs: delay,
            reason: this.lastError,
          },
          'list/watch failed; retrying with backoff (check API server reachability and RBAC)',
        );
        await this.sleep(delay);
      }
    }
  }

  private backoffDelay(): number {
    const base = Math.min(this.timing.backoffMaxMs, this.timing.backoffInitialMs * 2 ** (this.failures - 1));
    return Math.round(base * (0.5 + Math.random()));
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private stamp(item: unknown): KubernetesObject | undefined {
    if (!isRecord(item) || !isRecord(item.metadata)) return undefined;
    // List items carry no apiVersion/kind on the wire; the adapters route by them. The item was
    // parsed for this delivery alone, so it is stamped in place rather than copied (a copy of every
    // listed object was garbage for the collector at cluster scale); the fields land where a copy's
    // would, after the item's own or in place of them.
    item.apiVersion = this.apiVersion;
    item.kind = this.target.kind;
    return item as KubernetesObject;
  }

  /** What the sink is given on a delete: the object's identity, as it was delivered. */
  private identityOf(known: Pick<KnownObject, 'name' | 'namespace' | 'uid'>): KubernetesObject {
    return {
      apiVersion: this.apiVersion,
      kind: this.target.kind,
      metadata: { name: known.name, namespace: known.namespace, uid: known.uid },
    };
  }

  private deliver(object: KubernetesObject): void {
    const previous = this.known.get(object.metadata?.namespace, object.metadata?.name ?? '');
    const resourceVersion = object.metadata?.resourceVersion ?? '';
    if (previous && this.known.isCurrent(previous, resourceVersion)) {
      this.known.touch(previous);
      return;
    }
    // Deleted and recreated under the same name while we were away: drop the old incarnation.
    if (previous && previous.uid !== object.metadata?.uid) this.sink.delete(this.identityOf(previous));
    this.sink.upsert(object);
    this.known.set(object);
  }

  private remove(object: KubernetesObject): void {
    const namespace = object.metadata?.namespace;
    const name = object.metadata?.name ?? '';
    const previous = this.known.get(namespace, name);
    this.sink.delete(this.identityOf(previous ?? { name, namespace, uid: object.metadata?.uid }));
    this.known.delete(namespace, name);
  }

  private async list(): Promise<void> {
    this.setState('listing');
    this.known.markListing();
    let continueToken: string | undefined;
    let listResourceVersion = '';
    do {
      const query = new URLSearchParams({ limit: String(this.timing.listPageSize) });
      if (continueToken) query.set('continue', continueToken);
      const body = await this.transport.getJson(`${collectionPath(this.target)}?${query}`);
      if (!isRecord(body) || !Array.isArray(body.items))
        throw new KubernetesApiError(`list of ${this.target.kind} did not return a list`, undefined);
      for (const item of body.items) {
        const object = this.stamp(item);
        if (!object) continue;
        this.deliver(object);
      }
      const metadata = isRecord(body.metadata) ? body.metadata : {};
      listResourceVersion =
        typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : listResourceVersion;
      continueToken =
        typeof metadata.continue === 'string' && metadata.continue !== '' ? metadata.continue : undefined;
    } while (continueToken && !this.stopped);
    for (const known of this.known.notSeenInListing()) {
      this.sink.delete(this.identityOf(known));
      this.known.delete(known.namespace, known.name);
    }
    this.resourceVersion = listResourceVersion;
    if (!this.hasSynced) {
      this.hasSynced = true;
      this.resolveSynced();
    }
  }

  private watch(): Promise<void> {
    this.setState('watching');
    const query = new URLSearchParams({
      watch: 'true',
      allowWatchBookmarks: 'true',
      timeoutSeconds: String(this.timing.watchTimeoutSeconds),
    });
    if (this.resourceVersion) query.set('resourceVersion', this.resourceVersion);
    return new Promise<void>((resolve, reject) => {
      let inactivity: NodeJS.Timeout | undefined;
      let settled = false;
      const finish = (error?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(inactivity);
        this.abortWatch = undefined;
        if (error) reject(error);
        else resolve();
      };
      const resetInactivity = () => {
        clearTimeout(inactivity);
        inactivity = setTimeout(() => {
          abort();
          finish(new KubernetesApiError(`watch of ${this.target.kind} went silent; reconnecting`, undefined));
        }, this.timing.inactivityMs);
      };
      const abort = this.transport.stream(`${collectionPath(this.target)}?${query}`, {
        onLine: (line) => {
          if (settled) return;
          resetInactivity();
          try {
            this.handleEvent(line);
          } catch (error) {
            abort();
            finish(error as Error);
          }
        },
        onEnd: (error) => finish(error),
      });
      this.abortWatch = () => {
        abort();
        finish();
      };
      resetInactivity();
    });
  }

  private handleEvent(line: string): void {
    let event: unknown;
    try {
      event = JSON.parse(line);
    } catch {
      throw new KubernetesApiError(`watch of ${this.target.kind} sent a line that is not JSON`, undefined);
    }
    if (!isRecord(event) || typeof event.type !== 'string') return;
    const object = event.object;
    if (event.type === 'ERROR') {
      const code = isRecord(object) && typeof object.code === 'number' ? object.code : undefined;
      if (code === 410) throw new WatchExpired();
      const message =
        isRecord(object) && typeof object.message === 'string' ? object.message : 'unknown watch error';
      throw new KubernetesApiError(`watch of ${this.target.kind}: ${message}`, code);
    }
    if (!isRecord(object) || !isRecord(object.metadata)) return;
    const resourceVersion =
      typeof object.metadata.resourceVersion === 'string' ? object.metadata.resourceVersion : undefined;
    if (event.type === 'BOOKMARK') {
      if (resourceVersion) this.resourceVersion = resourceVersion;
      return;
    }
    const stamped = this.stamp(object);
    if (!stamped) return;
    if (event.type === 'ADDED' || event.type === 'MODIFIED') this.deliver(stamped);
    else if (event.type === 'DELETED') this.remove(stamped);
    if (resourceVersion) this.resourceVersion = resourceVersion;
  }
}
