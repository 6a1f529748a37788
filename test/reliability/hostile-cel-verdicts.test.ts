import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import type { KubernetesObject } from '../../services/model/kubernetes';
import { fixtureControllerApp, indexObjects } from '../support/controller-fixtures';

// The CEL rows of issue 27's table through the real route, `POST /api/v1/admission-check`: a
// ValidatingAdmissionPolicy over 5,000 containers with a quadratic comprehension, a backtracking
// regex in `find`, a quadratic `replace`, and a namespaced Kyverno Policy whose CEL builds a 200³
// list. Each answers promptly with the verdict the API server would give (its cost limit stops the
// expression and the failurePolicy decides) or `unknown` (the evaluation guard's deadline), and
// `/healthz` keeps answering meanwhile. Before: 54.8 s, 30 s, 4 s and an out-of-memory exit.

const NAMESPACE = 'team';
const POD_RULES = {
  resourceRules: [
    {
      apiGroups: ['', 'apps'],
      apiVersions: ['v1'],
      resources: ['pods', 'deployments'],
      operations: ['CREATE'],
    },
  ],
};

function validatingPolicy(name: string, expression: string): KubernetesObject[] {
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name },
      spec: { failurePolicy: 'Fail', matchConstraints: POD_RULES, validations: [{ expression }] },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: `${name}-binding` },
      spec: { policyName: name, validationActions: ['Deny'] },
    },
  ];
}

const range = `[${Array.from({ length: 200 }, (_, index) => index).join(', ')}]`;

const kyvernoPolicy: KubernetesObject = {
  apiVersion: 'kyverno.io/v1',
  kind: 'Policy',
  metadata: { name: 'cube', namespace: NAMESPACE },
  spec: {
    validationFailureAction: 'Enforce',
    rules: [
      {
        name: 'cube',
        match: { any: [{ resources: { kinds: ['Pod'] } }] },
        validate: {
          cel: {
            expressions: [
              { expression: `${range}.map(a, ${range}.map(b, ${range}.map(c, a + b + c))).size() > 0` },
            ],
          },
        },
      },
    ],
  },
};

const POLICIES: Record<string, KubernetesObject[]> = {
  'unique-names': validatingPolicy(
    'unique-names',
    'object.spec.template.spec.containers.all(c, object.spec.template.spec.containers.exists_one(d, d.name == c.name))',
  ),
  'image-format': validatingPolicy(
    'image-format',
    "object.spec.containers.all(c, c.image.find('^([a-z0-9]+[._-]?)+(:[a-z0-9._-]+)?$') != '')",
  ),
  'no-docker-hub': validatingPolicy(
    'no-docker-hub',
    "object.spec.containers.all(c, c.image.replace('docker.io/', '').size() < 1000000)",
  ),
  cube: [kyvernoPolicy],
};

let server: Server | undefined;
let base: string;

/** A controller holding the namespace and one hostile policy (the guard stops an object's later constraints too). */
async function serve(policy: string): Promise<void> {
  const cluster = indexObjects([
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } },
    ...POLICIES[policy],
  ]);
  server = createServer(fixtureControllerApp(cluster));
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

interface Checked {
  constraints: Array<{
    sourceName?: string;
    name?: string;
    verdict: string;
    reason?: string;
    summary?: string;
  }>;
}

/** Posts one check while polling /healthz; returns the answer, its time and the slowest health probe. */
async function checkWhileProbing(object: KubernetesObject) {
  let slowestHealth = 0;
  let probing = true;
  const probes = (async () => {
    while (probing) {
      const started = performance.now();
      const health = await fetch(`${base}/healthz`);
      expect(health.status).toBe(200);
      slowestHealth = Math.max(slowestHealth, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  await new Promise((resolve) => setTimeout(resolve, 20));
  const started = performance.now();
  const response = await fetch(`${base}/api/v1/admission-check`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ object, operation: 'CREATE' }),
  });
  const elapsed = performance.now() - started;
  expect(response.status).toBe(200);
  const body = (await response.json()) as Checked;
  await new Promise((resolve) => setTimeout(resolve, 20));
  probing = false;
  await probes;
  return { body, elapsed, slowestHealth };
}

function verdictOf(body: Checked, policy: string) {
  const entry = body.constraints.find((constraint) => JSON.stringify(constraint).includes(policy));
  expect(entry).toBeDefined();
  return entry as Checked['constraints'][number];
}

const pod = (image: string): KubernetesObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: NAMESPACE },
  spec: { containers: [{ name: 'app', image }] },
});

// Generous bounds for a shared CI machine: the measured answers take tens of milliseconds.
const ANSWER_MS = 3_000;
const HEALTH_MS = 1_000;

describe('hostile CEL through POST /api/v1/admission-check', () => {
  it('a 5,000-container Deployment under containers.all(exists_one): cost limit or deadline, promptly', async () => {
    const containers = Array.from({ length: 5_000 }, (_, index) => ({ name: `c${index}`, image: 'app' }));
    const deployment: KubernetesObject = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'wide', namespace: NAMESPACE },
      spec: { template: { spec: { containers } } },
    };
    await serve('unique-names');
    const { body, elapsed, slowestHealth } = await checkWhileProbing(deployment);
    const entry = verdictOf(body, 'unique-names');
    expect(['violates', 'unknown']).toContain(entry.verdict);
    expect(JSON.stringify(entry)).toMatch(/PerCallLimit|deadline/);
    expect(elapsed).toBeLessThan(ANSWER_MS);
    expect(slowestHealth).toBeLessThan(HEALTH_MS);
  });

  it('find with a backtracking pattern on 30 a and `!`: RE2 answers, the image fails the policy', async () => {
    await serve('image-format');
    const { body, elapsed, slowestHealth } = await checkWhileProbing(pod(`${'a'.repeat(30)}!`));
    expect(verdictOf(body, 'image-format').verdict).toBe('violates');
    expect(elapsed).toBeLessThan(ANSWER_MS);
    expect(slowestHealth).toBeLessThan(HEALTH_MS);
  });

  it('replace on `docker.io/a` × 20,000: linear, the verdict of the policy', async () => {
    await serve('no-docker-hub');
    const { body, elapsed, slowestHealth } = await checkWhileProbing(pod('docker.io/a'.repeat(20_000)));
    expect(verdictOf(body, 'no-docker-hub').verdict).toBe('passes');
    expect(elapsed).toBeLessThan(ANSWER_MS);
    expect(slowestHealth).toBeLessThan(HEALTH_MS);
  });

  it('a namespaced Kyverno Policy building a 200³ list: stopped before the memory is taken', async () => {
    await serve('cube');
    const before = process.memoryUsage().heapUsed;
    const { body, elapsed, slowestHealth } = await checkWhileProbing(pod('nginx'));
    const entry = verdictOf(body, 'cube');
    expect(['violates', 'unknown']).toContain(entry.verdict);
    expect(JSON.stringify(entry)).toMatch(/PerCallLimit|deadline|work budget/);
    expect(elapsed).toBeLessThan(ANSWER_MS);
    expect(slowestHealth).toBeLessThan(HEALTH_MS);
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(500 * 1024 * 1024);
  });
});
