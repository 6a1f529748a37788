import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiStatusError } from './api-status';
import { cloneJson, type JsonObject } from './json';
import type { ObjectStore, StoredEvent, StoreObserver } from './object-store';
import { groupVersion, keyOf, type ResourceType } from './resource-registry';
import type { ObjectFilter } from './selectors';

// Watch responses: HTTP 200 with headers flushed at once (client-node's informer awaits the response
// before it resolves start()), then newline-delimited JSON events on a chunked body for as long as the
// watch lives. Which events a watcher sees follows the watch cache: synthetic ADDED for the current
// state when no resourceVersion is given, replay from the history otherwise, and for selector-filtered
// watches ADDED/DELETED when an object starts or stops matching.

export interface WatchRequest {
  type: ResourceType;
  /** The version the watch was opened at: event objects are shown at that version. */
  version: string;
  filter: ObjectFilter;
  /** undefined or '0': start from the current state. */
  resourceVersion: string | undefined;
  allowBookmarks: boolean;
  timeoutSeconds: number | undefined;
  path: string;
}

export interface WatchMatcher {
  pathIncludes?: string;
}

type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

class OpenWatch {
  private readonly timers: NodeJS.Timeout[] = [];
  private ended = false;

  constructor(
    readonly request: WatchRequest,
    private readonly incoming: IncomingMessage,
    private readonly response: ServerResponse,
    private readonly currentResourceVersion: () => number,
    private readonly onEnd: (watch: OpenWatch) => void,
  ) {
    response.on('close', () => this.finish());
  }

  scheduleTimers(bookmarkIntervalMs: number): void {
    if (this.request.allowBookmarks) {
      this.timers.push(setInterval(() => this.sendBookmark(), bookmarkIntervalMs));
    }
    if (this.request.timeoutSeconds !== undefined) {
      this.timers.push(setTimeout(() => this.endCleanly(), this.request.timeoutSeconds * 1000));
    }
  }

  /** What this watcher sees of a store change, if anything. */
  deliver(event: StoredEvent): void {
    if (this.ended || event.resourceKey !== keyOf(this.request.type)) return;
    const filter = this.request.filter;
    const matchesNow = filter.matches(event.object);
    if (event.type === 'ADDED' && matchesNow) this.send('ADDED', event.object);
    if (event.type === 'DELETED' && matchesNow) this.send('DELETED', event.object);
    if (event.type === 'MODIFIED') {
      const matchedBefore = event.previous !== undefined && filter.matches(event.previous);
      if (matchesNow) this.send(matchedBefore ? 'MODIFIED' : 'ADDED', event.object);
      else if (matchedBefore) this.send('DELETED', event.object);
    }
  }

  send(type: WatchEventType, object: JsonObject): void {
    if (this.ended || this.response.destroyed || this.response.writableEnded) return;
    const shown = type === 'ERROR' ? object : this.present(object);
    this.response.write(`${JSON.stringify({ type, object: shown })}\n`);
  }

  sendBookmark(): void {
    const { type, version } = this.request;
    this.send('BOOKMARK', {
      kind: type.kind,
      apiVersion: groupVersion(type.group, version),
      metadata: { resourceVersion: String(this.currentResourceVersion()) },
    });
  }

  /** Ends the chunked body properly: the client sees a normal end of stream. */
  endCleanly(): void {
    if (this.ended) return;
    this.finish();
    this.response.end();
  }

  /** Kills the connection mid-stream, like a crashed API server or a dropped load balancer flow. */
  drop(): void {
    if (this.ended) return;
    this.finish();
    this.incoming.socket.destroy();
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.timers.forEach((timer) => clearTimeout(timer));
    this.onEnd(this);
  }

  private present(object: JsonObject): JsonObject {
    const shown = cloneJson(object);
    shown.apiVersion = groupVersion(this.request.type.group, this.request.version);
    shown.kind = this.request.type.kind;
    return shown;
  }
}

export class WatchHub implements StoreObserver {
  private readonly watches = new Set<OpenWatch>();
  private readonly openedListeners = new Set<() => void>();

  constructor(
    private readonly store: ObjectStore,
    private readonly bookmarkIntervalMs: () => number,
  ) {}

  /** Answers a watch request; the response then stays open until the watch ends. */
  open(request: WatchRequest, incoming: IncomingMessage, response: ServerResponse): void {
    let replay: StoredEvent[] | undefined;
    let expired: ApiStatusError | undefined;
    const startFromNow = request.resourceVersion === undefined || request.resourceVersion === '0';
    if (!startFromNow) {
      try {
        replay = this.store.eventsSince(Number(request.resourceVersion));
      } catch (error) {
        if (!(error instanceof ApiStatusError)) throw error;
        expired = error;
      }
    }
    response.writeHead(200, {
      'Content-Type': 'application/json',
      'Transfer-Encoding': 'chunked',
      'Cache-Control': 'no-cache, private',
    });
    response.flushHeaders();
    const watch = new OpenWatch(
      request,
      incoming,
      response,
      () => this.store.resourceVersion,
      (ended) => this.watches.delete(ended),
    );
    if (expired) {
      // The watch cache answers a too-old resourceVersion with 200, one ERROR event, and the end.
      watch.send('ERROR', expired.toStatus());
      watch.endCleanly();
      return;
    }
    if (startFromNow) {
      for (const object of this.store.list(request.type, request.filter)) watch.send('ADDED', object);
    } else {
      for (const event of replay ?? []) watch.deliver(event);
    }
    // Replay and registration happen in the same tick, so no event can fall between them.
    this.watches.add(watch);
    watch.scheduleTimers(this.bookmarkIntervalMs());
    this.openedListeners.forEach((listener) => listener());
  }

  objectChanged(event: StoredEvent): void {
    for (const watch of [...this.watches]) watch.deliver(event);
  }

  resourceTypeRemoved(type: ResourceType): void {
    for (const watch of [...this.watches]) {
      if (keyOf(watch.request.type) === keyOf(type)) watch.endCleanly();
    }
  }

  matching(matcher: WatchMatcher = {}): OpenWatchInfo[] {
    return [...this.watches]
      .filter(
        (watch) => matcher.pathIncludes === undefined || watch.request.path.includes(matcher.pathIncludes),
      )
      .map((watch) => ({
        path: watch.request.path,
        resourceVersion: watch.request.resourceVersion,
        allowBookmarks: watch.request.allowBookmarks,
        drop: () => watch.drop(),
        endCleanly: () => watch.endCleanly(),
      }));
  }

  /** Resolves once `count` matching watches are open; rejects after `timeoutMs`. */
  waitFor(matcher: WatchMatcher, count: number, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const finish = () => {
        clearTimeout(timer);
        this.openedListeners.delete(check);
      };
      const check = () => {
        if (this.matching(matcher).length < count) return;
        finish();
        resolve();
      };
      const timer = setTimeout(() => {
        finish();
        const found = this.matching(matcher).length;
        reject(
          new Error(`expected ${count} open watches matching ${JSON.stringify(matcher)}, found ${found}`),
        );
      }, timeoutMs);
      this.openedListeners.add(check);
      check();
    });
  }

  dropAll(): void {
    for (const watch of [...this.watches]) watch.drop();
  }
}

export interface OpenWatchInfo {
  path: string;
  resourceVersion: string | undefined;
  allowBookmarks: boolean;
  drop(): void;
  endCleanly(): void;
}
