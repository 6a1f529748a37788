// Forewarn's policy pack under a real `pulumi preview` (issue 34): the Kubernetes provider 4.25.0
// drops API-server warnings, so a developer deploying with Pulumi sees Forewarn's verdicts only
// through `--policy-pack`. A cluster with two ValidatingAdmissionPolicies (one denying Deployments
// without resource limits, one warning about containers without a readiness probe) and Forewarn's
// controller watching it; a small program with a Deployment that violates both. The preview must
// show the denial under the mandatory policy and the warning under the advisory one, each with its
// fix, and fail on the mandatory one, as the API server would on `pulumi up`.
import { mkdir, mkdtemp, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startCluster, waitFor, type Cluster } from '../e2e/harness';
import {
  ControllerApi,
  ManagedProcess,
  controllerEntry,
  repositoryRoot,
  requireBuiltEntries,
} from '../e2e/forewarn-support';
import { kubectlOk } from './deploy-support';
import { PulumiWorkspace } from './pulumi-cli';
import { deployToolDirs, toolPath } from './tools';

const NAMESPACE = 'shop';

const CLUSTER_POLICIES = `apiVersion: v1
kind: Namespace
metadata: { name: ${NAMESPACE} }
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: require-limits }
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - { apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments] }
  validations:
    - expression: "object.spec.template.spec.containers.all(c, has(c.resources) && has(c.resources.limits))"
      message: every container must set resource limits
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: require-limits-shop }
spec:
  policyName: require-limits
  validationActions: [Deny]
  matchResources: { namespaceSelector: { matchLabels: { kubernetes.io/metadata.name: ${NAMESPACE} } } }
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: require-readiness-probe }
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - { apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments] }
  validations:
    - expression: "object.spec.template.spec.containers.all(c, has(c.readinessProbe))"
      message: every container should have a readiness probe
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: require-readiness-probe-shop }
spec:
  policyName: require-readiness-probe
  validationActions: [Warn]
  matchResources: { namespaceSelector: { matchLabels: { kubernetes.io/metadata.name: ${NAMESPACE} } } }
`;

const PROGRAM = `'use strict';
const k8s = require('@pulumi/kubernetes');

new k8s.apps.v1.Deployment('web', {
  metadata: { name: 'web', namespace: '${NAMESPACE}', annotations: { 'pulumi.com/skipAwait': 'true' } },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'web', image: 'registry.example.com/web:1' }] },
    },
  },
});
`;

let cluster: Cluster;
let controller: ManagedProcess;
let controllerUrl: string;
let pulumi: PulumiWorkspace;
let workDir: string;
let program: string;

beforeAll(async () => {
  // The Kubernetes provider and Pulumi; not the TLS provider, which this program does not use.
  for (const tool of ['pulumi', 'pulumi-resource-kubernetes', 'pulumi-language-nodejs']) toolPath(tool);
  requireBuiltEntries();
  workDir = await mkdtemp(path.join(tmpdir(), 'forewarn-deploy-policy-pack-'));
  cluster = await startCluster();
  await kubectlOk(cluster, ['apply', '-f', '-'], CLUSTER_POLICIES);
  controller = ManagedProcess.start(
    'controller',
    path.join(workDir, 'controller.log'),
    controllerEntry,
    [
      `--kubeconfig=${cluster.kubeconfigPath}`,
      '--address=127.0.0.1',
      '--port=0',
      '--mcp=false',
      '--detail-level=full',
    ],
    {},
  );
  const listening = await controller.waitForLogLine(
    (line) => line.msg === 'HTTP API listening',
    60_000,
    'listening',
  );
  controllerUrl = `http://127.0.0.1:${String(listening.port)}`;
  const api = new ControllerApi(controllerUrl);
  await waitFor(() => api.isReady(), 90_000, { description: 'controller /readyz', intervalMs: 200 });

  program = path.join(workDir, 'program');
  await mkdir(program);
  await writeFile(path.join(program, 'Pulumi.yaml'), 'name: shop\nruntime: nodejs\n');
  await writeFile(
    path.join(program, 'package.json'),
    JSON.stringify({ name: 'shop', private: true, main: 'index.js' }),
  );
  await writeFile(path.join(program, 'index.js'), PROGRAM);
  // The repository's own @pulumi packages, as a program installing them beside forewarn would have.
  await symlink(path.join(repositoryRoot, 'node_modules'), path.join(program, 'node_modules'));
  await writeFile(
    path.join(workDir, 'policy-config.json'),
    JSON.stringify({
      'forewarn-rejected': { url: controllerUrl },
      'forewarn-warned': { url: controllerUrl },
    }),
  );

  pulumi = new PulumiWorkspace({
    workDir,
    kubeconfig: cluster.kubeconfigPath,
    // The tier's language host runs the pack too (RunPlugin of kind analyzer, test/deploy/langhost).
    binDirs: deployToolDirs(),
    passphrase: 'deploy-tier-policy-pack-passphrase',
  });
  await pulumi.init();
  console.log(`[deploy policy-pack] program ${program} (pulumi log: ${pulumi.logPath})`);
}, 600_000);

afterAll(async () => {
  await controller?.stop('SIGTERM');
  await cluster?.stop();
});

test('pulumi preview --policy-pack shows the rejection as mandatory and the warning as advisory, each with its fix', async () => {
  await pulumi.succeed(program, ['stack', 'init', 'dev']);
  // The controller has indexed both policies for the namespace before the preview asks.
  await waitFor(
    async () => {
      const response = await fetch(`${controllerUrl}/resources/reports/${NAMESPACE}`);
      const text = await response.text();
      return text.includes('require-limits') && text.includes('require-readiness-probe');
    },
    60_000,
    { description: 'both policies in the report of shop', intervalMs: 500 },
  );
  const preview = await pulumi.run(program, [
    'preview',
    '--stack',
    'dev',
    '--policy-pack',
    path.join(repositoryRoot, 'policy-pack'),
    '--policy-pack-config',
    path.join(workDir, 'policy-config.json'),
  ]);
  const output = `${preview.stdout}\n${preview.stderr}`;
  // The mandatory violation fails the preview, as the API server would fail `pulumi up`.
  expect(preview.code).not.toBe(0);
  // Each verdict at its own level, with the text and the fix of \`forewarn check\`.
  const rejected =
    /\[mandatory\]\s+forewarn-rejected[\s\S]*?will be rejected:[^\n]*every container must set resource limits[\s\S]*?fix: [^\n]+/;
  const warned =
    /\[advisory\]\s+forewarn-warned[\s\S]*?every container should have a readiness probe[\s\S]*?fix: [^\n]+/;
  expect({ rejected: rejected.test(output), warned: warned.test(output), output }).toMatchObject({
    rejected: true,
    warned: true,
  });
});
