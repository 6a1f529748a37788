import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { RequestHandler, Response } from 'express';
import type { DetailLevel } from '../../model/api';
import type { Logger } from '../../logging/logger';

// Who may read the unredacted webhook API (`/api/v1/constraints`, `/api/v1/admission-check` and its
// batch `/api/v1/admission-checks`): the webhook alone (DESIGN.md 5). It sends a projected
// ServiceAccount token with the audience `forewarn-controller`; the controller asks the API server
// who it is (TokenReview) and caches the answer until the token expires, at most five minutes.
// Anyone can send tokens, so asking is bounded (issue 27): tokens whose own claims name another
// ServiceAccount or audience are refused without asking, identical tokens share one review, at most
// MAX_CONCURRENT_REVIEWS run at once, refusals are cached a minute and failures ten seconds, and
// the reviewer aborts at its deadline. Every other caller gets the same answer redacted at the
// controller's `--detail-level`, exactly as `/resources` shows it, so `forewarn check` through a
// port-forward keeps working. Nobody is ever refused. To protect another route with the same rule,
// put `apiAccessMiddleware(access)` in front of it and read the level it decided with
// `apiViewLevel(response)`; outside express, ask `access.levelFor`.

export const CONTROLLER_TOKEN_AUDIENCE = 'forewarn-controller';
export const API_AUTH_MODES = ['tokenreview', 'none'] as const;
export type ApiAuthMode = (typeof API_AUTH_MODES)[number];

/** What the API server said about a token (the subset of a TokenReview status the controller reads). */
export interface TokenReviewOutcome {
  authenticated: boolean;
  /** e.g. `system:serviceaccount:forewarn-system:forewarn-webhook`. */
  username?: string;
  /** The audiences the token is valid for, as the API server reports them. */
  audiences?: string[];
  /** The rest of the user, as a SubjectAccessReview about this caller names it (caller-identity.ts). */
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/**
 * Asks the API server about one token for the given audience, or for the API server's own audiences
 * when none is given (a caller's kubectl credentials). Injected: tests replace it.
 */
export type ReviewToken = (token: string, audience?: string) => Promise<TokenReviewOutcome>;

export interface ApiAccessOptions {
  mode: ApiAuthMode;
  /** The level every caller but the webhook gets: the controller's `--detail-level`. */
  configuredDetailLevel: DetailLevel;
  /** The webhook's ServiceAccount as `namespace/name`. */
  webhookServiceAccount: string;
  reviewToken?: ReviewToken;
  logger: Logger;
  clock?: () => number;
}

/** The longest a review is trusted, whatever the token's own expiry says. */
export const MAX_REVIEW_CACHE_MS = 5 * 60_000;
/** A token that is not the webhook's is asked about again after this long (a bounded negative cache). */
const REJECTED_CACHE_MS = 60_000;
/** A token whose review failed (timeout, API server error) is answered redacted this long without asking. */
export const FAILED_REVIEW_CACHE_MS = 10_000;
/**
 * Reviews in flight at once; a request that would start another is answered redacted at once (not
 * cached). Identical tokens share one review, and the webhook's replicas hold a token each, so the
 * webhook never needs more; a flood of distinct bogus tokens costs at most this many open requests.
 */
export const MAX_CONCURRENT_REVIEWS = 8;
const MAX_CACHED_TOKENS = 1000;
const LEVEL_KEY = 'forewarnApiViewLevel';

/** The level the access middleware decided for this request (`full` when no middleware ran). */
export function apiViewLevel(response: Response): DetailLevel {
  const level: unknown = response.locals[LEVEL_KEY];
  return level === 'summary' || level === 'detailed' ? level : 'full';
}

/** The expiry (`exp`, seconds) of a JWT, read without verifying it: the TokenReview verified it. */
export function tokenExpiryMs(token: string): number | undefined {
  const payload = token.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const claims: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    const expiry =
      typeof claims === 'object' && claims !== null ? (claims as { exp?: unknown }).exp : undefined;
    return typeof expiry === 'number' && Number.isFinite(expiry) ? expiry * 1000 : undefined;
  } catch {
    return undefined;
  }
}

/** The claims of a JWT, unverified; undefined when the token is not one. */
function unverifiedClaims(token: string): Record<string, unknown> | undefined {
  const payload = token.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const claims: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    return typeof claims === 'object' && claims !== null ? (claims as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether a token could be the webhook's at all, read from its own unverified claims: a projected
 * ServiceAccount token names its ServiceAccount (`sub`), its audiences (`aud`) and its expiry
 * (`exp`). Claims are only ever used to refuse without asking the API server, never to accept: a
 * token whose claims name someone else cannot be the webhook's, and a forged one that names the
 * webhook is still reviewed.
 */
function couldBeWebhookToken(token: string, webhookUser: string, now: number): boolean {
  const claims = unverifiedClaims(token);
  if (!claims || claims.sub !== webhookUser) return false;
  const audiences = typeof claims.aud === 'string' ? [claims.aud] : claims.aud;
  if (!Array.isArray(audiences) || !audiences.includes(CONTROLLER_TOKEN_AUDIENCE)) return false;
  return typeof claims.exp !== 'number' || claims.exp * 1000 > now;
}

export function bearerToken(request: IncomingMessage): string | undefined {
  const header = request.headers.authorization;
  const match = header === undefined ? null : /^Bearer ([A-Za-z0-9._~+/=-]{1,8192})$/.exec(header);
  return match?.[1];
}

/**
 * Decides, per request, whether the caller is the webhook. Keeps at most `MAX_CACHED_TOKENS` reviews
 * (keyed by a hash, so no token is held in memory as text) and asks once per token at a time.
 */
export class WebhookIdentityCheck {
  private readonly cache = new Map<string, { isWebhook: boolean; until: number }>();
  private readonly pending = new Map<string, Promise<boolean>>();
  private readonly webhookUser: string;
  private readonly clock: () => number;

  constructor(private readonly options: ApiAccessOptions) {
    const [namespace, name] = options.webhookServiceAccount.split('/');
    this.webhookUser = `system:serviceaccount:${namespace}:${name}`;
    this.clock = options.clock ?? Date.now;
  }

  async isWebhook(token: string | undefined): Promise<boolean> {
    if (this.options.mode === 'none') return true;
    if (token === undefined || this.options.reviewToken === undefined) return false;
    const now = this.clock();
    // Most bogus tokens never cost a TokenReview: their own claims say they are not the webhook's.
    if (!couldBeWebhookToken(token, this.webhookUser, now)) return false;
    const key = createHash('sha256').update(token).digest('hex');
    const cached = this.cache.get(key);
    if (cached && cached.until > now) return cached.isWebhook;
    const inFlight = this.pending.get(key);
    if (inFlight) return inFlight;
    if (this.pending.size >= MAX_CONCURRENT_REVIEWS) {
      this.options.logger.warn(
        { reviewsInFlight: this.pending.size },
        'too many TokenReviews in flight; answering this request redacted without asking',
      );
      return false;
    }
    const review = this.review(token, key).finally(() => this.pending.delete(key));
    this.pending.set(key, review);
    return review;
  }

  /** Reviews in flight right now (tests, metrics). */
  reviewsInFlight(): number {
    return this.pending.size;
  }

  private remember(key: string, isWebhook: boolean, until: number): void {
    if (this.cache.size >= MAX_CACHED_TOKENS) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(key, { isWebhook, until });
  }

  private async review(token: string, key: string): Promise<boolean> {
    let outcome: TokenReviewOutcome;
    try {
      outcome = await (this.options.reviewToken as ReviewToken)(token, CONTROLLER_TOKEN_AUDIENCE);
    } catch (failure) {
      // The API server could not be asked (the reviewer aborts at its deadline): redacted, and for
      // a short while the same token is not asked about again, so a hanging API server is not
      // asked once per request.
      this.options.logger.warn(
        { err: failure },
        'TokenReview failed; answering this request redacted (check the controller may create tokenreviews)',
      );
      this.remember(key, false, this.clock() + FAILED_REVIEW_CACHE_MS);
      return false;
    }
    const isWebhook =
      outcome.authenticated &&
      outcome.username === this.webhookUser &&
      (outcome.audiences === undefined || outcome.audiences.includes(CONTROLLER_TOKEN_AUDIENCE));
    const now = this.clock();
    const expiry = tokenExpiryMs(token) ?? now + MAX_REVIEW_CACHE_MS;
    const until = isWebhook
      ? Math.min(expiry, now + MAX_REVIEW_CACHE_MS)
      : Math.min(expiry, now + REJECTED_CACHE_MS);
    this.remember(key, isWebhook, until);
    return isWebhook;
  }
}

/** Decides the level each request is answered at (`full` for the webhook, the configured level otherwise). */
export interface ApiAccess {
  levelFor(request: IncomingMessage): Promise<DetailLevel>;
}

export function createApiAccess(options: ApiAccessOptions): ApiAccess {
  const identity = new WebhookIdentityCheck(options);
  return {
    levelFor: async (request) =>
      (await identity.isWebhook(bearerToken(request))) ? 'full' : options.configuredDetailLevel,
  };
}

/**
 * Express middleware: sets the level the answer is rendered at; read it with
 * `apiViewLevel(response)`. Without an `ApiAccess` (`--api-auth=none`) every caller reads `full`.
 */
export function apiAccessMiddleware(access: ApiAccess | undefined): RequestHandler {
  return (request, response, next) => {
    if (!access) return next();
    access
      .levelFor(request)
      .then((level) => {
        response.locals[LEVEL_KEY] = level;
        next();
      })
      .catch(next);
  };
}
