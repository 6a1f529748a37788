import { X509Certificate } from 'node:crypto';
import { request as httpsRequest } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { Agent } from 'undici';
import { silentLogger } from '../../services/logging/logger';
import type { BackoffPolicy } from '../../services/webhook/certs/backoff';
import { SelfSignedCertificates } from '../../services/webhook/certs/self-signed-mode';
import { createWebhookApp, WebhookHttpsServer } from '../../services/webhook/server';
import { KubernetesApiTestServer } from '../support/kubernetes-api-server';
import { errorMessage } from '../../services/model/error-message';

// Certificate rotation under load, with the webhook's own certificate manager (self-signed mode
// against the Kubernetes API test server) swapping the certificate of the running HTTPS server
// with setSecureContext. Clients act as the API server does: every new connection trusts the CA
// bundle injected into the registration at that moment. Across several rotations, no TLS handshake
// may fail and no review may go unanswered, on fresh connections and on kept-alive ones.

const NAMESPACE = 'forewarn-system';
const WEBHOOK = 'forewarn-webhook';
const FAST: BackoffPolicy = { initialDelayMs: 50, maxDelayMs: 200, factor: 2, maxAttempts: 10 };
const DAY_MS = 24 * 60 * 60 * 1000;
const ROTATIONS = 3;

const REVIEW = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: 'uid-rotation',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    namespace: 'shop',
    operation: 'CREATE',
    object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', labels: { app: 'web' } } },
  },
});

let kube: KubernetesApiTestServer;
let server: WebhookHttpsServer;
let certificates: SelfSignedCertificates | undefined;
let port: number;

beforeAll(async () => {
  kube = new KubernetesApiTestServer();
  await kube.start();
  kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
  kube.create({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: WEBHOOK },
    webhooks: [
      {
        name: 'workloads.forewarn.io',
        clientConfig: { service: { name: WEBHOOK, namespace: NAMESPACE, path: '/validate', port: 443 } },
        rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }],
        failurePolicy: 'Ignore',
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      },
    ],
  });
  const logger = silentLogger();
  server = new WebhookHttpsServer((request, response) => app(request, response), logger);
  const app = createWebhookApp({
    constraints: { query: async () => ({ ok: true, constraints: [], skippedEntries: 0 }) },
    logger,
    isReady: () => server.hasCertificate(),
  });
  port = await server.listen({ host: '127.0.0.1', port: 0 });
  certificates = await SelfSignedCertificates.start({
    caPropagationDelayMs: 20,
    kubeConfig: kube.kubeConfig(),
    namespace: NAMESPACE,
    secretName: `${WEBHOOK}-tls`,
    webhookName: WEBHOOK,
    serviceName: WEBHOOK,
    extraSans: ['127.0.0.1'],
    rotationCheckIntervalMs: 3_600_000,
    // Longer than the certificate's validity: every check finds it due and rotates.
    renewBeforeMs: 400 * DAY_MS,
    target: server,
    logger,
    injectionBackoff: FAST,
    startupBackoff: FAST,
    watchRestartBackoff: FAST,
  });
  await certificates.initialInjection;
}, 30_000);

afterAll(async () => {
  await certificates?.stop();
  await server?.close(1_000);
  await kube?.stop();
});

/** The CA bundle the API server would use right now: the one injected into the registration. */
function injectedCaBundle(): string {
  const registration = kube.get(
    'admissionregistration.k8s.io/v1',
    'ValidatingWebhookConfiguration',
    undefined,
    WEBHOOK,
  );
  const webhooks = (registration?.webhooks ?? []) as Array<{ clientConfig: { caBundle?: string } }>;
  return Buffer.from(webhooks[0]?.clientConfig.caBundle ?? '', 'base64').toString('utf8');
}

interface Attempt {
  fingerprint?: string;
  failure?: string;
}

/** A review on a fresh connection: a full handshake against the currently served certificate. */
function reviewOnFreshConnection(): Promise<Attempt> {
  return new Promise((resolve) => {
    const request = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        path: '/validate',
        method: 'POST',
        ca: injectedCaBundle(),
        agent: false,
        headers: { 'content-type': 'application/json' },
      },
      (response) => {
        const fingerprint = (response.socket as TLSSocket).getPeerCertificate().fingerprint256;
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          const allowed = response.statusCode === 200 && JSON.parse(text).response?.allowed === true;
          resolve(
            allowed ? { fingerprint } : { failure: `HTTP ${response.statusCode}: ${text.slice(0, 100)}` },
          );
        });
      },
    );
    request.on('error', (error) =>
      resolve({ failure: `${(error as NodeJS.ErrnoException).code}: ${error.message}` }),
    );
    request.end(REVIEW);
  });
}

/** Kept-alive connections, pooled per trusted bundle as a client that reloads its trust would. */
const keptAliveClients = new Map<string, Agent>();

async function reviewOnKeptAliveConnection(): Promise<Attempt> {
  const bundle = injectedCaBundle();
  let client = keptAliveClients.get(bundle);
  if (!client) {
    client = new Agent({ connect: { ca: bundle }, connections: 4, keepAliveTimeout: 60_000 });
    keptAliveClients.set(bundle, client);
  }
  try {
    const response = await client.request({
      origin: `https://127.0.0.1:${port}`,
      path: '/validate',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: REVIEW,
    });
    const answer = (await response.body.json()) as { response?: { allowed?: unknown } };
    return response.statusCode === 200 && answer.response?.allowed === true
      ? {}
      : { failure: `HTTP ${response.statusCode}` };
  } catch (error) {
    return { failure: `kept-alive: ${errorMessage(error)}` };
  }
}

describe('certificate rotation under load', () => {
  it(`rotates ${ROTATIONS} times while clients connect continuously, with no failed handshake`, async () => {
    // Before any rotation: the registration trusts one CA and a fresh connection is served.
    expect(new X509Certificate(injectedCaBundle()).ca).toBe(true);
    expect((await reviewOnFreshConnection()).failure).toBeUndefined();

    const attempts: Attempt[] = [];
    let loading = true;
    const freshCaller = async () => {
      while (loading) attempts.push(await reviewOnFreshConnection());
    };
    const keptAliveCaller = async () => {
      while (loading) attempts.push(await reviewOnKeptAliveConnection());
    };
    const callers = [
      ...Array.from({ length: 6 }, freshCaller),
      ...Array.from({ length: 4 }, keptAliveCaller),
    ];
    const actions: string[] = [];
    for (let rotation = 0; rotation < ROTATIONS; rotation++) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const outcome = await certificates!.checkNow();
      actions.push(outcome.action);
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    loading = false;
    await Promise.all(callers);
    await Promise.all([...keptAliveClients.values()].map((client) => client.close()));

    expect(actions).toEqual(Array.from({ length: ROTATIONS }, () => 'rotated'));
    const failures = attempts
      .filter((attempt) => attempt.failure !== undefined)
      .map((attempt) => attempt.failure);
    expect(failures).toEqual([]);
    // Every rotation was seen by fresh connections: the initial certificate plus one per rotation.
    const fingerprints = new Set(attempts.map((attempt) => attempt.fingerprint).filter(Boolean));
    expect(fingerprints.size).toBe(ROTATIONS + 1);
    console.log(
      `rotation under load: ${attempts.length} reviews, ${fingerprints.size} certificates served, ` +
        `${keptAliveClients.size} trust bundles used by kept-alive clients, 0 failures`,
    );
  }, 60_000);
});
