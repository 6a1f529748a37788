import { randomBytes } from 'node:crypto';
import type { JsonObject, JsonValue } from './json';

// ServiceAccount tokens and the TokenReview API (`POST /apis/authentication.k8s.io/v1/tokenreviews`)
// of the test API server: tokens are issued for a ServiceAccount and audiences with an expiry, shaped
// as JWTs (header.claims.signature) so a reader can find `exp`, and reviewed as the real server does
// (authenticated only for a known, unexpired token whose audiences meet the requested ones).

export const DEFAULT_API_AUDIENCE = 'https://kubernetes.default.svc';

interface IssuedToken {
  username: string;
  uid: string;
  groups: string[];
  audiences: string[];
  expiresAtMs: number;
}

/** A user's token as an OIDC or static-token authenticator would know it (no ServiceAccount). */
export interface UserTokenRequest {
  username: string;
  groups?: string[];
  uid?: string;
  expirationSeconds?: number;
}

export interface TokenRequest {
  namespace: string;
  serviceAccount: string;
  audiences?: string[];
  expirationSeconds?: number;
}

export class TokenAuthority {
  private readonly tokens = new Map<string, IssuedToken>();
  /** Every review the server answered, for tests that count them (caching). */
  readonly reviews: Array<{ audiences: string[]; authenticated: boolean }> = [];

  constructor(private readonly clock: () => number = Date.now) {}

  issue(request: TokenRequest): string {
    const expiresAtMs = this.clock() + (request.expirationSeconds ?? 3600) * 1000;
    const username = `system:serviceaccount:${request.namespace}:${request.serviceAccount}`;
    const audiences = request.audiences ?? [DEFAULT_API_AUDIENCE];
    const groups = [
      'system:serviceaccounts',
      `system:serviceaccounts:${request.namespace}`,
      'system:authenticated',
    ];
    return this.remember({ username, uid: 'test-uid', groups, audiences, expiresAtMs });
  }

  /** A token of a (non-ServiceAccount) user for the API server's own audience, e.g. what kubectl holds. */
  issueUserToken(request: UserTokenRequest): string {
    return this.remember({
      username: request.username,
      uid: request.uid ?? `uid-${request.username}`,
      groups: [...(request.groups ?? []), 'system:authenticated'],
      audiences: [DEFAULT_API_AUDIENCE],
      expiresAtMs: this.clock() + (request.expirationSeconds ?? 3600) * 1000,
    });
  }

  private remember(issued: IssuedToken): string {
    const { username, audiences, expiresAtMs } = issued;
    const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const token = [
      encode({ alg: 'RS256', kid: 'test' }),
      encode({ aud: audiences, exp: Math.floor(expiresAtMs / 1000), sub: username }),
      randomBytes(16).toString('base64url'),
    ].join('.');
    this.tokens.set(token, issued);
    return token;
  }

  /** The TokenReview answered for a posted TokenReview body. */
  review(body: JsonObject): JsonObject {
    const spec = (typeof body.spec === 'object' && body.spec !== null ? body.spec : {}) as JsonObject;
    const token = typeof spec.token === 'string' ? spec.token : '';
    const requested = Array.isArray(spec.audiences)
      ? spec.audiences.filter((audience): audience is string => typeof audience === 'string')
      : [DEFAULT_API_AUDIENCE];
    const issued = this.tokens.get(token);
    const audiences = issued ? issued.audiences.filter((audience) => requested.includes(audience)) : [];
    const authenticated = issued !== undefined && issued.expiresAtMs > this.clock() && audiences.length > 0;
    this.reviews.push({ audiences: requested, authenticated });
    const status: JsonValue = authenticated
      ? {
          authenticated: true,
          user: { username: issued.username, uid: issued.uid, groups: issued.groups },
          audiences,
        }
      : {
          authenticated: false,
          error: issued ? 'token expired or audience mismatch' : 'invalid bearer token',
        };
    return {
      kind: 'TokenReview',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { creationTimestamp: null },
      spec: { token, audiences: requested },
      status,
    };
  }
}
