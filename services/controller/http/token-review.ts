import type { KubeConfig } from '@kubernetes/client-node';
import { isRecord } from '../../model/kubernetes';
import type { ReviewToken } from './api-auth';
import { apiServerReviewPoster } from './api-server-review';

// The TokenReview call of `--api-auth=tokenreview`, through the controller's own kubeconfig (its
// ServiceAccount needs `create` on `authentication.k8s.io/tokenreviews`, which the component grants).
// api-server-review.ts posts it: a review abandoned at its deadline is aborted and its socket
// destroyed, and its own agent caps the sockets reviews may hold at the number of reviews
// api-auth.ts lets run at once.

/** A review that takes longer is aborted: the request is answered redacted instead of waiting. */
export const REVIEW_TIMEOUT_MS = 3000;
const TOKEN_REVIEW_PATH = '/apis/authentication.k8s.io/v1/tokenreviews';

export interface TokenReviewerOptions {
  timeoutMs?: number;
  /** Sockets kept for reviews (api-auth.ts runs at most this many reviews at once). */
  maxSockets?: number;
}

function strings(value: unknown): string[] | undefined {
  return Array.isArray(value)
    ? value.filter((entry): entry is string => typeof entry === 'string')
    : undefined;
}

/** `user.extra` of a TokenReview: a map of string lists; anything else is dropped. */
function extraOf(value: unknown): Record<string, string[]> {
  if (!isRecord(value)) return {};
  const extra: Record<string, string[]> = {};
  for (const [key, entries] of Object.entries(value)) {
    const list = strings(entries);
    if (list) extra[key] = list;
  }
  return extra;
}

export function kubernetesTokenReviewer(
  kubeConfig: KubeConfig,
  options: TokenReviewerOptions = {},
): ReviewToken {
  const post = apiServerReviewPoster(kubeConfig, {
    path: TOKEN_REVIEW_PATH,
    kind: 'TokenReview',
    timeoutMs: options.timeoutMs ?? REVIEW_TIMEOUT_MS,
    maxSockets: options.maxSockets ?? 4,
  });
  return async (token, audience) => {
    // Without audiences the API server checks the token against its own (a caller's kubectl token).
    const spec = audience === undefined ? { token } : { token, audiences: [audience] };
    const review = await post({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec });
    const status = isRecord(review) && isRecord(review.status) ? review.status : {};
    const user = isRecord(status.user) ? status.user : {};
    return {
      authenticated: status.authenticated === true,
      username: typeof user.username === 'string' ? user.username : undefined,
      uid: typeof user.uid === 'string' ? user.uid : undefined,
      groups: strings(user.groups),
      extra: extraOf(user.extra),
      audiences: strings(status.audiences),
    };
  };
}
