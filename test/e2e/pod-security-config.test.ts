// Pod Security Admission configured in the API server's AdmissionConfiguration (defaults and
// exemptions), which no API shows: the controller is told the same with `--pod-security-default` and
// `--pod-security-exempt-*`, and its verdicts are compared with what the API server then does with each
// pod. The server here enforces baseline in unlabelled namespaces, exempts the namespace `psa-exempt`
// (whose own label asks for restricted) and the runtime class `sandboxed`. One cluster for the file.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startCluster, waitFor, type Cluster, type ProcessResult } from './harness';
import { asJsonObject, ControllerApi, ManagedProcess, requireBuiltEntries } from './forewarn-support';
import { controllerReady, launchController, requireStarted } from './controller-process';
import { securityPod, type Manifest } from './verdicts-manifests';

const DEFAULT_NAMESPACE = 'psa-default';
const EXEMPT_NAMESPACE = 'psa-exempt';
const EXEMPT_RUNTIME_CLASS = 'sandboxed';

const ADMISSION_CONFIGURATION = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: PodSecurity
    configuration:
      apiVersion: pod-security.admission.config.k8s.io/v1
      kind: PodSecurityConfiguration
      defaults:
        enforce: baseline
        enforce-version: latest
      exemptions:
        usernames: []
        runtimeClasses: [${EXEMPT_RUNTIME_CLASS}]
        namespaces: [${EXEMPT_NAMESPACE}]
`;

let configDirectory: string | undefined;
let cluster: Cluster | undefined;
let controller: ManagedProcess | undefined;
let api: ControllerApi | undefined;

const running = (): { cluster: Cluster; api: ControllerApi } => requireStarted(cluster, api);

async function kubectlOk(args: string[], stdin?: string): Promise<string> {
  const result = await running().cluster.kubectl(args, stdin === undefined ? {} : { stdin });
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}

async function apply(object: Manifest): Promise<ProcessResult> {
  return running().cluster.kubectl(['apply', '-f', '-'], { stdin: JSON.stringify(object) });
}

/** The verdict of `pod-security/enforce` for an object, or undefined when no such constraint applies. */
async function enforceVerdict(object: Manifest): Promise<string | undefined> {
  const entries = await running().api.admissionCheck(object);
  return entries.find((entry) => entry.name === 'pod-security/enforce')?.verdict;
}

function privilegedPod(name: string, namespace: string, runtimeClassName?: string): Manifest {
  const pod = securityPod('privileged', namespace);
  const spec = asJsonObject(pod.spec, 'pod spec');
  return {
    ...pod,
    metadata: { name, namespace },
    spec: runtimeClassName === undefined ? spec : { ...spec, runtimeClassName },
  };
}

beforeAll(async () => {
  requireBuiltEntries();
  configDirectory = mkdtempSync(path.join(tmpdir(), 'forewarn-e2e-psa-'));
  const configFile = path.join(configDirectory, 'admission-configuration.yaml');
  writeFileSync(configFile, ADMISSION_CONFIGURATION);
  cluster = await startCluster({ apiServerExtraArgs: [`--admission-control-config-file=${configFile}`] });
  controller = launchController(cluster, {
    kubeconfig: cluster.kubeconfigPath,
    detailLevel: 'full',
    extraArgs: [
      '--pod-security-default',
      'enforce=baseline',
      '--pod-security-exempt-namespaces',
      EXEMPT_NAMESPACE,
      '--pod-security-exempt-runtime-classes',
      EXEMPT_RUNTIME_CLASS,
    ],
  });
  ({ api } = await controllerReady(controller));
});

afterAll(async () => {
  await controller?.stop();
  await cluster?.stop();
  if (configDirectory) rmSync(configDirectory, { recursive: true, force: true });
});

test('the verdicts agree with the server on its default level and its exempt namespace and runtime class', async () => {
  await kubectlOk(
    ['apply', '-f', '-'],
    [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: DEFAULT_NAMESPACE } },
      {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: EXEMPT_NAMESPACE, labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } },
      },
      {
        apiVersion: 'node.k8s.io/v1',
        kind: 'RuntimeClass',
        metadata: { name: EXEMPT_RUNTIME_CLASS },
        handler: 'runsc',
      },
    ]
      .map((item) => JSON.stringify(item))
      .join('\n'),
  );
  for (const namespace of [DEFAULT_NAMESPACE, EXEMPT_NAMESPACE])
    await waitFor(
      async () =>
        (await running().cluster.kubectl(['get', 'serviceaccount', 'default', '-n', namespace])).code === 0,
      30_000,
      { description: `default ServiceAccount of ${namespace}` },
    );
  await waitFor(
    async () =>
      (await running().api.report(DEFAULT_NAMESPACE)).some((entry) => entry.name === 'pod-security/enforce'),
    30_000,
    { description: `the cluster default in the report of ${DEFAULT_NAMESPACE}` },
  );
  // The exempt namespace has no Pod Security constraint, whatever its label says.
  expect(
    (await running().api.report(EXEMPT_NAMESPACE))
      .map((entry) => entry.name)
      .filter((name) => name.startsWith('pod-security/')),
  ).toEqual([]);

  const cases: Array<{ pod: Manifest; verdict: string | undefined; admitted: boolean }> = [
    { pod: privilegedPod('by-default', DEFAULT_NAMESPACE), verdict: 'violates', admitted: false },
    {
      pod: privilegedPod('sandboxed', DEFAULT_NAMESPACE, EXEMPT_RUNTIME_CLASS),
      verdict: 'passes',
      admitted: true,
    },
    { pod: privilegedPod('in-exempt', EXEMPT_NAMESPACE), verdict: undefined, admitted: true },
  ];
  for (const { pod, verdict, admitted } of cases) {
    const name = String(asJsonObject(pod.metadata, 'metadata').name);
    const said = await enforceVerdict(pod);
    const applied = await apply(pod);
    expect({
      name,
      said,
      admitted: applied.code === 0,
      stderr: applied.code === 0 ? '' : applied.stderr,
    }).toEqual({
      name,
      said: verdict,
      admitted,
      stderr: admitted ? '' : expect.stringContaining('violates PodSecurity "baseline:latest"'),
    });
  }
});
