import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Constraint } from '../../model/constraint';
import { constraintReadAccesses, readAccessKey, type ObjectReadAccess } from '../../model/source-access';
import type { Logger } from '../../logging/logger';
import { bearerToken, MAX_REVIEW_CACHE_MS, tokenExpiryMs, type ReviewToken } from './api-auth';
import type { CallerIdentity, ReviewAccess } from './access-review';
import { beforeDeadline, ReviewBudgetExhausted, ReviewLimiter } from './review-limiter';
import { couldBeValidToken } from './token-shapes';

// Detail levels that follow Kubernetes RBAC (issue 24). A caller that sends a bearer token (its
// kubectl credentials, or a ServiceAccount token) is authenticated by a TokenReview against the API
// server's own audiences; then, for each constraint it is about to be shown, the controller asks a
// SubjectAccessReview whether that caller may `get` the constraint's source object (and every object
// the adapter read to describe it, `relatedSources`). Where it may, the
// views render that constraint at `full` (capped by what the caller asked for); elsewhere at the
// controller's level. Everything fails closed: no token, an unknown token, a review that fails,
// times out or finds the budget spent means the controller's level.
//
// Cost is bounded four ways: answers are cached per caller and object for `ttlMs` (so a revoked
// RoleBinding stops counting within it) in at most `maxEntries` entries; one review per collection
// (`get` with no name, which RBAC allows only when every name is allowed) usually answers for all
// objects of a kind in a namespace; a request starts at most `maxReviewsPerRequest` reviews, all its
// lookups together (issue 32: an MCP `check` of 300 Pods in 300 namespaces looks up 300 times, and
// the cap was per lookup: 609 reviews for one request); and all
// reviews share one ReviewLimiter. Every request is answered within `timeoutMs` of asking, whatever
// the API server does.

export interface CallerReadAccessOptions {
  reviewToken: ReviewToken;
  reviewAccess: ReviewAccess;
  /** How long an access review answer is trusted (the revocation delay). */
  ttlMs: number;
  /** The longest a request waits for its reviews; the reviewers abort at the same deadline. */
  timeoutMs: number;
  maxConcurrentReviews?: number;
  maxQueuedReviews?: number;
  maxCacheEntries?: number;
  maxReviewsPerRequest?: number;
  logger: Logger;
  clock?: () => number;
}

/** Which of the constraints about to be shown the request's caller may read the source of. */
export interface CallerReadAccess {
  readableConstraints(
    request: IncomingMessage,
    constraints: readonly Constraint[],
  ): Promise<ReadonlySet<Constraint>>;
  /** Reviews sent and refused so far (metrics, tests, the load figure). */
  reviewCounts(): { tokenReviews: number; accessReviews: number; refused: number };
}

const REJECTED_TOKEN_CACHE_MS = 60_000;
const FAILED_REVIEW_CACHE_MS = 10_000;
const NOTHING: ReadonlySet<Constraint> = new Set();

/** A Map bounded in entries, whose entries expire; the oldest entry leaves first when full. */
class ExpiringCache<T> {
  private readonly entries = new Map<string, { value: T; until: number }>();
  constructor(private readonly maxEntries: number) {}

  get(key: string, now: number): T | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.until > now) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  set(key: string, value: T, until: number): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { value, until });
  }

  get size(): number {
    return this.entries.size;
  }
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** One key per distinct identity: two tokens of the same user share their access answers. */
function callerKey(caller: CallerIdentity): string {
  const extra = Object.entries(caller.extra)
    .map(([key, values]) => [key, [...values].sort()] as const)
    .sort(([left], [right]) => left.localeCompare(right));
  return hash(JSON.stringify([caller.username, caller.uid ?? '', [...caller.groups].sort(), extra]));
}

function collectionOf(access: ObjectReadAccess): ObjectReadAccess {
  return { ...access, name: '' };
}

/** The cache-and-budget side of `createCallerReadAccess`; one per controller (HTTP API and MCP share it). */
class CallerReadCheck implements CallerReadAccess {
  private readonly clock: () => number;
  private readonly limiter: ReviewLimiter;
  private readonly maxReviewsPerRequest: number;
  private readonly identities: ExpiringCache<CallerIdentity | null>;
  private readonly decisions: ExpiringCache<boolean>;
  private readonly pendingIdentities = new Map<string, Promise<CallerIdentity | null>>();
  private readonly pendingDecisions = new Map<string, Promise<boolean>>();
  /** Reviews each HTTP request may still start, across all its lookups; gone with the request. */
  private readonly requestBudgets = new WeakMap<IncomingMessage, { left: number }>();
  private lastWarning = -Infinity;

  constructor(private readonly options: CallerReadAccessOptions) {
    this.clock = options.clock ?? Date.now;
    this.limiter = new ReviewLimiter({
      maxConcurrent: options.maxConcurrentReviews ?? 16,
      maxQueued: options.maxQueuedReviews ?? 512,
      clock: this.clock,
    });
    const maxEntries = options.maxCacheEntries ?? 50_000;
    this.maxReviewsPerRequest = options.maxReviewsPerRequest ?? 64;
    this.identities = new ExpiringCache(Math.min(maxEntries, 10_000));
    this.decisions = new ExpiringCache(maxEntries);
  }

  async readableConstraints(
    request: IncomingMessage,
    constraints: readonly Constraint[],
  ): Promise<ReadonlySet<Constraint>> {
    const token = bearerToken(request);
    if (token === undefined || constraints.length === 0) return NOTHING;
    // A token no authenticator of the API server could accept costs no TokenReview (token-shapes.ts).
    if (!couldBeValidToken(token, this.clock())) return NOTHING;
    const started = this.clock();
    const deadline = started + this.options.timeoutMs;
    const caller = await beforeDeadline(this.identify(token, deadline), deadline, null, started);
    if (caller === null) return NOTHING;
    const accessesOf = new Map<Constraint, string[]>();
    const unique = new Map<string, ObjectReadAccess>();
    for (const constraint of constraints) {
      const accesses = constraintReadAccesses(constraint);
      if (!accesses) continue;
      accessesOf.set(constraint, accesses.map(readAccessKey));
      for (const access of accesses) unique.set(readAccessKey(access), access);
    }
    const readable = new Set<string>();
    // Whatever is known at the deadline is used; answers still missing count as "may not read".
    const collected = this.collectReadable(
      caller,
      [...unique.values()],
      deadline,
      readable,
      this.reviewBudgetOf(request),
    );
    await beforeDeadline(collected, deadline, undefined, this.clock());
    const known = new Set(readable);
    // Readable only when every object the constraint is described from is.
    return new Set(
      constraints.filter((constraint) => {
        const keys = accessesOf.get(constraint);
        return keys !== undefined && keys.every((key) => known.has(key));
      }),
    );
  }

  private reviewBudgetOf(request: IncomingMessage): { left: number } {
    let budget = this.requestBudgets.get(request);
    if (!budget) {
      budget = { left: this.maxReviewsPerRequest };
      this.requestBudgets.set(request, budget);
    }
    return budget;
  }

  reviewCounts(): { tokenReviews: number; accessReviews: number; refused: number } {
    return {
      tokenReviews: this.limiter.sent.get('TokenReview') ?? 0,
      accessReviews: this.limiter.sent.get('SubjectAccessReview') ?? 0,
      refused: this.limiter.refused,
    };
  }

  private warn(failure: unknown, message: string): void {
    if (failure instanceof ReviewBudgetExhausted) return;
    // One line per ten seconds is enough to see an API server in trouble without flooding the log.
    if (this.clock() - this.lastWarning < FAILED_REVIEW_CACHE_MS) return;
    this.lastWarning = this.clock();
    this.options.logger.warn({ err: failure }, message);
  }

  private identify(token: string, deadline: number): Promise<CallerIdentity | null> {
    const key = hash(token);
    const cached = this.identities.get(key, this.clock());
    if (cached !== undefined) return Promise.resolve(cached);
    const inFlight = this.pendingIdentities.get(key);
    if (inFlight) return inFlight;
    const review = this.reviewIdentity(token, key, deadline).finally(() =>
      this.pendingIdentities.delete(key),
    );
    this.pendingIdentities.set(key, review);
    return review;
  }

  private async reviewIdentity(token: string, key: string, deadline: number): Promise<CallerIdentity | null> {
    try {
      const outcome = await this.limiter.run('TokenReview', deadline, () => this.options.reviewToken(token));
      const now = this.clock();
      const username = outcome.username;
      if (!outcome.authenticated || username === undefined) {
        this.identities.set(key, null, now + REJECTED_TOKEN_CACHE_MS);
        return null;
      }
      const identity: CallerIdentity = {
        username,
        groups: outcome.groups ?? [],
        extra: outcome.extra ?? {},
        ...(outcome.uid === undefined ? {} : { uid: outcome.uid }),
      };
      const expiry = tokenExpiryMs(token) ?? now + MAX_REVIEW_CACHE_MS;
      this.identities.set(key, identity, Math.min(expiry, now + MAX_REVIEW_CACHE_MS));
      return identity;
    } catch (failure) {
      if (!(failure instanceof ReviewBudgetExhausted))
        this.identities.set(key, null, this.clock() + FAILED_REVIEW_CACHE_MS);
      this.warn(failure, 'TokenReview of a caller failed; answering at the controller detail level');
      return null;
    }
  }

  /** Whether the caller may `get` the object; `budget` counts the reviews this request may still start. */
  private decide(
    caller: CallerIdentity,
    who: string,
    access: ObjectReadAccess,
    deadline: number,
    budget: { left: number },
  ): Promise<boolean> {
    const key = `${who}|${readAccessKey(access)}`;
    const cached = this.decisions.get(key, this.clock());
    if (cached !== undefined) return Promise.resolve(cached);
    const inFlight = this.pendingDecisions.get(key);
    if (inFlight) return inFlight;
    if (budget.left <= 0) return Promise.resolve(false);
    budget.left -= 1;
    const { ttlMs } = this.options;
    const review = this.limiter
      .run('SubjectAccessReview', deadline, () => this.options.reviewAccess(caller, access))
      .then(
        (allowed) => {
          this.decisions.set(key, allowed, this.clock() + ttlMs);
          return allowed;
        },
        (failure: unknown) => {
          if (!(failure instanceof ReviewBudgetExhausted))
            this.decisions.set(key, false, this.clock() + Math.min(ttlMs, FAILED_REVIEW_CACHE_MS));
          this.warn(failure, 'SubjectAccessReview failed; answering at the controller detail level');
          return false;
        },
      )
      .finally(() => this.pendingDecisions.delete(key));
    this.pendingDecisions.set(key, review);
    return review;
  }

  /** Fills `readable` with the keys of the objects the caller may read, as answers arrive. */
  private async collectReadable(
    caller: CallerIdentity,
    accesses: readonly ObjectReadAccess[],
    deadline: number,
    readable: Set<string>,
    budget: { left: number },
  ): Promise<void> {
    const who = callerKey(caller);
    const collections = new Map<string, ObjectReadAccess[]>();
    for (const access of accesses) {
      const key = readAccessKey(collectionOf(access));
      collections.set(key, [...(collections.get(key) ?? []), access]);
    }
    await Promise.all(
      [...collections.values()].map(async (members) => {
        // One review for the whole collection first: RBAC grants `get` without a name only when it
        // grants every name, so a yes answers for all of them.
        if (await this.decide(caller, who, collectionOf(members[0]), deadline, budget)) {
          for (const access of members) readable.add(readAccessKey(access));
          return;
        }
        await Promise.all(
          members.map(async (access) => {
            if (await this.decide(caller, who, access, deadline, budget)) readable.add(readAccessKey(access));
          }),
        );
      }),
    );
  }
}

export function createCallerReadAccess(options: CallerReadAccessOptions): CallerReadAccess {
  return new CallerReadCheck(options);
}
