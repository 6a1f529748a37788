// Which callers' bearer tokens are worth a TokenReview (issue 32, row 8): anyone may send any string,
// and each distinct one cost an outbound review. A token is asked about only when one of the API
// server's usual authenticators could accept it (docs/decisions.md "TokenReviews only for tokens
// that can be valid"):
// - a JWT whose header and claims parse and that has not expired by its own `exp`: ServiceAccount
//   tokens (legacy and projected) and OIDC ID tokens (kubectl's oidc login, Dex, Azure AD, ...);
// - a bootstrap token (`[a-z0-9]{6}.[a-z0-9]{16}`, the API server's own format);
// - the token formats of the two managed clusters whose kubectl credentials are webhook tokens:
//   EKS (`k8s-aws-v1.` and a base64url presigned URL) and GKE (`ya29.` OAuth access tokens).
// Anything else (a static token file's free-form tokens, other webhook authenticators) is answered
// at the controller's detail level without asking: RBAC-following levels fail closed, never open.

const MAX_TOKEN_LENGTH = 8192;
const BASE64URL_SEGMENT = /^[A-Za-z0-9_-]+={0,2}$/;
const BOOTSTRAP_TOKEN = /^[a-z0-9]{6}\.[a-z0-9]{16}$/;
const EKS_TOKEN = /^k8s-aws-v1\.[A-Za-z0-9_-]{16,}={0,2}$/;
const GKE_ACCESS_TOKEN = /^ya29\.[A-Za-z0-9._-]{16,}$/;

function jsonObjectOf(segment: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** A JWT by its shape and its own unverified header and claims, not expired at `now` (ms). */
function isUnexpiredJwt(token: string, now: number): boolean {
  const segments = token.split('.');
  if (segments.length !== 3 || !segments.every((segment) => BASE64URL_SEGMENT.test(segment))) return false;
  const header = jsonObjectOf(segments[0]);
  const claims = jsonObjectOf(segments[1]);
  if (!header || typeof header.alg !== 'string' || header.alg === 'none' || !claims) return false;
  return typeof claims.exp !== 'number' || claims.exp * 1000 > now;
}

/** Whether an authenticator of the API server could accept the token; only then is it reviewed. */
export function couldBeValidToken(token: string, now: number): boolean {
  if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) return false;
  return (
    isUnexpiredJwt(token, now) ||
    BOOTSTRAP_TOKEN.test(token) ||
    EKS_TOKEN.test(token) ||
    GKE_ACCESS_TOKEN.test(token)
  );
}
