import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

// One POST of a review object (TokenReview, SubjectAccessReview) to the API server through the
// controller's own kubeconfig. A plain Node request rather than the generated client: a review
// abandoned at its deadline is aborted, which destroys its socket (the generated client's promise
// cannot be cancelled, so every abandoned review kept a socket open against a hanging API server:
// 75 → 375 in issue 27). Its own agent caps the sockets reviews may hold.

/** A review answer is a few hundred bytes; anything far larger is not one. */
const MAX_ANSWER_BYTES = 64 * 1024;

export interface ReviewPosterOptions {
  /** e.g. `/apis/authentication.k8s.io/v1/tokenreviews`. */
  path: string;
  /** What is posted, for error messages (`TokenReview`). */
  kind: string;
  timeoutMs: number;
  maxSockets: number;
}

/** Posts one review body; resolves to the parsed answer of a 200/201, rejects on anything else. */
export type PostReview = (body: object) => Promise<unknown>;

function readAnswer(response: IncomingMessage, kind: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_ANSWER_BYTES) response.destroy(new Error(`${kind} answer too large`));
      else chunks.push(chunk);
    });
    response.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    response.once('error', reject);
    response.once('aborted', () => reject(new Error(`${kind} answer cut short`)));
  });
}

export function apiServerReviewPoster(kubeConfig: KubeConfig, options: ReviewPosterOptions): PostReview {
  const { kind, timeoutMs } = options;
  const server = kubeConfig.getCurrentCluster()?.server;
  if (!server) throw new Error(`the kubeconfig names no cluster server to send ${kind}s to`);
  const url = new URL(options.path, server.endsWith('/') ? server : `${server}/`);
  const secure = url.protocol === 'https:';
  const agentOptions = { keepAlive: true, maxSockets: options.maxSockets };
  const agent = secure ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);
  const send = secure ? httpsRequest : httpRequest;

  return async (review) => {
    const body = JSON.stringify(review);
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
        readAnswer(response, kind).then(
          (text) => resolve({ status: response.statusCode ?? 0, text }),
          reject,
        );
      });
      outgoing.once('error', (failure) =>
        reject(signal.aborted ? new Error(`${kind} took longer than ${timeoutMs} ms; aborted`) : failure),
      );
      outgoing.end(body);
    });
    if (answer.status !== 201 && answer.status !== 200)
      throw new Error(`${kind} answered HTTP ${answer.status}`);
    return JSON.parse(answer.text) as unknown;
  };
}
