import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli, type CliEnvironment } from './program';
import { isLoopbackHost } from './kube-credentials';
import { createApiAccess } from '../controller/http/api-auth';
import { kubernetesTokenReviewer } from '../controller/http/token-review';
import { silentLogger } from '../logging/logger';
import { KubernetesApiTestServer } from '../../test/support/kubernetes-api-server';
import { fixtureControllerApp, indexObjects } from '../../test/support/controller-fixtures';
import {
  CALLER_RBAC_OBJECTS,
  READ_KYVERNO_POLICIES,
  testCallerReadAccess,
} from '../../test/support/caller-rbac-fixtures';

// `forewarn --as-me` (issue 24): the CLI sends the current kubeconfig context's bearer token (a
// static token or an exec plugin's, as kubectl gets it) and the controller shows what that user's
// RBAC lets it read at full; a client-certificate user and a plain-HTTP remote URL are refused with
// a clear usage error instead of sending nothing or sending credentials in the clear.

const apiServer = new KubernetesApiTestServer();
let controller: Server;
let url: string;
let directory: string;
let aliceToken: string;

beforeAll(async () => {
  await apiServer.start();
  apiServer.access.grant({
    subject: { kind: 'User', name: 'alice' },
    namespace: 'shop',
    rules: READ_KYVERNO_POLICIES,
  });
  aliceToken = apiServer.tokens.issueUserToken({ username: 'alice' });
  const app = fixtureControllerApp(indexObjects(CALLER_RBAC_OBJECTS), {
    configuredDetailLevel: 'summary',
    // `--api-auth=tokenreview`: the webhook's routes, which `check` asks, are full for the webhook alone.
    apiAccess: createApiAccess({
      mode: 'tokenreview',
      configuredDetailLevel: 'summary',
      webhookServiceAccount: 'forewarn-system/forewarn-webhook',
      reviewToken: kubernetesTokenReviewer(apiServer.kubeConfig()),
      logger: silentLogger(),
    }),
    callerReadAccess: testCallerReadAccess(apiServer),
  });
  controller = await new Promise<Server>((resolve) => {
    const server = createServer(app).listen(0, '127.0.0.1', () => resolve(server));
  });
  const address = controller.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  directory = await mkdtemp(path.join(tmpdir(), 'forewarn-as-me-'));
});

afterAll(async () => {
  await new Promise<void>((resolve) => controller.close(() => resolve()));
  await apiServer.stop();
  await rm(directory, { recursive: true, force: true });
});

/** A kubeconfig whose current context's user is `user` (YAML of the `user:` map). */
async function kubeconfigWithUser(name: string, user: string): Promise<string> {
  const file = path.join(directory, `${name}.yaml`);
  await writeFile(
    file,
    `apiVersion: v1
kind: Config
clusters: [{ name: test, cluster: { server: 'https://kubernetes.example:6443' } }]
contexts: [{ name: ${name}, context: { cluster: test, user: ${name} } }]
current-context: ${name}
users:
- name: ${name}
  user:
${user}
`,
  );
  return file;
}

async function cli(args: string[], env: NodeJS.ProcessEnv) {
  const out = { text: '', isTTY: false, write: (chunk: string) => (out.text += chunk) };
  const err = { text: '', isTTY: false, write: (chunk: string) => (err.text += chunk) };
  const environment: CliEnvironment = { stdout: out, stderr: err, env, readStdin: async () => '' };
  const code = await runCli(args, environment);
  return { code, stdout: out.text, stderr: err.text };
}

function shopEntryLevel(stdout: string): unknown {
  const report = JSON.parse(stdout) as { constraints: Array<{ name: string; detailLevel: string }> };
  return report.constraints.find((entry) => entry.name.startsWith('shop-team'))?.detailLevel;
}

it('sends a static token of the current context with --as-me, and nothing without it', async () => {
  const KUBECONFIG = await kubeconfigWithUser('alice', `    token: ${aliceToken}`);
  const asMe = await cli(['report', '-n', 'shop', '-o', 'json', '--as-me', '--url', url], { KUBECONFIG });
  expect(asMe).toMatchObject({ code: 0, stderr: '' });
  expect(shopEntryLevel(asMe.stdout)).toBe('full');
  // The table marks the entry your own RBAC let you read in full.
  const table = await cli(['report', '-n', 'shop', '--as-me', '--url', url], { KUBECONFIG });
  expect(table.stdout).toMatch(/shop-team\/shop-team-rule \[full\]/);
  expect(table.stdout).toContain('detail level summary');
  const plain = await cli(['report', '-n', 'shop', '-o', 'json', '--url', url], { KUBECONFIG });
  expect(shopEntryLevel(plain.stdout)).toBe('summary');
  // The setting: FOREWARN_AS_ME in the environment does the same as the flag.
  const setting = await cli(['report', '-n', 'shop', '-o', 'json', '--url', url], {
    KUBECONFIG,
    FOREWARN_AS_ME: 'true',
  });
  expect(shopEntryLevel(setting.stdout)).toBe('full');
});

it('check --as-me shows the rule and message of a Policy your RBAC lets you get, and without it does not', async () => {
  const KUBECONFIG = await kubeconfigWithUser('alice', `    token: ${aliceToken}`);
  const manifest = path.join(directory, 'pod.yaml');
  await writeFile(
    manifest,
    'apiVersion: v1\nkind: Pod\nmetadata: { name: web, namespace: shop }\nspec: { containers: [{ name: web, image: nginx }] }\n',
  );
  const message = 'pods need the team label (shop-team)';
  const asMe = await cli(['check', '-f', manifest, '--as-me', '--url', url], { KUBECONFIG });
  expect(asMe.stderr).toBe('');
  expect(asMe.stdout).toContain(message);
  // Marked, as in the report: the finding her RBAC showed in full among redacted ones.
  expect(asMe.stdout).toMatch(/\[CRITICAL\] \[full\] will be rejected: pods need the team label/);
  expect(asMe.stdout).not.toMatch(/\[full\] \(ref/);
  const json = await cli(['check', '-f', manifest, '-o', 'json', '--as-me', '--url', url], { KUBECONFIG });
  const findings = (
    JSON.parse(json.stdout) as { reports: Array<{ objects: Array<{ findings: unknown[] }> }> }
  ).reports[0].objects[0].findings as Array<{ name: string; detailLevel?: string }>;
  expect(findings.find((finding) => finding.name.startsWith('shop-team'))?.detailLevel).toBe('full');
  // The ClusterPolicy stays hidden: her Role does not cover it.
  expect(json.stdout).not.toContain('require-team');
  const plain = await cli(['check', '-f', manifest, '--url', url], { KUBECONFIG });
  expect(plain.stdout).toContain('shop-team');
  expect(plain.stdout).not.toContain(message);
  expect(plain.stdout).not.toContain('[full]');
});

it("runs the context's exec plugin as kubectl does and sends the token it prints", async () => {
  const credential = JSON.stringify({
    apiVersion: 'client.authentication.k8s.io/v1',
    kind: 'ExecCredential',
    status: { token: aliceToken },
  });
  const script = path.join(directory, 'credential.js');
  await writeFile(script, `process.stdout.write(${JSON.stringify(credential)});\n`);
  const KUBECONFIG = await kubeconfigWithUser(
    'exec',
    `    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ${JSON.stringify(process.execPath)}
      args: [${JSON.stringify(script)}]
      interactiveMode: Never`,
  );
  const result = await cli(['report', '-n', 'shop', '-o', 'json', '--as-me', '--url', url], { KUBECONFIG });
  expect(result).toMatchObject({ code: 0, stderr: '' });
  expect(shopEntryLevel(result.stdout)).toBe('full');
});

it('explains that a client-certificate user has no token to send (exit 2)', async () => {
  const KUBECONFIG = await kubeconfigWithUser(
    'cert',
    `    client-certificate-data: ${Buffer.from('not a real certificate').toString('base64')}
    client-key-data: ${Buffer.from('not a real key').toString('base64')}`,
  );
  const result = await cli(['report', '-n', 'shop', '--as-me', '--url', url], { KUBECONFIG });
  expect(result.code).toBe(2);
  expect(result.stderr).toMatch(/client certificate, which only the API server can verify/);
});

it('refuses to send credentials over plain HTTP to a host that is not loopback (exit 2)', async () => {
  const KUBECONFIG = await kubeconfigWithUser('alice', `    token: ${aliceToken}`);
  const result = await cli(['report', '-n', 'shop', '--as-me', '--url', 'http://forewarn.example.com:8080'], {
    KUBECONFIG,
  });
  expect(result.code).toBe(2);
  expect(result.stderr).toMatch(/use https:\/\/ or a port-forward on localhost/);
});

describe('isLoopbackHost (issue 32, row 10)', () => {
  it.each([
    ['localhost', true],
    ['127.0.0.1', true],
    ['127.200.3.4', true],
    ['[::1]', true],
    ['127.evil.example', false],
    ['127.0.0.1.nip.io', false],
    ['localhost.evil.example', false],
    ['10.0.0.1', false],
    ['[::ffff:7f00:1]', false],
  ])('%s: %s', (host, expected) => {
    expect(isLoopbackHost(new URL(`http://${host}:8080`).hostname)).toBe(expected);
  });

  it('reads the host as the URL parser does: 127.1 and 0x7f.1 are 127.0.0.1', () => {
    expect(isLoopbackHost(new URL('http://127.1').hostname)).toBe(true);
    expect(isLoopbackHost(new URL('http://0x7f.1').hostname)).toBe(true);
  });
});
