import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import type { ReviewToken } from './api-auth';

// The TokenReview call of `--api-auth=tokenreview`, through the controller's own kubeconfig (its
// ServiceAccount needs `create` on `authentication.k8s.io/tokenreviews`, which the component grants).
// A plain Node request rather than the generated client: a review abandoned at its deadline is
// aborted, which destroys its socket (the generated client's promise cannot be cancelled, so every
// abandoned review kept a socket open against a hanging API server: 75 → 375 in issue 27). Its own
// agent caps the sockets reviews may hold at the number of reviews api-auth.ts lets run at once.

/** A review that takes longer is aborted: the request is answered redacted instead of waiting. */
export const REVIEW_TIMEOUT_MS = 3000;
const TOKEN_REVIEW_PATH = '/apis/authentication.k8s.io/v1/tokenreviews';
/** A TokenReview answer is a few hundred bytes; anything far larger is not one. */
const MAX_ANSWER_BYTES = 64 * 1024;

export interface TokenReviewerOptions {
  timeoutMs?: number;
  /** Sockets kept for reviews (api-auth.ts runs at most this many reviews at once). */
  maxSockets?: number;
}

interface ReviewStatus {
  authenticated?: unknown;
  user?: { username?: unknown };
  audiences?: unknown;
}

function readAnswer(response: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_ANSWER_BYTES) response.destroy(new Error('TokenReview answer too large'));
      else chunks.push(chunk);
    });
    response.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    response.once('error', reject);
    response.once('aborted', () => reject(new Error('TokenReview answer cut short')));
  });
}

export function kubernetesTokenReviewer(
  kubeConfig: KubeConfig,
  options: TokenReviewerOptions = {},
): ReviewToken {
  const timeoutMs = options.timeoutMs ?? REVIEW_TIMEOUT_MS;
  const server = kubeConfig.getCurrentCluster()?.server;
  if (!server) throw new Error('the kubeconfig names no cluster server to send TokenReviews to');
  const url = new URL(TOKEN_REVIEW_PATH, server.endsWith('/') ? server : `${server}/`);
  const secure = url.protocol === 'https:';
  const agentOptions = { keepAlive: true, maxSockets: options.maxSockets ?? 4 };
  const agent = secure ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);
  const send = secure ? httpsRequest : httpRequest;

  return async (token, audience) => {
    const body = JSON.stringify({
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token, audiences: [audience] },
    });
    // Credentials and CA as the kubeconfig says (read again each time: projected tokens rotate).
    const requestOptions: RequestOptions = {};
    await kubeConfig.applyToHTTPSOptions(requestOptions);
    const signal = AbortSignal.timeout(timeoutMs);
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const outgoing = send(url, {
        ...requestOptions,
        agent,
        method: 'POST',
        signal,
        headers: {
          ...requestOptions.headers,
          'content-type': 'application/json',
          accept: 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      });
      outgoing.once('response', (response) => {
        readAnswer(response).then((text) => resolve({ status: response.statusCode ?? 0, text }), reject);
      });
      outgoing.once('error', (failure) =>
        reject(signal.aborted ? new Error(`TokenReview took longer than ${timeoutMs} ms; aborted`) : failure),
      );
      outgoing.end(body);
    });
    if (answer.status !== 201 && answer.status !== 200)
      throw new Error(`TokenReview answered HTTP ${answer.status}`);
    const review = JSON.parse(answer.text) as { status?: ReviewStatus };
    const status = review.status ?? {};
    return {
      authenticated: status.authenticated === true,
      username: typeof status.user?.username === 'string' ? status.user.username : undefined,
      audiences: Array.isArray(status.audiences)
        ? status.audiences.filter((entry): entry is string => typeof entry === 'string')
        : undefined,
    };
  };
}
