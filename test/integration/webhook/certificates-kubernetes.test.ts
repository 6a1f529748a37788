import { X509Certificate } from 'node:crypto';
import { KubernetesApiTestServer, type ApiObject } from '../../support/kubernetes-api-server';
import { silentLogger } from '../../../services/logging/logger';
import type { BackoffPolicy } from '../../../services/webhook/certs/backoff';
import { splitPemCertificates } from '../../../services/webhook/certs/certificate-check';
import { bundleFromSecret, secretData } from '../../../services/webhook/certs/secret-store';
import {
  SelfSignedCertificates,
  type SelfSignedModeOptions,
} from '../../../services/webhook/certs/self-signed-mode';
import {
  generateSelfSignedBundle,
  type CertificateBundle,
} from '../../../services/webhook/certs/self-signed';
import { capturingLogger, startWebhook, tlsRequest, type RunningWebhook } from './harness';
import { waitForCertificates } from '../../support/kubernetes-api/wait-until';

// Self-signed mode against the protocol-faithful test API server: the Secret, the CA bundle in the
// registration, rotation seen by a live TLS client, and several replicas sharing one certificate.

const NAMESPACE = 'forewarn-system';
const SECRET = 'forewarn-webhook-tls';
const WEBHOOK = 'forewarn-webhook';
const DAY = 24 * 60 * 60 * 1000;
const IDENTITY = { serviceName: 'forewarn-webhook', namespace: NAMESPACE, extraSans: ['127.0.0.1'] };

const FAST: BackoffPolicy = { initialDelayMs: 50, maxDelayMs: 200, factor: 2, maxAttempts: 10 };

const registration = {
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingWebhookConfiguration',
  metadata: { name: WEBHOOK },
  webhooks: ['workloads', 'config'].map((name) => ({
    name: `${name}.forewarn.io`,
    clientConfig: {
      service: { name: 'forewarn-webhook', namespace: NAMESPACE, path: '/validate', port: 443 },
    },
    rules: [
      {
        apiGroups: ['apps'],
        apiVersions: ['v1'],
        operations: ['CREATE', 'UPDATE'],
        resources: ['deployments'],
      },
    ],
    failurePolicy: 'Ignore',
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    timeoutSeconds: 5,
  })),
};

interface Replica {
  webhook: RunningWebhook;
  certificates: SelfSignedCertificates;
}

let kube: KubernetesApiTestServer;
const replicas: Replica[] = [];

beforeEach(async () => {
  kube = new KubernetesApiTestServer();
  await kube.start();
  kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
});

afterEach(async () => {
  for (const replica of replicas.splice(0)) {
    await replica.certificates.stop();
    await replica.webhook.close();
  }
  await kube.stop();
});

async function startReplica(overrides: Partial<SelfSignedModeOptions> = {}): Promise<Replica> {
  const webhook = await startWebhook({
    constraints: { query: async () => ({ ok: true, constraints: [], skippedEntries: 0 }) },
  });
  const certificates = await SelfSignedCertificates.start({
    caPropagationDelayMs: 20,
    kubeConfig: kube.kubeConfig(),
    secretName: SECRET,
    webhookName: WEBHOOK,
    ...IDENTITY,
    rotationCheckIntervalMs: 3_600_000,
    target: webhook.server,
    logger: silentLogger(),
    injectionBackoff: FAST,
    startupBackoff: FAST,
    watchRestartBackoff: FAST,
    ...overrides,
  });
  const replica = { webhook, certificates };
  replicas.push(replica);
  return replica;
}

function storedSecret(): ApiObject {
  const secret = kube.get('v1', 'Secret', NAMESPACE, SECRET);
  if (!secret) throw new Error('the TLS Secret does not exist');
  return secret;
}

function storedBundle(): CertificateBundle {
  const bundle = bundleFromSecret({ data: storedSecret().data as Record<string, string> });
  if (!bundle) throw new Error('the TLS Secret holds no bundle');
  return bundle;
}

function injectedBundles(): string[] {
  const configuration = kube.get(
    'admissionregistration.k8s.io/v1',
    'ValidatingWebhookConfiguration',
    undefined,
    WEBHOOK,
  );
  const webhooks = (configuration?.webhooks ?? []) as Array<{ clientConfig: { caBundle?: string } }>;
  return webhooks.map((webhook) =>
    Buffer.from(webhook.clientConfig.caBundle ?? '', 'base64').toString('utf8'),
  );
}

function fingerprintOf(certPem: string): string {
  return new X509Certificate(certPem).fingerprint256;
}

/** The certificate a fresh TLS connection sees, verified against `ca` only. */
async function servedFingerprint(replica: Replica, ca: string): Promise<string> {
  const response = await tlsRequest({ port: replica.webhook.port, ca, path: '/readyz', method: 'GET' });
  expect(response.status).toBe(200);
  return response.fingerprint;
}

function secretWrites(): Array<{ method: string; status?: number }> {
  return kube.requests
    .filter(
      (request) =>
        request.path.includes('/secrets') && (request.method === 'POST' || request.method === 'PUT'),
    )
    .map((request) => ({ method: request.method, status: request.status }));
}

describe('self-signed certificates against the Kubernetes API', () => {
  it('creates the TLS Secret on first start, serves it and injects the CA into every webhook', async () => {
    kube.create(registration);
    const replica = await startReplica();
    expect(await replica.certificates.initialInjection).toEqual({
      status: 'injected',
      attempts: 1,
      webhooks: 2,
    });

    const secret = storedSecret();
    expect(secret.type).toBe('kubernetes.io/tls');
    expect(Object.keys(secret.data as object).sort()).toEqual(['ca.crt', 'tls.crt', 'tls.key']);
    expect(secret.metadata.labels).toMatchObject({ 'app.kubernetes.io/managed-by': 'forewarn-webhook' });
    const bundle = storedBundle();
    expect(new X509Certificate(bundle.certPem).subjectAltName).toContain(
      'DNS:forewarn-webhook.forewarn-system.svc',
    );
    expect(injectedBundles()).toEqual([bundle.caPem, bundle.caPem]);
    expect(await servedFingerprint(replica, bundle.caPem)).toBe(fingerprintOf(bundle.certPem));
    expect(secretWrites()).toEqual([{ method: 'POST', status: 201 }]);
  });

  it('injects into a registration that appears 1.5 s after the pod, within the retry budget', async () => {
    const replica = await startReplica({
      injectionBackoff: { initialDelayMs: 200, maxDelayMs: 800, factor: 2, maxAttempts: 10 },
    });
    const created = new Promise<void>((resolve) =>
      setTimeout(() => {
        kube.create(registration);
        resolve();
      }, 1_500),
    );
    const outcome = await replica.certificates.initialInjection;
    await created;
    // Tries at about 0, 0.2, 0.6 and 1.4 s find nothing; a later one (how many depends on load)
    // finds the registration, well inside the 10 tries.
    expect(outcome).toMatchObject({ status: 'injected', webhooks: 2 });
    expect(outcome.attempts).toBeGreaterThanOrEqual(2);
    expect(outcome.attempts).toBeLessThanOrEqual(10);
    const reads = kube.requests.filter((request) =>
      request.path.endsWith(`/validatingwebhookconfigurations/${WEBHOOK}`),
    );
    expect(reads.map((request) => request.status)).toEqual([
      ...Array(outcome.attempts - 1).fill(404),
      200,
      200,
    ]);
    expect(injectedBundles()).toEqual([storedBundle().caPem, storedBundle().caPem]);
  });

  it('gives up after exactly 10 attempts when the registration never appears', async () => {
    const replica = await startReplica({
      injectionBackoff: { initialDelayMs: 5, maxDelayMs: 20, factor: 2, maxAttempts: 10 },
    });
    const outcome = await replica.certificates.initialInjection;
    expect(outcome).toMatchObject({
      status: 'gave_up',
      attempts: 10,
      lastError: expect.stringContaining('404'),
    });
    const reads = kube.requests.filter((request) =>
      request.path.includes(`/validatingwebhookconfigurations/${WEBHOOK}`),
    );
    expect(reads).toHaveLength(10);
  });

  it('reuses a valid Secret written at deploy time, without writing to it', async () => {
    const deployed = await generateSelfSignedBundle({ ...IDENTITY, now: new Date() });
    const before = kube.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: SECRET, namespace: NAMESPACE, labels: { 'app.kubernetes.io/managed-by': 'pulumi' } },
      type: 'kubernetes.io/tls',
      data: secretData(deployed),
    });
    kube.create(registration);
    const replica = await startReplica();
    await replica.certificates.initialInjection;

    expect(await servedFingerprint(replica, deployed.caPem)).toBe(fingerprintOf(deployed.certPem));
    expect(storedSecret().metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(secretWrites()).toEqual([]);
    expect(injectedBundles()).toEqual([deployed.caPem, deployed.caPem]);
  });

  it('replaces an unusable deploy-time Secret in place, keeping its type and labels', async () => {
    kube.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: SECRET, namespace: NAMESPACE, labels: { team: 'platform' } },
      type: 'Opaque',
      data: { 'tls.crt': Buffer.from('not a certificate').toString('base64'), 'tls.key': 'AAAA' },
    });
    const replica = await startReplica();
    const secret = storedSecret();
    expect([secret.type, secret.metadata.labels]).toEqual(['Opaque', { team: 'platform' }]);
    const bundle = storedBundle();
    expect(await servedFingerprint(replica, bundle.caPem)).toBe(fingerprintOf(bundle.certPem));
    expect(secretWrites()).toEqual([{ method: 'PUT', status: 200 }]);
  });

  it('lets two replicas started together agree on one CA', async () => {
    kube.create(registration);
    const [first, second] = await Promise.all([startReplica(), startReplica()]);
    await Promise.all([first.certificates.initialInjection, second.certificates.initialInjection]);

    const bundle = storedBundle();
    expect(await servedFingerprint(first, bundle.caPem)).toBe(fingerprintOf(bundle.certPem));
    expect(await servedFingerprint(second, bundle.caPem)).toBe(fingerprintOf(bundle.certPem));
    expect(injectedBundles()).toEqual([bundle.caPem, bundle.caPem]);
    expect(secretWrites().filter((write) => write.status === 201)).toHaveLength(1);
  });

  it('rotates a certificate expiring in 10 days; a live client of another replica sees it without a restart', async () => {
    kube.create(registration);
    const rotating = await startReplica();
    const watching = await startReplica();

    // Someone (a previous run, a restore) left a certificate that expires in 10 days: both replicas
    // load it from their Secret watch.
    const expiring = await generateSelfSignedBundle({ ...IDENTITY, now: new Date(Date.now() - 355 * DAY) });
    kube.update({ ...storedSecret(), data: secretData(expiring) });
    for (const replica of [rotating, watching]) {
      await waitForCertificates(
        async () => (await servedFingerprint(replica, expiring.caPem)) === fingerprintOf(expiring.certPem),
        'the expiring certificate is served',
      );
    }

    const outcome = await rotating.certificates.checkNow();
    expect(outcome).toEqual({
      action: 'rotated',
      injection: { status: 'unchanged', attempts: 1, webhooks: 2 },
    });

    const rotated = storedBundle();
    expect(rotated.certPem).not.toBe(expiring.certPem);
    expect(new Date(new X509Certificate(rotated.certPem).validTo).getTime()).toBeGreaterThan(
      Date.now() + 364 * DAY,
    );
    // New CA first, the expiring one kept while replicas may still serve certificates it signed.
    expect(splitPemCertificates(rotated.caPem)).toEqual([expect.any(String), expiring.caPem.trim()]);
    expect(injectedBundles()).toEqual([rotated.caPem, rotated.caPem]);

    const newCa = splitPemCertificates(rotated.caPem)[0];
    expect(await servedFingerprint(rotating, newCa)).toBe(fingerprintOf(rotated.certPem));
    await waitForCertificates(
      async () => (await servedFingerprint(watching, newCa)) === fingerprintOf(rotated.certPem),
      'the other replica serves the rotated certificate',
    );
  });

  it('rotates at a check once the injected clock says fewer than 30 days remain', async () => {
    let clockOffsetMs = 0;
    kube.create(registration);
    const replica = await startReplica({ clock: () => new Date(Date.now() + clockOffsetMs) });
    const original = storedBundle();

    expect((await replica.certificates.checkNow()).action).toBe('reused');
    clockOffsetMs = 340 * DAY;
    expect((await replica.certificates.checkNow()).action).toBe('rotated');
    const rotated = new X509Certificate(storedBundle().certPem);
    expect(rotated.fingerprint256).not.toBe(fingerprintOf(original.certPem));
    expect(new Date(rotated.validFrom).getTime()).toBeGreaterThan(Date.now() + 339 * DAY);
  });

  it('keeps watching through dropped watches and failed lists', async () => {
    const replica = await startReplica({ watchTimeoutSeconds: 60 });
    await kube.waitForWatches({}, 1);
    kube.failNext({ status: 500, method: 'GET', pathIncludes: '/secrets', watch: false });
    kube.dropWatches();
    const next = await generateSelfSignedBundle({ ...IDENTITY, now: new Date() });
    kube.update({ ...storedSecret(), data: secretData(next) });
    await waitForCertificates(
      async () => (await servedFingerprint(replica, next.caPem)) === fingerprintOf(next.certPem),
      'the replica serves the certificate written after its watch broke',
    );
  });

  it('recreates a deleted Secret at once and every replica serves the new certificate', async () => {
    kube.create(registration);
    const [first, second] = await Promise.all([startReplica(), startReplica()]);
    const original = storedBundle();
    kube.delete('v1', 'Secret', NAMESPACE, SECRET);

    await waitForCertificates(async () => {
      const secret = kube.get('v1', 'Secret', NAMESPACE, SECRET);
      return secret !== undefined && storedBundle().certPem !== original.certPem;
    }, 'the Secret is recreated');
    const recreated = storedBundle();
    for (const replica of [first, second]) {
      await waitForCertificates(
        async () => (await servedFingerprint(replica, recreated.caPem)) === fingerprintOf(recreated.certPem),
        'the recreated certificate is served',
      );
    }
    await waitForCertificates(async () => injectedBundles()[0] === recreated.caPem, 'the new CA is injected');
  });

  it('logs what it does with certificates, but never a key or a certificate', async () => {
    const { logger, lines, text } = capturingLogger();
    const replica = await startReplica({ logger, injectionBackoff: { ...FAST, maxAttempts: 2 } });
    await replica.certificates.initialInjection;
    const expiring = await generateSelfSignedBundle({ ...IDENTITY, now: new Date(Date.now() - 355 * DAY) });
    kube.update({ ...storedSecret(), data: secretData(expiring) });
    await waitForCertificates(
      async () => (await servedFingerprint(replica, expiring.caPem)) === fingerprintOf(expiring.certPem),
      'the expiring certificate is served',
    );
    await replica.certificates.checkNow();

    const events = lines.map((line) => line.event);
    expect(events).toEqual(
      expect.arrayContaining([
        'tls_secret_created',
        'ca_bundle_injection_failed',
        'ca_bundle_injection_gave_up',
        'tls_secret_rotated',
      ]),
    );
    expect(lines.find((line) => line.event === 'ca_bundle_injection_failed')).toMatchObject({
      level: 'warn',
      msg: expect.stringContaining(`create ValidatingWebhookConfiguration ${WEBHOOK}`),
    });
    expect(text()).not.toMatch(/BEGIN|PRIVATE|MII/);
  });

  it('keeps serving the current certificate when the Secret is overwritten with garbage', async () => {
    const replica = await startReplica();
    const good = storedBundle();
    kube.update({
      ...storedSecret(),
      data: { ...(storedSecret().data as object), 'tls.key': Buffer.from('junk').toString('base64') },
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await servedFingerprint(replica, good.caPem)).toBe(fingerprintOf(good.certPem));
  });
});
