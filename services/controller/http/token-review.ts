import { AuthenticationV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { ReviewToken } from './api-auth';

// The TokenReview call of `--api-auth=tokenreview`, through the controller's own kubeconfig (its
// ServiceAccount needs `create` on `authentication.k8s.io/tokenreviews`, which the component grants).

/** A review that takes longer is abandoned: the request is answered redacted instead of waiting. */
const REVIEW_TIMEOUT_MS = 3000;

export function kubernetesTokenReviewer(kubeConfig: KubeConfig): ReviewToken {
  const api = kubeConfig.makeApiClient(AuthenticationV1Api);
  return async (token, audience) => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(new Error(`TokenReview took longer than ${REVIEW_TIMEOUT_MS} ms`)),
        REVIEW_TIMEOUT_MS,
      );
    });
    try {
      const review = await Promise.race([
        api.createTokenReview({
          body: {
            apiVersion: 'authentication.k8s.io/v1',
            kind: 'TokenReview',
            spec: { token, audiences: [audience] },
          },
        }),
        timeout,
      ]);
      return {
        authenticated: review.status?.authenticated === true,
        username: review.status?.user?.username,
        audiences: review.status?.audiences,
      };
    } finally {
      clearTimeout(timer);
    }
  };
}
