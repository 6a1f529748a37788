import { ControllerProcesses } from '../support/controller-process';
import { boundForThisMachine } from '../support/machine-load';
import {
  checkWhileProbing,
  isAlive,
  manifestsDirectory,
  percentile99,
  startHostileController,
  warmUp,
  type HostileOutcome,
} from './support/hostile-controller';

// Issue 27, every row of its table against the real controller process: the hostile policy is loaded
// through `--manifests`, the hostile object is sent to `POST /api/v1/admission-check`, and `/healthz`
// is probed back to back meanwhile. Each row must answer within its bound with `unknown` (the guard
// stopped it) or the verdict the API server would give, keep `/healthz` under 100 ms at p99, and
// leave the process alive. Rows 1, 2, 5 and 6 rely on the CEL cost model and RE2 (branch cel-cost);
// rows 3 and 4 on the quantity parser and the wildcard matcher; all rely on the evaluation guard.

jest.setTimeout(120_000);

/** The answer comes back within this bound (the guard's deadline is 50 ms; the rest is I/O and JSON). */
const ANSWER_BOUND_MS = 2_000;
const HEALTH_P99_BOUND_MS = 100;
/** A pod's memory limit in the component (infra/args.ts: 512Mi), less room for everything but the heap. */
const LOW_HEAP_MEGABYTES = 384;

const processes = new ControllerProcesses();
afterEach(() => processes.cleanUp());

const namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } };

function admissionPolicy(name: string, expression: string, kinds: { group: string; resource: string }) {
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: [kinds.group],
              apiVersions: ['v1'],
              operations: ['CREATE', 'UPDATE'],
              resources: [kinds.resource],
            },
          ],
        },
        validations: [{ expression, message: `${name} failed` }],
      },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: `${name}-binding` },
      spec: { policyName: name, validationActions: ['Deny'] },
    },
  ];
}

function pod(containers: object[]) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'hostile', namespace: 'team' },
    spec: { containers },
  };
}

function deployment(containers: object[]) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'hostile', namespace: 'team' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'hostile' } },
      template: { metadata: { labels: { app: 'hostile' } }, spec: { containers } },
    },
  };
}

function containers(count: number, image = 'registry.corp.example/app:1') {
  return Array.from({ length: count }, (_, position) => ({ name: `c${position}`, image }));
}

interface Row {
  title: string;
  documents: object[];
  object: object;
  /** Which constraint in the answer is the hostile one. */
  sourceKind: string;
  /** The same kind of object, ordinary, for warming the process up. */
  ordinary: object;
  /** `unknown` is always acceptable; these are what the API server would decide. */
  serverVerdicts: string[];
  heapLimitMegabytes?: number;
}

const ROWS: Row[] = [
  {
    title: '1: exists_one inside all over 5,000 containers (no CEL cost budget)',
    documents: admissionPolicy(
      'unique-names',
      'object.spec.template.spec.containers.all(c, object.spec.template.spec.containers.exists_one(d, d.name == c.name))',
      { group: 'apps', resource: 'deployments' },
    ),
    object: deployment(containers(5_000)),
    ordinary: deployment(containers(2)),
    sourceKind: 'ValidatingAdmissionPolicyBinding',
    // The server stops the expression at its cost limit: an evaluation error, failurePolicy Fail.
    serverVerdicts: ['violates'],
  },
  {
    title: "2: find('^([a-z0-9]+[._-]?)+(:[a-z0-9._-]+)?$') on 30 `a` and `!` (backtracking regex)",
    documents: admissionPolicy(
      'image-shape',
      "object.spec.containers.all(c, c.image.find('^([a-z0-9]+[._-]?)+(:[a-z0-9._-]+)?$') != '')",
      { group: '', resource: 'pods' },
    ),
    object: pod([{ name: 'app', image: `${'a'.repeat(30)}!` }]),
    ordinary: pod([{ name: 'app', image: 'app:1' }]),
    sourceKind: 'ValidatingAdmissionPolicyBinding',
    // RE2 finds no match: find returns '' and the validation fails.
    serverVerdicts: ['violates'],
  },
  {
    title: '3: a ResourceQuota and requests.cpu "0.<64,000 digits>1" (GCD over the fraction)',
    documents: [
      {
        apiVersion: 'v1',
        kind: 'ResourceQuota',
        metadata: { name: 'compute', namespace: 'team' },
        spec: { hard: { 'requests.cpu': '4' } },
        status: { hard: { 'requests.cpu': '4' }, used: { 'requests.cpu': '1' } },
      },
    ],
    object: pod([
      { name: 'app', image: 'app:1', resources: { requests: { cpu: `0.${'0'.repeat(64_000)}1` } } },
    ]),
    ordinary: pod([{ name: 'app', image: 'app:1', resources: { requests: { cpu: '100m' } } }]),
    sourceKind: 'ResourceQuota',
    // The server rounds it up to 1n: well within what the quota has left.
    serverVerdicts: ['passes'],
  },
  {
    title: '4: Kyverno wildcards on an image of `.dkr.ecr.` × 20,000 (backtracking wildcard regex)',
    documents: [
      {
        apiVersion: 'kyverno.io/v1',
        kind: 'ClusterPolicy',
        metadata: { name: 'trusted-registries' },
        spec: {
          validationFailureAction: 'Enforce',
          rules: [
            {
              name: 'images',
              match: { any: [{ resources: { kinds: ['Pod'] } }] },
              validate: {
                message: 'images come from a trusted registry',
                pattern: {
                  spec: { containers: [{ image: 'registry.corp.example/* | *.dkr.ecr.*.amazonaws.com/*' }] },
                },
              },
            },
          ],
        },
      },
    ],
    object: pod([{ name: 'app', image: '.dkr.ecr.'.repeat(20_000) }]),
    ordinary: pod([{ name: 'app', image: 'registry.corp.example/app:1' }]),
    sourceKind: 'ClusterPolicy',
    serverVerdicts: ['violates'],
  },
  {
    title: "5: c.image.replace('docker.io/', '') on `docker.io/a` × 20,000 (quadratic replace)",
    documents: admissionPolicy(
      'no-docker-hub-prefix',
      "object.spec.containers.all(c, c.image.replace('docker.io/', '') != '')",
      { group: '', resource: 'pods' },
    ),
    object: pod([{ name: 'app', image: 'docker.io/a'.repeat(20_000) }]),
    ordinary: pod([{ name: 'app', image: 'docker.io/library/nginx:1' }]),
    sourceKind: 'ValidatingAdmissionPolicyBinding',
    serverVerdicts: ['passes'],
  },
  {
    title: '6: a namespaced Kyverno Policy whose CEL builds a 200³ list, at the pod memory limit',
    documents: [
      {
        apiVersion: 'kyverno.io/v1',
        kind: 'Policy',
        metadata: { name: 'cube', namespace: 'team' },
        spec: {
          validationFailureAction: 'Enforce',
          rules: [
            {
              name: 'cube',
              match: { any: [{ resources: { kinds: ['Pod'] } }] },
              validate: {
                cel: {
                  expressions: [
                    {
                      expression:
                        'object.spec.containers.map(a, object.spec.containers.map(b, object.spec.containers.map(c, a.name + b.name + c.name))).size() > 0',
                      message: 'never reached',
                    },
                  ],
                },
              },
            },
          ],
        },
      },
    ],
    object: pod(containers(200)),
    ordinary: pod(containers(2)),
    sourceKind: 'Policy',
    // The server stops it at its cost limit: an evaluation error, which rejects the object.
    serverVerdicts: ['violates'],
    heapLimitMegabytes: LOW_HEAP_MEGABYTES,
  },
];

function describeOutcome(outcome: HostileOutcome): string {
  return JSON.stringify({
    status: outcome.status,
    answerMilliseconds: Math.round(outcome.answerMilliseconds),
    healthP99: Math.round(percentile99(outcome.healthLatencies)),
    healthProbes: outcome.healthLatencies.length,
    healthFailures: outcome.healthFailures,
    constraints: outcome.constraints.map(({ name, verdict, reason }) => ({ name, verdict, reason })),
  });
}

describe('hostile policies and objects against the controller process (issue 27)', () => {
  it.each(ROWS.map((row) => [row.title, row] as const))('row %s', async (_title, row) => {
    const manifests = await manifestsDirectory(processes, [namespace, ...row.documents]);
    const controller = await startHostileController(processes, manifests, row.heapLimitMegabytes);
    await warmUp(controller, row.ordinary);
    const outcome = await checkWhileProbing(controller, row.object, ANSWER_BOUND_MS * 5);
    const summary = describeOutcome(outcome);

    expect({ summary, alive: await isAlive(controller) }).toEqual({ summary, alive: true });
    expect({ summary, status: outcome.status }).toEqual({ summary, status: 200 });
    const hostile = outcome.constraints.filter(
      (constraint) => (constraint as { sourceKind?: string }).sourceKind === row.sourceKind,
    );
    expect({ summary, found: hostile.length > 0 }).toEqual({ summary, found: true });
    for (const constraint of hostile)
      expect({ summary, verdict: [...row.serverVerdicts, 'unknown'].includes(constraint.verdict) }).toEqual({
        summary,
        verdict: true,
      });
    expect({
      summary,
      withinBound: outcome.answerMilliseconds < boundForThisMachine(ANSWER_BOUND_MS),
    }).toEqual({
      summary,
      withinBound: true,
    });
    // 100 ms on a quiet machine, scaled by the cores' oversubscription (test/support/machine-load.ts).
    const healthBound = boundForThisMachine(HEALTH_P99_BOUND_MS);
    expect({
      summary,
      healthBound,
      healthP99WithinBound: percentile99(outcome.healthLatencies) < healthBound,
    }).toEqual({
      summary,
      healthBound,
      healthP99WithinBound: true,
    });
    expect({ summary, healthFailures: outcome.healthFailures }).toEqual({ summary, healthFailures: 0 });
  });
});
