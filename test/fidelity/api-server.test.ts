import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubernetesObject } from '../../services/model/kubernetes';
import { buildAdmissionCheck } from '../../services/controller/verdicts/admission-check';
import { indexObjects } from '../support/controller-fixtures';
import { realworldDirectory } from '../support/realworld-corpus';
import { startCluster, waitFor, type Cluster } from '../e2e/harness';
import { admittedByServer, podSecurityDenial, rejectedWith, waitUntilEnforced } from '../e2e/enforcement';

// Fidelity against the real API server (issue 21): the corpus's ValidatingAdmissionPolicies that
// match the workloads of test/fidelity/workloads, and Pod Security Admission at baseline and
// restricted, through `kubectl create --dry-run=server` on kube-apiserver v1.34.4 (the e2e tier's
// cluster scripts) and through Forewarn's verdicts on the same objects. Per object: the server
// rejects exactly when Forewarn says a denying source is violated, and names one of those sources.
// Objects with an `unknown` denying verdict are counted, not compared. Prints the figures.

const REALWORLD = realworldDirectory();
const WORKLOADS = path.join(__dirname, 'workloads');
/** The kinds the workloads are of, as plural resources (a policy on other kinds matches none). */
const WORKLOAD_RESOURCES = new Set(['pods', 'deployments', 'statefulsets', 'daemonsets', 'replicasets']);
const PSA_LEVELS = ['baseline', 'restricted'] as const;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function yamlDocuments(directory: string): Record<string, unknown>[] {
  return readdirSync(directory)
    .sort()
    .flatMap((entry) => {
      const full = path.join(directory, entry);
      if (statSync(full).isDirectory()) return yamlDocuments(full);
      if (!/\.ya?ml$/.test(entry)) return [];
      return parseAllDocuments(readFileSync(full, 'utf8'))
        .map((document) => document.toJSON() as unknown)
        .flatMap((document) =>
          isRecord(document) && document.kind === 'List' && Array.isArray(document.items)
            ? document.items.filter(isRecord)
            : isRecord(document)
              ? [document]
              : [],
        );
    });
}

function resourcesOf(policy: Record<string, unknown>): string[] {
  const spec = isRecord(policy.spec) ? policy.spec : {};
  const match = isRecord(spec.matchConstraints) ? spec.matchConstraints : {};
  const rules = Array.isArray(match.resourceRules) ? match.resourceRules.filter(isRecord) : [];
  return rules.flatMap((rule) => (Array.isArray(rule.resources) ? rule.resources.map(String) : []));
}

/**
 * The corpus's policies without params that match a workload kind, served as v1, with their own
 * bindings or, for a policy the corpus does not bind, a Deny binding of our own.
 */
function corpusAdmissionPolicies(): KubernetesObject[] {
  const documents = yamlDocuments(path.join(REALWORLD!, 'policies/k8s-website'));
  const v1 = (document: Record<string, unknown>) =>
    ({ ...document, apiVersion: 'admissionregistration.k8s.io/v1' }) as KubernetesObject;
  const policies = documents.filter(
    (document) =>
      document.kind === 'ValidatingAdmissionPolicy' &&
      isRecord(document.spec) &&
      document.spec.paramKind === undefined &&
      resourcesOf(document).some((resource) => WORKLOAD_RESOURCES.has(resource)),
  );
  const names = new Set(policies.map((policy) => String((policy.metadata as { name: string }).name)));
  const bindings = documents.filter(
    (document) =>
      document.kind === 'ValidatingAdmissionPolicyBinding' &&
      isRecord(document.spec) &&
      names.has(String(document.spec.policyName)) &&
      document.spec.paramRef === undefined,
  );
  const bound = new Set(
    bindings.map((binding) => String((binding.spec as { policyName: string }).policyName)),
  );
  const added = [...names]
    .filter((name) => !bound.has(name))
    .map((name) => ({
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: `${name}-fidelity` },
      spec: { policyName: name, validationActions: ['Deny'] },
    }));
  return [...policies, ...bindings, ...added].map(v1);
}

function workloads(): KubernetesObject[] {
  return yamlDocuments(WORKLOADS)
    .filter((document) => document.kind !== 'CronJob' || document.apiVersion === 'batch/v1')
    .map((document) => document as KubernetesObject);
}

const psaNamespace = (level: string) => `fidelity-psa-${level}`;

/** The workload every corpus policy set and Pod Security level rejects (privileged, in `team`). */
function requirePrivilegedWorkload(): KubernetesObject {
  const privileged = workloads().find((object) => object.metadata?.name === 'privileged');
  if (!privileged) throw new Error('test/fidelity/workloads has no Pod named "privileged"');
  return privileged;
}

function namespaces(): KubernetesObject[] {
  return [
    ...['team', 'default'].map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })),
    ...PSA_LEVELS.map((level) => ({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name: psaNamespace(level),
        labels: { 'pod-security.kubernetes.io/enforce': level },
      },
    })),
  ];
}

/** The ServiceAccounts the Pods name (the server's ServiceAccount admission needs them to exist). */
function serviceAccounts(): KubernetesObject[] {
  const names = new Set(
    workloads()
      .filter((object) => object.kind === 'Pod' && isRecord(object.spec))
      .map((object) => (object.spec as { serviceAccountName?: unknown }).serviceAccountName)
      .filter((name): name is string => typeof name === 'string'),
  );
  return ['team', 'default', ...PSA_LEVELS.map(psaNamespace)].flatMap((namespace) =>
    [...names].map((name) => ({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name, namespace },
    })),
  );
}

/** Each Pod again in every Pod Security namespace. */
function podSecurityObjects(): KubernetesObject[] {
  const pods = workloads().filter((object) => object.kind === 'Pod');
  return PSA_LEVELS.flatMap((level) =>
    pods.map((pod) => ({ ...pod, metadata: { ...pod.metadata, namespace: psaNamespace(level) } })),
  );
}

interface Judged {
  object: string;
  /** Sources Forewarn says reject the object: VAP names and `PodSecurity`. */
  rejecting: string[];
  undecided: boolean;
}

function forewarnJudgement(
  index: ReturnType<typeof indexObjects>['index'],
  object: KubernetesObject,
): Judged {
  const entries = buildAdmissionCheck(index, { object, operation: 'CREATE' }).constraints.filter(
    (entry) =>
      entry.effect === 'deny' &&
      (entry.sourceKind === 'ValidatingAdmissionPolicyBinding' ||
        (entry.sourceKind === 'Namespace' && object.kind === 'Pod')),
  );
  const rejecting = entries
    .filter((entry) => entry.verdict === 'violates')
    // A binding's constraint is named after the binding or its policy: keep both to match the server's words.
    .flatMap((entry) =>
      entry.sourceKind === 'Namespace' ? ['PodSecurity'] : [entry.name, entry.sourceName],
    );
  return {
    object: `${object.kind}/${object.metadata?.namespace}/${object.metadata?.name}`,
    rejecting,
    undecided: entries.some((entry) => entry.verdict === 'unknown' || entry.verdict === 'applies'),
  };
}

const DENIAL = /ValidatingAdmissionPolicy '[^']+' with binding '([^']+)' denied request/;

/** The binding that denied the object, `PodSecurity`, or undefined when the server admits it. */
function serverRejection(stderr: string): string | undefined {
  const denial = DENIAL.exec(stderr);
  if (denial) return denial[1];
  if (/violates PodSecurity/.test(stderr)) return 'PodSecurity';
  return undefined;
}

let cluster: Cluster | undefined;

afterAll(async () => {
  await cluster?.stop();
});

async function prepareCluster(policies: readonly KubernetesObject[]): Promise<Cluster> {
  cluster = await startCluster();
  const started = cluster;
  const apply = async (objects: readonly unknown[]) => {
    const result = await started.kubectl(['apply', '-f', '-'], {
      stdin: objects.map((object) => JSON.stringify(object)).join('\n'),
    });
    if (result.code !== 0) throw new Error(`kubectl apply failed: ${result.stderr}`);
  };
  await apply(namespaces());
  await apply(serviceAccounts());
  await apply(policies);
  for (const namespace of ['team', 'default', ...PSA_LEVELS.map(psaNamespace)])
    await waitFor(
      async () => (await started.kubectl(['get', 'serviceaccount', 'default', '-n', namespace])).code === 0,
      60_000,
      { description: `default ServiceAccount of ${namespace}` },
    );
  // The server compiles policies and reads namespace labels asynchronously (issue 36): wait until it
  // enforces every binding (the sentinel) and each Pod Security level (a privileged Pod is rejected).
  const privileged = requirePrivilegedWorkload();
  await waitUntilEnforced(
    started,
    PSA_LEVELS.map((level) => ({
      description: `Pod Security "${level}" enforced in ${psaNamespace(level)}`,
      object: { ...privileged, metadata: { ...privileged.metadata, namespace: psaNamespace(level) } },
      inForce: rejectedWith(podSecurityDenial(level)),
    })),
  );
  return started;
}

interface Comparison {
  compared: number;
  rejected: number;
  undecided: number;
  mismatches: unknown[];
}

/** Dry-run creates each object and compares the server's answer with Forewarn's judgement. */
async function compare(
  server: Cluster,
  index: ReturnType<typeof indexObjects>['index'],
  objects: readonly KubernetesObject[],
): Promise<Comparison> {
  const result: Comparison = { compared: 0, rejected: 0, undecided: 0, mismatches: [] };
  for (const object of objects) {
    const judged = forewarnJudgement(index, object);
    if (judged.undecided) {
      result.undecided++;
      continue;
    }
    const created = await server.kubectl(['create', '--dry-run=server', '-f', '-'], {
      stdin: JSON.stringify(object),
    });
    const rejection = created.code === 0 ? undefined : serverRejection(created.stderr);
    if (created.code !== 0 && rejection === undefined)
      throw new Error(`${judged.object}: kubectl failed for another reason: ${created.stderr}`);
    result.compared++;
    if (rejection) result.rejected++;
    const agrees =
      rejection === undefined ? judged.rejecting.length === 0 : judged.rejecting.includes(rejection);
    if (!agrees)
      result.mismatches.push({ ...judged, server: rejection ?? 'admitted', stderr: created.stderr });
  }
  return result;
}

const summary = (name: string, comparison: Comparison) =>
  `  ${name}: ${comparison.compared} objects compared (${comparison.rejected} rejected by the server), ` +
  `${comparison.undecided} with an unknown verdict not compared, ${comparison.mismatches.length} disagreements`;

describe('Forewarn against the API server: corpus admission policies and Pod Security Admission', () => {
  it('rejects what the server rejects, for the same reason', async () => {
    expect(REALWORLD).toBeDefined();
    const policies = corpusAdmissionPolicies();
    const server = await prepareCluster(policies);
    const objects = workloads();
    const admissionPolicies = await compare(
      server,
      indexObjects([...namespaces(), ...policies]).index,
      objects,
    );
    // Pod Security alone: without the bindings, which would otherwise reject most Pods first.
    const removed = await server.kubectl(['delete', 'validatingadmissionpolicybindings', '--all']);
    expect(removed.code).toBe(0);
    // Deletions reach the server's policy cache asynchronously too: the sentinel, created after them,
    // proves they are seen; the privileged Pod, admitted in a namespace without Pod Security, that no
    // binding is left.
    const privileged = requirePrivilegedWorkload();
    await waitUntilEnforced(server, [
      { description: 'no binding left in force', object: privileged, inForce: admittedByServer },
    ]);
    const podSecurity = await compare(server, indexObjects(namespaces()).index, podSecurityObjects());
    console.log(
      [
        `API server fidelity (kube-apiserver ${server.kubernetesVersion}):`,
        summary(
          `${policies.length} corpus admission objects on ${objects.length} workloads`,
          admissionPolicies,
        ),
        summary(`Pod Security Admission (${PSA_LEVELS.join(', ')})`, podSecurity),
      ].join('\n'),
    );
    expect(admissionPolicies.mismatches).toEqual([]);
    expect(podSecurity.mismatches).toEqual([]);
    expect(admissionPolicies.rejected).toBeGreaterThan(0);
    expect(podSecurity.rejected).toBeGreaterThan(0);
    expect(podSecurity.compared - podSecurity.rejected).toBeGreaterThan(0);
  });
});
