import { Agent, request as httpsRequest } from 'node:https';
import type { Logger } from '../logging/logger';
import { silentLogger } from '../logging/logger';
import type { ServingPair } from './certs/certificate-check';
import type { ConstraintSource } from './controller-client';
import { createWebhookApp, WebhookHttpsServer } from './server';

// Why the webhook reviews synthetic objects through itself once it can serve (issue 33). V8 runs a
// function in its interpreter until it has run often enough, then compiles it; one review crosses
// Node's TLS and HTTP server, the review parsing, the controller client and the controller's HTTP
// server, about a thousand functions in the two processes, which reached optimised code only after
// some 2,500 reviews. A cluster admits a few objects a minute, so without this Forewarn paid the
// cold path on every admission for hours: through the real API server at one client, 2.5-2.9 ms of
// CPU per admission for the pair cold against 0.9-1.0 ms warm (docs/benchmarks.md, "One client
// through the API server"). The reviews go through a listener and an app of their own (the same
// code, no metrics, no logs) on loopback, one at a time, to the real controller; the controller
// warms its verdict engines on its own namespaces (controller/http/admission-warm-up.ts).

export interface WebhookWarmUpOptions {
  /** The pair the real listener serves; the warm-up listener serves the same. */
  servingPair: () => ServingPair | null;
  /** The controller client the real app queries. */
  constraints: ConstraintSource;
  logger: Logger;
  /** Reviews at most. */
  reviews?: number;
  /** Wall time at most, in ms. */
  budgetMs?: number;
  now?: () => number;
}

export type WebhookWarmUpOutcome =
  { warmed: true; reviews: number; wallMs: number } | { warmed: false; reason: string };

export const WEBHOOK_WARM_UP_REVIEWS = 2500;
export const WEBHOOK_WARM_UP_BUDGET_MS = 20_000;
const NAMESPACE = 'default';

/** An AdmissionReview as the API server sends it for a Deployment created by a user. */
export function warmUpReview(sequence: number): string {
  const name = `forewarn-warm-up-${sequence}`;
  const labels = { app: name, 'app.kubernetes.io/name': 'warm-up' };
  const template = {
    metadata: { labels },
    spec: {
      containers: [
        {
          name: 'app',
          image: `registry.example.com/warm-up/app:1.${sequence % 7}`,
          ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
          resources: { requests: { cpu: '100m', memory: '128Mi' } },
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          imagePullPolicy: 'IfNotPresent',
        },
      ],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      securityContext: {},
      schedulerName: 'default-scheduler',
    },
  };
  // As the API server hands a created object to webhooks: its own fields and defaults filled in.
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name,
      namespace: NAMESPACE,
      uid: `00000000-0000-4000-9000-${sequence.toString(16).padStart(12, '0')}`,
      generation: 1,
      creationTimestamp: '2026-01-01T00:00:00Z',
      labels,
      managedFields: [
        {
          manager: 'kubectl-client-side-apply',
          operation: 'Update',
          apiVersion: 'apps/v1',
          time: '2026-01-01T00:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:metadata': { 'f:labels': {} }, 'f:spec': { 'f:replicas': {} } },
        },
      ],
    },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } },
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
    },
    status: {},
  };
  const group = { group: 'apps', version: 'v1' };
  // Field order as the API server writes it, so the warm-up takes the forwarded path as its reviews do.
  return JSON.stringify({
    kind: 'AdmissionReview',
    apiVersion: 'admission.k8s.io/v1',
    request: {
      uid: `00000000-0000-4000-8000-${sequence.toString(16).padStart(12, '0')}`,
      kind: { ...group, kind: 'Deployment' },
      resource: { ...group, resource: 'deployments' },
      requestKind: { ...group, kind: 'Deployment' },
      requestResource: { ...group, resource: 'deployments' },
      name,
      namespace: NAMESPACE,
      operation: 'CREATE',
      userInfo: { username: 'forewarn-warm-up', groups: ['system:authenticated'] },
      object: deployment,
      oldObject: null,
      dryRun: true,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
    },
  });
}

/** Posts one review and reads the whole answer; rejects on a transport error or a non-200. */
function postReview(agent: Agent, port: number, body: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const outgoing = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        path: '/validate',
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        response.resume();
        response.on('end', () =>
          response.statusCode === 200 ? resolve() : reject(new Error(`status ${response.statusCode}`)),
        );
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/**
 * Sends up to `reviews` synthetic reviews, one at a time, through a loopback listener of its own,
 * until the budget is spent. Not warmed (and nothing more sent) when there is no certificate yet or
 * the controller does not answer the first query: the caller tries again later.
 */
export async function warmUpWebhook(options: WebhookWarmUpOptions): Promise<WebhookWarmUpOutcome> {
  const pair = options.servingPair();
  if (!pair) return { warmed: false, reason: 'no serving certificate yet' };
  const now = options.now ?? (() => performance.now());
  const total = options.reviews ?? WEBHOOK_WARM_UP_REVIEWS;
  const budgetMs = options.budgetMs ?? WEBHOOK_WARM_UP_BUDGET_MS;
  let failedQuery: string | undefined;
  const constraints: ConstraintSource = {
    query: async (query) => {
      const result = await options.constraints.query(query);
      if (!result.ok) failedQuery ??= `${result.reason}: ${result.detail}`;
      return result;
    },
  };
  const quiet = silentLogger();
  const server = new WebhookHttpsServer(
    createWebhookApp({ constraints, logger: quiet, isReady: () => true }),
    quiet,
  );
  server.setCertificate(pair);
  // The listener is this process's own, on loopback, serving the pair it was just given: there is
  // no one to authenticate, and the bytes sent are synthetic.
  const agent = new Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false });
  const started = now();
  let sent = 0;
  try {
    const port = await server.listen({ host: '127.0.0.1', port: 0 });
    while (sent < total && now() - started < budgetMs) {
      await postReview(agent, port, warmUpReview(sent));
      sent++;
      if (failedQuery !== undefined)
        return { warmed: false, reason: `the controller did not answer: ${failedQuery}` };
    }
    return { warmed: true, reviews: sent, wallMs: Math.round(now() - started) };
  } catch (error) {
    return { warmed: false, reason: (error as Error).message };
  } finally {
    agent.destroy();
    await server.close(0);
  }
}

/**
 * Warms up once the webhook can serve and the controller answers: tries now, then every
 * `retryMs` up to `attempts` times, and logs the outcome. Returns a function that stops the retries.
 */
export function scheduleWebhookWarmUp(
  options: WebhookWarmUpOptions,
  { retryMs = 5_000, attempts = 24 } = {},
): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const attempt = (left: number) => {
    void warmUpWebhook(options).then((outcome) => {
      if (stopped) return;
      if (outcome.warmed) {
        options.logger.info({ event: 'admission_warm_up', ...outcome }, 'admission path warmed up');
        return;
      }
      if (left <= 1) {
        options.logger.info(
          { event: 'admission_warm_up', ...outcome },
          'admission path not warmed up; the first reviews will cost more CPU',
        );
        return;
      }
      timer = setTimeout(() => attempt(left - 1), retryMs);
      timer.unref();
    });
  };
  attempt(attempts);
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}
