import { createServer } from 'node:net';
import request from 'supertest';
import { silentLogger } from '../../../services/logging/logger';
import {
  generateSelfSignedBundle,
  type CertificateBundle,
} from '../../../services/webhook/certs/self-signed';
import {
  createControllerClient,
  type ConstraintSource,
  type ControllerClient,
} from '../../../services/webhook/controller-client';
import { createWebhookApp } from '../../../services/webhook/server';
import { boundForThisMachine } from '../../support/machine-load';
import {
  admissionReview,
  capturingLogger,
  startWebhook,
  StandInController,
  tlsRequest,
  type RunningWebhook,
} from './harness';
import {
  INGRESS_WARNING,
  KINDS,
  OPERATIONS,
  QUOTA,
  QUOTA_WARNING,
  STAND_IN_FIXTURES,
} from './review-fixtures';

// The webhook end to end over HTTPS: real AdmissionReviews in, a stand-in controller behind it.

const standIn = new StandInController(STAND_IN_FIXTURES);

const SMALL_REVIEW_LIMIT = 256 * 1024;

let bundle: CertificateBundle;
let controllerUrl: string;
let client: ControllerClient;
let webhook: RunningWebhook;

beforeAll(async () => {
  bundle = await generateSelfSignedBundle({
    serviceName: 'forewarn-webhook',
    namespace: 'forewarn-system',
    extraSans: ['127.0.0.1'],
    now: new Date(),
  });
  controllerUrl = await standIn.start();
  client = createControllerClient({ baseUrl: controllerUrl });
  webhook = await startWebhook({
    constraints: client,
    certificate: bundle,
    maxReviewBytes: SMALL_REVIEW_LIMIT,
  });
});

afterAll(async () => {
  await webhook.close();
  await client.close();
  await standIn.stop();
});

beforeEach(() => {
  standIn.behaviour = 'fixtures';
  standIn.queries.length = 0;
});

function send(
  body: string | Buffer,
  headers: Record<string, string> = {},
  path = '/validate',
  method = 'POST',
) {
  return tlsRequest({ port: webhook.port, ca: bundle.caPem, body, headers, path, method });
}

function allowedWithoutWarnings(uid: string) {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    response: { uid, allowed: true, warnings: [] },
  };
}

describe('admission warnings over HTTPS', () => {
  const cases = Object.entries(KINDS).flatMap(([kind, kindCase]) =>
    OPERATIONS.map((operation) => [kind, operation, kindCase] as const),
  );

  it.each(cases)(
    '%s %s: exact warnings, query with namespace, resource and labels',
    async (kind, operation, kindCase) => {
      const uid = `uid-${kind}-${operation}`.toLowerCase();
      const response = await send(admissionReview(kindCase.target, operation, uid));
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(response.text)).toEqual({
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        response: { uid, allowed: true, warnings: kindCase.warnings },
      });
      expect(standIn.queries).toEqual([{ namespace: 'shop', ...kindCase.query }]);
    },
  );

  it('gives no warnings for a namespace without constraints', async () => {
    const response = await send(admissionReview(KINDS.Pod.target, 'CREATE', 'uid-empty', 'quiet'));
    expect(JSON.parse(response.text)).toEqual(allowedWithoutWarnings('uid-empty'));
    expect(standIn.queries).toEqual([
      { namespace: 'quiet', resource: 'pods', labels: 'app=web,tier=frontend' },
    ]);
  });

  it('keeps every warning within 256 characters', async () => {
    const response = await send(admissionReview(KINDS.CronJob.target, 'CREATE', 'uid-long'));
    const warnings = JSON.parse(response.text).response.warnings as string[];
    expect(warnings.map((warning) => Array.from(warning).length)).toEqual([
      QUOTA_WARNING.length,
      256,
      INGRESS_WARNING.length,
    ]);
  });

  it('answers any content type and any POST path', async () => {
    const review = admissionReview(KINDS.Pod.target, 'CREATE', 'uid-text');
    const asText = await send(review, { 'content-type': 'text/plain' });
    expect(JSON.parse(asText.text).response.warnings).toEqual(KINDS.Pod.warnings);
    const elsewhere = await send(review, {}, '/');
    expect(JSON.parse(elsewhere.text).response).toEqual({
      uid: 'uid-text',
      allowed: true,
      warnings: KINDS.Pod.warnings,
    });
  });

  it('serves health and readiness, without an X-Powered-By header', async () => {
    const health = await send('', {}, '/healthz', 'GET');
    expect([health.status, JSON.parse(health.text)]).toEqual([200, { status: 'ok' }]);
    const ready = await send('', {}, '/readyz', 'GET');
    expect([ready.status, JSON.parse(ready.text)]).toEqual([200, { status: 'ready' }]);
    expect(ready.headers['x-powered-by']).toBeUndefined();
  });
});

describe('fail-open when the controller misbehaves (rule B-1)', () => {
  const review = admissionReview(KINDS.Deployment.target, 'CREATE', 'uid-fault');

  it.each([
    ['answers 500', 'status500'],
    ['answers garbage JSON', 'garbage'],
    ['answers the wrong shape', 'wrong_shape'],
    ['declares a 50 MB body', 'huge_declared'],
  ] as const)('allows without warnings when the controller %s', async (_label, behaviour) => {
    standIn.behaviour = behaviour;
    const response = await send(review);
    expect(response.status).toBe(200);
    expect(JSON.parse(response.text)).toEqual(allowedWithoutWarnings('uid-fault'));
    expect(standIn.queries).toHaveLength(1);
  });

  it('stops reading a 50 MB answer early and allows without warnings', async () => {
    standIn.behaviour = 'huge_stream';
    standIn.hugeBytesWritten = 0;
    const response = await send(review);
    expect(JSON.parse(response.text)).toEqual(allowedWithoutWarnings('uid-fault'));
    // Socket buffers absorb a few MB at most; a client reading everything would pull all 50.
    expect(standIn.hugeBytesWritten).toBeLessThan(20 * 1024 * 1024);
  });

  it('answers at its 3 s fail-open deadline when the controller hangs', async () => {
    standIn.behaviour = 'hang';
    const response = await send(review);
    expect(JSON.parse(response.text)).toEqual(allowedWithoutWarnings('uid-fault'));
    expect(response.elapsedMs).toBeGreaterThanOrEqual(2_900);
    // The deadline plus 0.5 s on a quiet machine (the slack scales with load: test/support/machine-load.ts);
    // the API server's own timeout, which a missed deadline would hit, is 10 s.
    expect(response.elapsedMs).toBeLessThan(3_000 + boundForThisMachine(500));
  });

  it('allows without warnings when the controller is down (connection refused)', async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const downClient = createControllerClient({ baseUrl: `http://127.0.0.1:${closedPort}` });
    const downWebhook = await startWebhook({ constraints: downClient, certificate: bundle });
    try {
      const response = await tlsRequest({ port: downWebhook.port, ca: bundle.caPem, body: review });
      expect(JSON.parse(response.text)).toEqual(allowedWithoutWarnings('uid-fault'));
      expect(response.elapsedMs).toBeLessThan(1_000);
      expect(await downClient.query({ namespace: 'shop', resource: null, labels: {} })).toMatchObject({
        ok: false,
        reason: 'unreachable',
      });
    } finally {
      await downWebhook.close();
      await downClient.close();
    }
  });

  it('allows with the uid when the constraint source throws', async () => {
    const throwing: ConstraintSource = { query: () => Promise.reject(new Error('boom')) };
    const broken = await startWebhook({ constraints: throwing, certificate: bundle });
    try {
      const response = await tlsRequest({ port: broken.port, ca: bundle.caPem, body: review });
      expect([response.status, JSON.parse(response.text)]).toEqual([
        200,
        allowedWithoutWarnings('uid-fault'),
      ]);
    } finally {
      await broken.close();
    }
  });
});

describe('fail-open on requests that are not usable AdmissionReviews (rule B-1)', () => {
  it.each([
    ['invalid JSON', '{"kind":"AdmissionReview","request":{"uid":', {}],
    ['an empty body', '', {}],
    ['a form body', 'a=1&b=2', { 'content-type': 'application/x-www-form-urlencoded' }],
    ['JSON of another kind', JSON.stringify({ kind: 'Pod', metadata: { name: 'x' } }), {}],
    ['a review without uid', JSON.stringify({ kind: 'AdmissionReview', request: { namespace: 'shop' } }), {}],
  ])('allows %s with an empty uid and asks the controller nothing', async (_label, body, headers) => {
    const response = await send(body, headers);
    expect([response.status, JSON.parse(response.text)]).toEqual([200, allowedWithoutWarnings('')]);
    expect(standIn.queries).toEqual([]);
  });

  it('allows a review without namespace with its uid', async () => {
    const body = JSON.stringify({
      kind: 'AdmissionReview',
      apiVersion: 'admission.k8s.io/v1',
      request: { uid: 'uid-cluster' },
    });
    const response = await send(body);
    expect(JSON.parse(response.text)).toEqual(allowedWithoutWarnings('uid-cluster'));
  });

  it('answers an oversized review with the uid read from its first bytes', async () => {
    const padding = { data: { blob: 'x'.repeat(SMALL_REVIEW_LIMIT + 1) } };
    const target = { ...KINDS.ConfigMap.target, object: { ...KINDS.ConfigMap.target.object, ...padding } };
    const response = await send(admissionReview(target, 'UPDATE', 'uid-oversized'));
    expect([response.status, JSON.parse(response.text)]).toEqual([
      200,
      allowedWithoutWarnings('uid-oversized'),
    ]);
    expect(standIn.queries).toEqual([]);
  });

  it('answers an oversized body that is not a review with an empty uid', async () => {
    const response = await send(Buffer.alloc(SMALL_REVIEW_LIMIT * 2, 'z'), {
      'content-type': 'application/octet-stream',
    });
    expect([response.status, JSON.parse(response.text)]).toEqual([200, allowedWithoutWarnings('')]);
  });

  it('answers a GET on the admission path with an allowed review', async () => {
    const response = await send('', {}, '/validate', 'GET');
    expect([response.status, JSON.parse(response.text)]).toEqual([200, allowedWithoutWarnings('')]);
  });
});

describe('logging', () => {
  it('logs each admission at debug and each failure at warn with what failed', async () => {
    const { logger, lines } = capturingLogger();
    const logged = await startWebhook({ constraints: client, certificate: bundle, logger });
    try {
      await tlsRequest({
        port: logged.port,
        ca: bundle.caPem,
        body: admissionReview(KINDS.Deployment.target, 'CREATE', 'uid-log'),
      });
      standIn.behaviour = 'status500';
      await tlsRequest({
        port: logged.port,
        ca: bundle.caPem,
        body: admissionReview(KINDS.Pod.target, 'UPDATE', 'uid-log-2'),
      });
    } finally {
      await logged.close();
    }
    expect(lines).toEqual([
      expect.objectContaining({
        level: 'debug',
        event: 'admission',
        uid: 'uid-log',
        namespace: 'shop',
        kind: 'Deployment',
        operation: 'CREATE',
        resource: 'apps/deployments',
        labels: { app: 'web', tier: 'frontend' },
        constraints: 4,
        warnings: 3,
      }),
      expect.objectContaining({
        level: 'warn',
        event: 'controller_query_failed',
        reason: 'bad_status',
        detail: 'controller answered HTTP 500',
        uid: 'uid-log-2',
        msg: expect.stringContaining('Check that the controller is running'),
      }),
    ]);
  });
});

describe('server lifecycle', () => {
  it('is not ready before a certificate is loaded', async () => {
    const app = createWebhookApp({ constraints: client, logger: silentLogger(), isReady: () => false });
    const response = await request(app).get('/readyz');
    expect([response.status, response.body]).toEqual([
      503,
      { status: 'not ready', reason: 'no serving certificate loaded yet' },
    ]);
  });

  it('refuses TLS handshakes until a certificate is set, then serves it without a restart', async () => {
    const late = await startWebhook({ constraints: client });
    try {
      await expect(
        tlsRequest({ port: late.port, ca: bundle.caPem, path: '/healthz', method: 'GET' }),
      ).rejects.toThrow();
      late.server.setCertificate(bundle);
      const response = await tlsRequest({
        port: late.port,
        ca: bundle.caPem,
        path: '/readyz',
        method: 'GET',
      });
      expect(response.status).toBe(200);
    } finally {
      await late.close();
    }
  });

  it('finishes an in-flight review while closing and refuses new connections after', async () => {
    let release!: () => void;
    const slow: ConstraintSource = {
      query: async () => {
        await new Promise<void>((resolve) => (release = resolve));
        return { ok: true, constraints: [QUOTA], skippedEntries: 0 };
      },
    };
    const closing = await startWebhook({ constraints: slow, certificate: bundle });
    const inFlight = tlsRequest({
      port: closing.port,
      ca: bundle.caPem,
      body: admissionReview(KINDS.Pod.target, 'CREATE', 'uid-drain'),
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closed = closing.server.close(2_000);
    release();
    const response = await inFlight;
    await closed;
    expect(JSON.parse(response.text).response).toEqual({
      uid: 'uid-drain',
      allowed: true,
      warnings: [QUOTA_WARNING],
    });
    await expect(
      tlsRequest({ port: closing.port, ca: bundle.caPem, path: '/healthz', method: 'GET' }),
    ).rejects.toThrow(/ECONNREFUSED/);
  });
});
