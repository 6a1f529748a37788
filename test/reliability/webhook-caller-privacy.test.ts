import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import forge from 'node-forge';
import { apiServerCheck } from '../../services/webhook/api-server-identity';
import { createControllerClient, type ControllerClient } from '../../services/webhook/controller-client';
import { generateSelfSignedBundle, type CertificateBundle } from '../../services/webhook/certs/self-signed';
import { createWebhookApp, WebhookHttpsServer } from '../../services/webhook/server';
import { silentLogger } from '../../services/logging/logger';

// Issue 32, row 4: the webhook asks the controller with its own token, so its answers are at
// `full`; any pod that reached port 8443 with an AdmissionReview got policy, rule and message of a
// namespace it has nothing to do with (3 of 3 markers; the controller asked directly gave 0). Now
// only a caller with the API server's client certificate gets them; anyone else gets what the
// controller tells an anonymous caller. The controller here answers full only to the webhook's token.

jest.setTimeout(60_000);

const MARKERS = ['SECRET-POLICY', 'SECRET-RULE', 'SECRET-MESSAGE'];
const WEBHOOK_TOKEN = 'webhook-token';

/** A CA and a client certificate it signed (clientAuth), as kube-apiserver's kubeConfigFile names. */
function clientCertificate(
  commonName: string,
  caCommonName = 'api-server-client-ca',
): { caPem: string; certPem: string; keyPem: string } {
  const caKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const clientKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const caKey = forge.pki.privateKeyFromPem(
    caKeys.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
  );
  const validity = (certificate: forge.pki.Certificate) => {
    certificate.validity.notBefore = new Date(Date.now() - 60_000);
    certificate.validity.notAfter = new Date(Date.now() + 3_600_000);
  };
  const caName = [{ name: 'commonName', value: caCommonName }];
  const ca = forge.pki.createCertificate();
  ca.publicKey = forge.pki.publicKeyFromPem(
    caKeys.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  );
  ca.serialNumber = '01';
  validity(ca);
  ca.setSubject(caName);
  ca.setIssuer(caName);
  ca.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, digitalSignature: true, critical: true },
  ]);
  ca.sign(caKey, forge.md.sha256.create());
  const client = forge.pki.createCertificate();
  client.publicKey = forge.pki.publicKeyFromPem(
    clientKeys.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  );
  client.serialNumber = '02';
  validity(client);
  client.setSubject([{ name: 'commonName', value: commonName }]);
  client.setIssuer(caName);
  client.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
    { name: 'extKeyUsage', clientAuth: true },
  ]);
  client.sign(caKey, forge.md.sha256.create());
  return {
    caPem: forge.pki.certificateToPem(ca),
    certPem: forge.pki.certificateToPem(client),
    keyPem: clientKeys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

const review = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: 'probe-1',
    kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
    resource: { group: 'apps', version: 'v1', resource: 'deployments' },
    namespace: 'victim',
    operation: 'CREATE',
    object: {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'probe', namespace: 'victim' },
      spec: { template: { metadata: { labels: { app: 'probe' } } } },
    },
  },
});

let controller: Server;
let webhook: WebhookHttpsServer;
let clients: ControllerClient[] = [];
let serving: CertificateBundle;
let apiServer: ReturnType<typeof clientCertificate>;
let impostor: ReturnType<typeof clientCertificate>;

beforeAll(async () => {
  // The controller: full (the markers) for the webhook's token, its detail level for anyone else.
  controller = createServer((request, response) => {
    const full = request.headers.authorization === `Bearer ${WEBHOOK_TOKEN}`;
    request.resume();
    request.on('end', () => {
      const constraint = full
        ? {
            name: 'SECRET-POLICY/SECRET-RULE',
            severity: 'Critical',
            summary: 'SECRET-POLICY rule SECRET-RULE: SECRET-MESSAGE',
            remediationHint: 'x',
          }
        : {
            name: 'fw-0123456789abcdef',
            severity: 'Critical',
            summary: 'a policy applies',
            remediationHint: 'x',
          };
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ constraints: [constraint] }));
    });
  });
  await new Promise<void>((resolve) => controller.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(controller.address() as AddressInfo).port}`;
  const withToken = createControllerClient({ baseUrl, bearerToken: () => WEBHOOK_TOKEN });
  const anonymous = createControllerClient({ baseUrl });
  clients = [withToken, anonymous];
  apiServer = clientCertificate('kube-apiserver');
  impostor = clientCertificate('kube-apiserver', 'impostor-ca');
  const app = createWebhookApp({
    constraints: withToken,
    logger: silentLogger(),
    isReady: () => true,
    callerTrust: {
      isApiServer: apiServerCheck({
        verifiesClientCertificates: true,
        clientNames: ['kube-apiserver'],
        trustUnauthenticated: false,
      }),
      anonymousConstraints: anonymous,
    },
  });
  webhook = new WebhookHttpsServer(app, silentLogger(), {}, apiServer.caPem);
  serving = await generateSelfSignedBundle({
    serviceName: 'forewarn-webhook',
    namespace: 'forewarn-system',
    extraSans: ['127.0.0.1'],
    now: new Date(),
  });
  webhook.setCertificate({ certPem: serving.certPem, keyPem: serving.keyPem });
  await webhook.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await webhook?.close(0);
  await Promise.all(clients.map((client) => client.close()));
  await new Promise((resolve) => controller?.close(resolve));
});

/** Posts the review as a caller with this client certificate (or none); returns the warnings. */
function warningsFor(certificate?: { certPem: string; keyPem: string }): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const request = https.request(
      {
        host: '127.0.0.1',
        port: webhook.port,
        path: '/validate',
        method: 'POST',
        ca: serving.caPem,
        headers: { 'content-type': 'application/json' },
        ...(certificate ? { cert: certificate.certPem, key: certificate.keyPem } : {}),
        agent: false,
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        response.on('end', () => {
          const parsed = JSON.parse(body) as { response?: { allowed: boolean; warnings?: string[] } };
          if (parsed.response?.allowed !== true) return reject(new Error(`not an allowed review: ${body}`));
          resolve(parsed.response.warnings ?? []);
        });
      },
    );
    request.on('error', reject);
    request.end(review);
  });
}

const markersIn = (warnings: string[]) => MARKERS.filter((marker) => warnings.join('\n').includes(marker));

it('a pod without a client certificate learns none of the markers, and is still answered allowed', async () => {
  const warnings = await warningsFor();
  expect(warnings.length).toBeGreaterThan(0);
  expect(markersIn(warnings)).toEqual([]);
});

it('a client certificate of another CA, with the right name, counts for nothing', async () => {
  expect(markersIn(await warningsFor(impostor))).toEqual([]);
});

it('the API server, with its client certificate, gets the warnings in full', async () => {
  expect(markersIn(await warningsFor(apiServer))).toEqual(MARKERS);
});
