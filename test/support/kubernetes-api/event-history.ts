import { ApiStatusError } from './api-status';
import type { JsonObject } from './json';

// The bounded window of change events the test server's watches replay from (etcd's history): a
// watch from a revision older than the window gets 410 Expired, exactly the case client-go and
// client-node must recover from by relisting.

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoredEvent {
  type: ChangeType;
  resourceKey: string;
  /** The new state; for DELETED the last state, stamped with the deletion's resourceVersion. */
  object: JsonObject;
  /** The state before a MODIFIED, so watches with selectors can tell objects entering or leaving. */
  previous: JsonObject | undefined;
  resourceVersion: number;
}

export class EventHistory {
  private events: StoredEvent[] = [];

  /** Watches may start from `compactedThrough` or later; older ones get 410 Expired. */
  constructor(
    private limit: number,
    private compactedThrough: number,
  ) {}

  setLimit(limit: number): void {
    this.limit = limit;
    this.trim();
  }

  /** Forgets every past event, like an etcd compaction at `revision`: only later watches resume. */
  expire(revision: number): void {
    this.events = [];
    this.compactedThrough = revision;
  }

  record(event: StoredEvent): void {
    this.events.push(event);
    this.trim();
  }

  /** Events after `resourceVersion`, oldest first; 410 Expired when the window no longer has them. */
  since(resourceVersion: number): StoredEvent[] {
    this.assertNotCompacted(
      resourceVersion,
      `too old resource version: ${resourceVersion} (${this.compactedThrough})`,
    );
    return this.events.filter((event) => event.resourceVersion > resourceVersion);
  }

  /** 410 Expired when `resourceVersion` is older than the window (a continue token's, a watch's). */
  assertNotCompacted(resourceVersion: number, message: string): void {
    if (resourceVersion < this.compactedThrough) throw new ApiStatusError(410, message, 'Expired');
  }

  private trim(): void {
    const excess = this.events.length - this.limit;
    if (excess <= 0) return;
    const removed = this.events.splice(0, excess);
    this.compactedThrough = removed[removed.length - 1].resourceVersion;
  }
}
