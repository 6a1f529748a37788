// Verdicts against the real API server (issues 16 and 17): the controller watches the cluster, and for
// every object the verdicts of `POST /api/v1/admission-check` are compared with what the API server
// then does with the same object (a real `kubectl apply`): a `violates` of a denying source is
// rejected with the same message, a `passes` is admitted, a Warn binding's violation is the warning
// kubectl prints. ValidatingAdmissionPolicies and Pod Security Admission are enforced by the server
// itself, so nothing here writes down what either should answer. One cluster for the file.
import { startCluster, waitFor, type Cluster, type ProcessResult } from './harness';
import {
  admissionWarnings,
  asJsonObject,
  ControllerApi,
  type CheckedEntry,
  ManagedProcess,
  requireBuiltEntries,
} from './forewarn-support';
import { controllerReady, launchController, requireStarted } from './controller-process';
import { bindingDenial, podSecurityDenial, rejectedWith, waitUntilEnforced } from './enforcement';
import {
  admissionPolicies,
  admissionPolicyObjects,
  enforcementProbes,
  privilegedDeployment,
  enforcedLevel,
  PSA_NAMESPACES,
  REPLICA_LIMITS,
  SECURITY_VARIANT_NAMES,
  securityPod,
  VAP_NAMESPACE,
  type Manifest,
} from './verdicts-manifests';

let cluster: Cluster | undefined;
let controller: ManagedProcess | undefined;
let api: ControllerApi | undefined;

const running = (): { cluster: Cluster; api: ControllerApi } => requireStarted(cluster, api);

async function admissionCheck(object: Manifest): Promise<CheckedEntry[]> {
  return running().api.admissionCheck(object);
}

function describeObject(object: Manifest): string {
  const metadata = asJsonObject(object.metadata, 'metadata');
  return `${String(object.kind)} ${String(metadata.namespace)}/${String(metadata.name)}`;
}

async function apply(object: Manifest): Promise<ProcessResult> {
  return running().cluster.kubectl(['apply', '-f', '-'], { stdin: JSON.stringify(object) });
}

async function kubectlOk(args: string[], stdin?: string): Promise<string> {
  const result = await running().cluster.kubectl(args, stdin === undefined ? {} : { stdin });
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}

/** Pods need their namespace's `default` ServiceAccount, which the controller-manager creates. */
async function serviceAccountReady(namespace: string): Promise<void> {
  await waitFor(
    async () =>
      (await running().cluster.kubectl(['get', 'serviceaccount', 'default', '-n', namespace])).code === 0,
    30_000,
    { description: `default ServiceAccount of ${namespace}` },
  );
}

/** Whether an evidence message carries the policy's message (elements are prefixed `container "x": `). */
function carries(evidence: CheckedEntry['evidence'], message: string): boolean {
  return evidence.some((item) => item.message === message || item.message.endsWith(`: ${message}`));
}

beforeAll(async () => {
  requireBuiltEntries();
  cluster = await startCluster();
  // Full detail: the reports name the cluster-scoped bindings the test waits for.
  controller = launchController(cluster, { kubeconfig: cluster.kubeconfigPath, detailLevel: 'full' });
  ({ api } = await controllerReady(controller));
});

afterAll(async () => {
  await controller?.stop();
  await cluster?.stop();
});

/** What the server did with one object, and what the controller had said about it beforehand. */
interface Outcome {
  object: string;
  entries: CheckedEntry[];
  applied: ProcessResult;
}

const BINDING_NAMES = admissionPolicies
  .filter((item) => item.kind === 'ValidatingAdmissionPolicyBinding')
  .map((item) => String(asJsonObject(item.metadata, 'metadata').name));

const DENIAL = /ValidatingAdmissionPolicy '([^']+)' with binding '([^']+)' denied request: (.*)$/m;
const WARNING = /^Validation failed for ValidatingAdmissionPolicy '([^']+)' with binding '([^']+)': (.*)$/;

function compareWithServer({ object, entries, applied }: Outcome): void {
  const bindings = entries.filter((entry) => entry.sourceKind === 'ValidatingAdmissionPolicyBinding');
  const denying = bindings.filter((entry) => entry.effect === 'deny');
  const rejected = applied.code !== 0;
  const denial = DENIAL.exec(applied.stderr);
  const violated = denying.filter((entry) => entry.verdict === 'violates').map((entry) => entry.name);
  // A `violates` of a Deny binding is rejected; an admitted object violates none; all `passes`: admitted.
  if (violated.length > 0)
    expect({ object, violated, rejected }).toEqual({ object, violated, rejected: true });
  if (!rejected) expect({ object, violated }).toEqual({ object, violated: [] });
  if (denying.every((entry) => entry.verdict === 'passes'))
    expect({ object, rejected, stderr: applied.stderr }).toMatchObject({ rejected: false });
  if (rejected)
    expect({ object, denial: denial !== null, stderr: applied.stderr }).toMatchObject({ denial: true });
  if (denial) {
    // The policy that denied is one Forewarn said the object violates, with the same message, or one it
    // could not judge (`unknown` claims nothing, and says why).
    const [, policy, binding, message] = denial;
    const named = denying.find((entry) => entry.name === policy && entry.sourceName === binding);
    expect({ object, policy, verdict: named?.verdict }).toEqual({
      object,
      policy,
      verdict: expect.stringMatching(/^(violates|unknown)$/),
    });
    if (named?.verdict === 'violates')
      expect({ object, message, carried: carries(named.evidence, message) }).toEqual({
        object,
        message,
        carried: true,
      });
    else expect({ object, reason: named?.reason }).toEqual({ object, reason: expect.any(String) });
  }
  // A Warn binding's violation is the warning kubectl prints, with the same message (the server
  // evaluates Warn bindings even for an object a Deny binding rejects).
  const warned = admissionWarnings(applied.stderr)
    .map((line) => WARNING.exec(line))
    .filter((match): match is RegExpExecArray => match !== null);
  for (const entry of bindings.filter((each) => each.effect === 'warn')) {
    const printed = warned.find(
      ([, policy, binding]) => policy === entry.name && binding === entry.sourceName,
    );
    expect({ object, policy: entry.name, warned: printed !== undefined }).toEqual({
      object,
      policy: entry.name,
      warned: entry.verdict === 'violates',
    });
    if (printed)
      expect({ object, message: printed[3], carried: carries(entry.evidence, printed[3]) }).toEqual({
        object,
        message: printed[3],
        carried: true,
      });
  }
}

/**
 * The server type-checked every policy without warnings (it compiles what the controller evaluates),
 * and its policy cache has the bindings: a server-side dry run of a pod without limits is denied.
 */
async function policiesInForce(): Promise<void> {
  for (const item of admissionPolicies.filter((each) => each.kind === 'ValidatingAdmissionPolicy')) {
    const name = String(asJsonObject(item.metadata, 'metadata').name);
    const status = await waitFor(
      async () => {
        const read = asJsonObject(
          JSON.parse(await kubectlOk(['get', 'validatingadmissionpolicy', name, '-o', 'json'])),
          name,
        );
        const metadata = asJsonObject(read.metadata, 'metadata');
        const current = asJsonObject(read.status ?? {}, 'status');
        return current.observedGeneration === metadata.generation ? current : false;
      },
      30_000,
      { description: `ValidatingAdmissionPolicy ${name} type-checked` },
    );
    expect({ name, typeChecking: status.typeChecking ?? {} }).toEqual({ name, typeChecking: {} });
  }
  // Every binding and the ConfigMap param are in the server's policy cache (issue 36): the sentinel
  // covers the policies and bindings, the replica probe the param informer.
  await waitUntilEnforced(running().cluster, [
    {
      description: 'binding require-memory-limits denies a Pod without a memory limit',
      object: enforcementProbes.unlimitedPod,
      inForce: rejectedWith(bindingDenial('require-memory-limits')),
    },
    {
      description: `binding max-replicas denies 5 replicas with the limit of its param ${REPLICA_LIMITS}`,
      object: enforcementProbes.fiveReplicas,
      inForce: rejectedWith(/binding 'max-replicas' denied request: replicas 5 exceed the limit of 3/),
    },
  ]);
}

test('ValidatingAdmissionPolicy verdicts agree with what the API server admits, rejects and warns about', async () => {
  await kubectlOk(['apply', '-f', '-'], admissionPolicies.map((item) => JSON.stringify(item)).join('\n'));
  await serviceAccountReady(VAP_NAMESPACE);
  // The controller holds the three bindings, the server's policies are compiled and in force.
  await waitFor(
    async () => {
      const report = await running().api.report(VAP_NAMESPACE);
      return BINDING_NAMES.every((name) => report.some((entry) => entry.name === name));
    },
    30_000,
    { description: 'the bindings in the report' },
  );
  await policiesInForce();
  const outcomes: Outcome[] = [];
  for (const object of admissionPolicyObjects) {
    const entries = await admissionCheck(object);
    const applied = await apply(object);
    outcomes.push({ object: describeObject(object), entries, applied });
  }
  for (const outcome of outcomes) compareWithServer(outcome);
  const verdictsOf = (name: string) =>
    outcomes.map((outcome) => outcome.entries.find((entry) => entry.name === name)?.verdict);
  // The set covers every outcome: rejected, admitted, warned, excluded by a match condition, and a
  // param the controller does not hold (ConfigMaps are not indexed: `unknown`, never a guess).
  expect(outcomes.filter((outcome) => outcome.applied.code !== 0).length).toBeGreaterThanOrEqual(3);
  expect(outcomes.filter((outcome) => outcome.applied.code === 0).length).toBeGreaterThanOrEqual(3);
  expect(verdictsOf('require-memory-limits')).toEqual(
    expect.arrayContaining(['violates', 'passes', undefined]),
  );
  expect(verdictsOf('trusted-registry')).toEqual(expect.arrayContaining(['violates', 'passes']));
  expect(verdictsOf('max-replicas')).toContain('unknown');
  // Policies reading fields the server defaults (issue 21) are decided both ways, as the server does.
  for (const name of [
    'no-always-pull',
    'patient-probes',
    'rollout-defaults',
    'pod-spec-defaults',
    'optional-syntax',
  ])
    expect({ name, verdicts: verdictsOf(name) }).toEqual({
      name,
      verdicts: expect.arrayContaining(['violates', 'passes']),
    });
  // `unknown` only where the reason is stated: the ConfigMap param the controller does not index.
  const undecided = outcomes.flatMap((outcome) =>
    outcome.entries
      .filter(
        (entry) => entry.sourceKind === 'ValidatingAdmissionPolicyBinding' && entry.verdict === 'unknown',
      )
      .map((entry) => ({ object: outcome.object, name: entry.name, reason: entry.reason })),
  );
  for (const entry of undecided)
    expect(entry).toEqual({
      object: entry.object,
      name: 'max-replicas',
      reason: expect.stringMatching(/ConfigMap/),
    });
  const decided = outcomes.flatMap((outcome) =>
    outcome.entries.filter(
      (entry) => entry.sourceKind === 'ValidatingAdmissionPolicyBinding' && entry.verdict !== 'unknown',
    ),
  );
  // Every decided verdict went through compareWithServer above: they all agree, or the test failed there.
  console.log(
    JSON.stringify({
      vapVerdicts: {
        objects: outcomes.length,
        decided: decided.length,
        unknown: undecided.length,
        agreeing: decided.length,
      },
    }),
  );
});

/** The API server's Pod Security rejection: the standard and the names of the failing checks. */
const PSA_DENIAL = /violates PodSecurity "([^"]+)": (.*)$/m;

/** `privileged (container "app" must not set ...), host namespaces (...)` → the checks' names. */
function failingChecks(list: string): string[] {
  const names: string[] = [];
  let depth = 0;
  let current = '';
  for (const character of list) {
    if (character === '(') depth++;
    if (character === ')') depth--;
    if (character === ',' && depth === 0) {
      names.push(current);
      current = '';
    } else current += character;
  }
  names.push(current);
  return names.map((name) => name.replace(/\(.*$/s, '').trim()).filter((name) => name !== '');
}

/**
 * The field each of the server's check names is about (pod-security-admission's policy/check_*.go
 * names; both capability checks are about capabilities), and the same read from Forewarn's evidence.
 */
const CHECK_FIELDS: Record<string, string> = {
  privileged: 'privileged',
  hostPort: 'hostPort',
  'host namespaces': 'host namespaces',
  'runAsNonRoot != true': 'runAsNonRoot',
  'allowPrivilegeEscalation != false': 'allowPrivilegeEscalation',
  'unrestricted capabilities': 'capabilities',
  'non-default capabilities': 'capabilities',
  seccompProfile: 'seccompProfile',
};
const EVIDENCE_FIELDS: Array<[RegExp, string]> = [
  [/hostPort|host port/, 'hostPort'],
  [/\bprivileged\b/i, 'privileged'],
  [/host(Network|PID|IPC)/, 'host namespaces'],
  [/runAsNonRoot/, 'runAsNonRoot'],
  [/allowPrivilegeEscalation/, 'allowPrivilegeEscalation'],
  [/capabilit/i, 'capabilities'],
  [/seccomp/i, 'seccompProfile'],
];

function evidenceFields(entry: CheckedEntry): string[] {
  const fields = entry.evidence.map((item) => {
    const found = EVIDENCE_FIELDS.find(([pattern]) => pattern.test(`${item.path} ${item.message}`));
    return found ? found[1] : `unrecognised: ${item.path} ${item.message}`;
  });
  return [...new Set(fields)].sort();
}

test('Pod Security Admission rejects exactly the pods whose enforce verdict is violates, for the checks the evidence names', async () => {
  await kubectlOk(['apply', '-f', '-'], PSA_NAMESPACES.map((item) => JSON.stringify(item)).join('\n'));
  const namespaces = PSA_NAMESPACES.map((item) => String(asJsonObject(item.metadata, 'metadata').name));
  for (const namespace of namespaces) {
    await serviceAccountReady(namespace);
    await waitFor(
      async () =>
        (await running().api.report(namespace)).some((entry) => entry.name === 'pod-security/enforce'),
      30_000,
      { description: `pod-security/enforce in the report of ${namespace}` },
    );
  }
  // The server reads the namespaces' labels from its informer (issue 36): each level is in force first.
  await waitUntilEnforced(
    running().cluster,
    namespaces.map((namespace) => ({
      description: `Pod Security "${enforcedLevel(namespace)}" enforced in ${namespace}`,
      object: securityPod('privileged', namespace),
      inForce: rejectedWith(podSecurityDenial(enforcedLevel(namespace))),
    })),
  );
  const rejectedChecks: string[] = [];
  for (const namespace of namespaces) {
    for (const variant of SECURITY_VARIANT_NAMES) {
      const pod = securityPod(variant, namespace);
      const object = describeObject(pod);
      const entry = (await admissionCheck(pod)).find((each) => each.name === 'pod-security/enforce');
      const applied = await apply(pod);
      const denial = PSA_DENIAL.exec(applied.stderr);
      expect({ object, verdict: entry?.verdict, rejected: applied.code !== 0 && denial !== null }).toEqual({
        object,
        verdict: applied.code === 0 ? 'passes' : 'violates',
        rejected: applied.code !== 0,
      });
      if (!entry || !denial) continue;
      // The same standard, the same failing checks.
      expect({ object, summary: entry.summary.includes(`PodSecurity "${denial[1]}"`) }).toEqual({
        object,
        summary: true,
      });
      const serverFields = [...new Set(failingChecks(denial[2]).map((name) => CHECK_FIELDS[name] ?? name))];
      expect({ object, fields: evidenceFields(entry) }).toEqual({ object, fields: serverFields.sort() });
      rejectedChecks.push(...serverFields);
    }
  }
  // Every check the pods break was seen rejected at least once (the set is not vacuous).
  expect([...new Set(rejectedChecks)].sort()).toEqual([...new Set(Object.values(CHECK_FIELDS))].sort());
});

test('a Deployment whose pod template breaks restricted is admitted, and its pods are rejected as the verdict says', async () => {
  const deployment = privilegedDeployment('psa-restricted');
  const entry = (await admissionCheck(deployment)).find((each) => each.name === 'pod-security/enforce');
  expect(entry?.verdict).toBe('violates');
  expect(entry?.summary).toMatch(/^its pods will be rejected: /);
  expect((await apply(deployment)).code).toBe(0);
  // The ReplicaSet controller's pod creation is what the server rejects.
  const failure = await waitFor(
    async () => {
      const sets = asJsonObject(
        JSON.parse(await kubectlOk(['get', 'replicasets', '-n', 'psa-restricted', '-o', 'json'])),
        'replicasets',
      );
      const conditions = (Array.isArray(sets.items) ? sets.items : []).flatMap((item: unknown) => {
        const status = asJsonObject(asJsonObject(item, 'replicaset').status ?? {}, 'status');
        return Array.isArray(status.conditions) ? status.conditions : [];
      });
      const replicaFailure = conditions
        .map((condition) => asJsonObject(condition, 'condition'))
        .find((condition) => condition.type === 'ReplicaFailure');
      return typeof replicaFailure?.message === 'string' ? replicaFailure.message : false;
    },
    30_000,
    { description: 'the ReplicaSet reporting its rejected pod' },
  );
  const denial = PSA_DENIAL.exec(failure);
  expect(denial).not.toBeNull();
  const serverFields = [
    ...new Set(failingChecks(denial?.[2] ?? '').map((name) => CHECK_FIELDS[name] ?? name)),
  ];
  if (entry) expect(evidenceFields(entry)).toEqual(serverFields.sort());
});
