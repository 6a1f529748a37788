// ValidatingAdmissionPolicy params of a custom kind against the real API server (issue 21): the
// controller runs as its ServiceAccount with the component's ClusterRole for
// `controller.paramKinds`, watches the ReplicaLimit params, and for each Deployment its verdicts of
// `POST /api/v1/admission-check` are compared with `kubectl apply --dry-run=server` of the same
// object: a `violates` is rejected with the same message, a `passes` is admitted. The bindings
// cover a named param in the object's namespace, a selector over another namespace's params (one
// evaluation per param), and a missing param with parameterNotFoundAction Allow and Deny.
import { startCluster, waitFor, type Cluster, type ProcessResult } from './harness';
import { ControllerApi, ManagedProcess, requireBuiltEntries, type CheckedEntry } from './forewarn-support';
import { controllerReady, launchController, requireStarted } from './controller-process';
import { bindingDenial, rejectedWith, waitUntilEnforced } from './enforcement';
import { authorizationErrors, controllerServiceAccount, identitiesManifest } from './forewarn-identities';
import { parseParamKinds } from '../../services/model/param-kinds';
import {
  deploymentWithReplicas,
  PARAM_KIND_FLAG_VALUE,
  POLICY_NAME,
  replicaLimit,
  replicaLimitBinding,
  replicaLimitCrd,
  replicaLimitPolicy,
} from '../support/replica-limit-params';

const SYSTEM_NAMESPACE = 'forewarn-system';
const PARAMS_NAMESPACE = 'limits';

/** Each binding reaches one namespace; the Deployments there test it. */
const BINDINGS: Array<{ name: string; namespace: string; paramRef: Record<string, unknown> }> = [
  { name: 'by-name', namespace: 'team-a', paramRef: { name: 'limit', parameterNotFoundAction: 'Deny' } },
  {
    name: 'by-selector',
    namespace: 'team-b',
    paramRef: {
      selector: { matchLabels: { tier: 'limits' } },
      namespace: PARAMS_NAMESPACE,
      parameterNotFoundAction: 'Deny',
    },
  },
  {
    name: 'missing-allow',
    namespace: 'team-c',
    paramRef: { name: 'none', parameterNotFoundAction: 'Allow' },
  },
  { name: 'missing-deny', namespace: 'team-d', paramRef: { name: 'none', parameterNotFoundAction: 'Deny' } },
];

const PARAMS = [
  replicaLimit('limit', 3, 'team-a'),
  replicaLimit('small', 2, PARAMS_NAMESPACE, { tier: 'limits' }),
  replicaLimit('medium', 4, PARAMS_NAMESPACE, { tier: 'limits' }),
  replicaLimit('unselected', 1, PARAMS_NAMESPACE, { tier: 'other' }),
];

function bindings() {
  return BINDINGS.map(({ name, namespace, paramRef }) => {
    const binding = replicaLimitBinding(paramRef, name);
    const spec = binding.spec as Record<string, unknown>;
    spec.matchResources = {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
    };
    return binding;
  });
}

let cluster: Cluster | undefined;
let controller: ManagedProcess | undefined;
let api: ControllerApi | undefined;
const running = () => requireStarted(cluster, api);

async function kubectlOk(args: string[], stdin?: string): Promise<string> {
  if (!cluster) throw new Error('the cluster did not start (see beforeAll)');
  const result = await cluster.kubectl(args, stdin === undefined ? {} : { stdin });
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}

const applyAll = (objects: readonly object[]) =>
  kubectlOk(['apply', '-f', '-'], objects.map((object) => JSON.stringify(object)).join('\n'));

beforeAll(async () => {
  requireBuiltEntries();
  cluster = await startCluster();
  const namespaces = [SYSTEM_NAMESPACE, PARAMS_NAMESPACE, ...BINDINGS.map((binding) => binding.namespace)];
  for (const namespace of namespaces) await kubectlOk(['create', 'namespace', namespace]);
  await kubectlOk(
    ['apply', '-f', '-'],
    identitiesManifest({
      namespace: SYSTEM_NAMESPACE,
      tlsSecretName: 'forewarn-webhook-tls',
      webhookConfigurationName: 'forewarn',
      paramKinds: parseParamKinds(PARAM_KIND_FLAG_VALUE),
    }),
  );
  await applyAll([replicaLimitCrd()]);
  await kubectlOk([
    'wait',
    '--for=condition=Established',
    '--timeout=30s',
    'crd/replicalimits.rules.example.com',
  ]);
  await applyAll([...PARAMS, replicaLimitPolicy(), ...bindings()]);
  const kubeconfig = await cluster.serviceAccountKubeconfig(SYSTEM_NAMESPACE, controllerServiceAccount, 3600);
  controller = launchController(cluster, {
    kubeconfig,
    detailLevel: 'full',
    extraArgs: ['--api-auth', 'none', '--param-kinds', PARAM_KIND_FLAG_VALUE],
  });
  ({ api } = await controllerReady(controller));
});

afterAll(async () => {
  await controller?.stop();
  await cluster?.stop();
});

const DENIAL = /ValidatingAdmissionPolicy '([^']+)' with binding '([^']+)' denied request: (.*)$/m;

interface Outcome {
  object: string;
  binding: string;
  entry: CheckedEntry | undefined;
  dryRun: ProcessResult;
}

/**
 * The server enforces every binding with its params (issue 36): the sentinel covers the policy and the
 * bindings, one probe per binding the ReplicaLimit param informer (the limit is the param's).
 */
async function policyInForce(): Promise<void> {
  const deniedBy = (binding: string, message: string) =>
    rejectedWith(new RegExp(`${bindingDenial(binding).source}: ${message}`));
  await waitUntilEnforced(running().cluster, [
    {
      description: 'binding by-name denies 4 replicas with the limit of param limit',
      object: deploymentWithReplicas(4, 'team-a'),
      inForce: deniedBy('by-name', 'at most 3 replicas'),
    },
    {
      description: 'binding by-selector denies 3 replicas with the limit of param small',
      object: deploymentWithReplicas(3, 'team-b'),
      inForce: deniedBy('by-selector', 'at most 2 replicas'),
    },
    {
      description: 'binding missing-deny denies for want of its param',
      object: deploymentWithReplicas(1, 'team-d'),
      inForce: rejectedWith(bindingDenial('missing-deny')),
    },
  ]);
}

test('verdicts with custom-kind params agree with what the API server admits and rejects', async () => {
  await policyInForce();
  // The controller holds every binding with its params: no verdict is unknown for want of them.
  await waitFor(
    async () => {
      const checked = await running().api.admissionCheck(deploymentWithReplicas(1, 'team-b'));
      return checked.some((entry) => entry.sourceName === 'by-selector' && entry.verdict === 'passes');
    },
    30_000,
    { description: 'the selected params indexed' },
  );
  const outcomes: Outcome[] = [];
  for (const { name, namespace } of BINDINGS)
    for (const replicas of [1, 3, 5]) {
      const object = deploymentWithReplicas(replicas, namespace);
      const entries = await running().api.admissionCheck(object);
      const dryRun = await running().cluster.kubectl(['apply', '--dry-run=server', '-f', '-'], {
        stdin: JSON.stringify(object),
      });
      const entry = entries.find((each) => each.sourceName === name);
      outcomes.push({ object: `${namespace} replicas=${replicas}`, binding: name, entry, dryRun });
    }
  for (const { object, binding, entry, dryRun } of outcomes) {
    const rejected = dryRun.code !== 0;
    const denial = DENIAL.exec(dryRun.stderr);
    // Decided, and decided as the server: rejected ⇔ violates.
    expect({ object, verdict: entry?.verdict, rejected }).toEqual({
      object,
      verdict: rejected ? 'violates' : 'passes',
      rejected,
    });
    if (!rejected) continue;
    expect({ object, policy: denial?.[1], binding: denial?.[2] }).toEqual({
      object,
      policy: POLICY_NAME,
      binding,
    });
    // The server names one failing param's message (or the binding's configuration error); Forewarn
    // lists the evidence of every failing param, that one among them.
    const message = (denial?.[3] ?? '').replace(/^failed to configure binding: /, '');
    const carried = (entry?.evidence ?? []).some((item) => item.message.includes(message));
    expect({ object, message, carried, evidence: entry?.evidence }).toMatchObject({ carried: true });
  }
  const verdicts = (binding: string) =>
    outcomes.filter((outcome) => outcome.binding === binding).map((outcome) => outcome.entry?.verdict);
  expect(verdicts('by-name')).toEqual(['passes', 'passes', 'violates']);
  expect(verdicts('by-selector')).toEqual(['passes', 'violates', 'violates']);
  expect(verdicts('missing-allow')).toEqual(['passes', 'passes', 'passes']);
  expect(verdicts('missing-deny')).toEqual(['violates', 'violates', 'violates']);
});

test('a param changed in the cluster changes the verdict, as it changes what the server admits', async () => {
  await applyAll([replicaLimit('limit', 6, 'team-a')]);
  const object = deploymentWithReplicas(5, 'team-a');
  await waitFor(
    async () =>
      (await running().api.admissionCheck(object)).find((entry) => entry.sourceName === 'by-name')
        ?.verdict === 'passes',
    20_000,
    { description: 'the raised limit seen by the controller' },
  );
  await waitFor(
    async () =>
      (
        await running().cluster.kubectl(['apply', '--dry-run=server', '-f', '-'], {
          stdin: JSON.stringify(object),
        })
      ).code === 0,
    20_000,
    { description: 'the raised limit seen by the API server' },
  );
});

test("the controller reads the params with the component's own RBAC", () => {
  expect(authorizationErrors(controller?.tail(2_000) ?? '')).toEqual([]);
});
