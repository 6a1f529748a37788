import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseControllerConfig } from '../../../services/controller/config';
import { startController, type RunningController } from '../../../services/controller/runtime';
import { silentLogger } from '../../../services/logging/logger';
import {
  generateSelfSignedBundle,
  type CertificateBundle,
} from '../../../services/webhook/certs/self-signed';
import { createControllerClient, type ControllerClient } from '../../../services/webhook/controller-client';
import { admissionReview, startWebhook, tlsRequest, type RunningWebhook } from './harness';

// The whole admission path in one process: the real controller on a copy of the demo cluster, the
// real webhook over HTTPS in front of it, real AdmissionReviews. Asserts the exact warnings.

const deployment = (
  name: string,
  labels: Record<string, string>,
  annotations: Record<string, string> = {},
) => ({
  group: 'apps',
  version: 'v1',
  kind: 'Deployment',
  resource: 'deployments',
  object: {
    metadata: { name, annotations },
    spec: {
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name, image: 'registry.example.com/x:1' }] } },
    },
  },
});

let directory: string;
let controller: RunningController;
let client: ControllerClient;
let webhook: RunningWebhook;
let bundle: CertificateBundle;

beforeAll(async () => {
  directory = mkdtempSync(path.join(tmpdir(), 'forewarn-admission-'));
  cpSync(path.join(__dirname, '../../../examples/manifests'), directory, { recursive: true });
  writeFileSync(
    path.join(directory, 'cert-manager-crds.yaml'),
    [
      'apiVersion: apiextensions.k8s.io/v1',
      'kind: CustomResourceDefinition',
      'metadata: { name: clusterissuers.cert-manager.io }',
      'spec:',
      '  group: cert-manager.io',
      '  scope: Cluster',
      '  names: { kind: ClusterIssuer, plural: clusterissuers }',
      '  versions: [{ name: v1, served: true, storage: true }]',
    ].join('\n'),
  );
  const loopback = ['--port', '0', '--address', '127.0.0.1', '--mcp=false'];
  const config = parseControllerConfig(
    ['--manifests', directory, ...loopback, '--missing-debounce', '0s'],
    {},
  );
  controller = await startController(config, silentLogger());
  bundle = await generateSelfSignedBundle({
    serviceName: 'forewarn-webhook',
    namespace: 'forewarn-system',
    extraSans: ['127.0.0.1'],
    now: new Date(),
  });
  client = createControllerClient({ baseUrl: `http://127.0.0.1:${controller.port}` });
  webhook = await startWebhook({ constraints: client, certificate: bundle });
});

afterAll(async () => {
  await webhook?.close();
  await client?.close();
  await controller?.close();
  rmSync(directory, { recursive: true, force: true });
});

async function warningsFor(
  target: ReturnType<typeof deployment>,
  namespace: string,
  operation: 'CREATE' | 'UPDATE' = 'CREATE',
) {
  const response = await tlsRequest({
    port: webhook.port,
    ca: bundle.caPem,
    body: admissionReview(target, operation, `uid-${target.object.metadata.name}`, namespace),
  });
  const review = JSON.parse(response.text) as {
    response: { uid: string; allowed: boolean; warnings?: string[] };
  };
  expect(review.response).toMatchObject({ uid: `uid-${target.object.metadata.name}`, allowed: true });
  return review.response.warnings ?? [];
}

describe('webhook in front of the real controller', () => {
  it('warns a Deployment in shop with the exact Critical and Warning lines, Critical first', async () => {
    const warnings = await warningsFor(deployment('frontend', { app: 'frontend', tier: 'web' }), 'shop');
    // Critical first (DESIGN.md 7); every line is about this object: what rejects it, then what
    // audits or warns about it (issue 31).
    const isViolation = (warning: string) =>
      / will (be rejected|get a warning|be recorded in the audit log): /.test(warning);
    const rank = (warning: string) => (warning.startsWith('[CRITICAL] ') ? 0 : 1);
    const ranks = warnings.map(rank);
    expect(ranks).toEqual([...ranks].sort((left, right) => left - right));
    expect(new Set(ranks)).toEqual(new Set([0, 1]));
    expect(warnings.every(isViolation)).toBe(true);
    expect(warnings[0]).toMatch(/^\[CRITICAL\] will be rejected: container "frontend": /);
    // The namespace's network and mesh rules only apply: no line on every apply (docs/decisions.md).
    expect(warnings.some((warning) => warning.includes('default-deny-ingress'))).toBe(false);
    expect(warnings.some((warning) => warning.includes('block-cloud-metadata'))).toBe(false);
    // One pod with the LimitRange's default requests fits what the quota has left: it passes, silently.
    expect(warnings.some((warning) => warning.includes('ResourceQuota "compute"'))).toBe(false);
    expect(warnings.every((warning) => warning.length <= 256)).toBe(true);
  });

  it('puts what rejects this object first: five replicas exceed the memory the quota has left', async () => {
    const target = deployment('frontend', { app: 'frontend', tier: 'web' });
    const fiveReplicas = {
      ...target,
      object: { ...target.object, spec: { ...target.object.spec, replicas: 5 } },
    };
    const warnings = await warningsFor(fiveReplicas, 'shop');
    expect(warnings[0]).toMatch(
      /^\[CRITICAL\] its pods will be rejected: would exceed the quota: needs 640Mi requests\.memory \(5 pods\), 512Mi left of 8Gi \(ResourceQuota "compute"\) - /,
    );
  });

  it('does not repeat the policies selecting app=api on an UPDATE: they only apply (issue 31)', async () => {
    const warnings = await warningsFor(deployment('api', { app: 'api', tier: 'backend' }), 'shop', 'UPDATE');
    expect(warnings.some((warning) => warning.includes('api-allow-frontend'))).toBe(false);
    expect(
      warnings.every((warning) =>
        / will (be rejected|get a warning|be recorded in the audit log): /.test(warning),
      ),
    ).toBe(true);
  });

  it('gives no warning for an object no policy concerns (a ConfigMap in a quiet namespace)', async () => {
    const configMap = {
      group: '',
      version: 'v1',
      kind: 'ConfigMap',
      resource: 'configmaps',
      object: { metadata: { name: 'settings', annotations: {} }, data: { mode: 'quiet' } },
    } as unknown as ReturnType<typeof deployment>;
    expect(await warningsFor(configMap, 'quiet')).toEqual([]);
  });

  it('warns a new Deployment whose ClusterIssuer does not exist, before it is in the cluster', async () => {
    const warnings = await warningsFor(
      deployment(
        'storefront',
        { app: 'storefront' },
        { 'cert-manager.io/cluster-issuer': 'letsencrypt-prod' },
      ),
      'sandbox',
    );
    expect(warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^\[CRITICAL\] Deployment "storefront" needs ClusterIssuer "letsencrypt-prod" \(cert-manager\.io\/v1\)/,
        ),
      ]),
    );
  });
});
