import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { boundForThisMachine } from '../../support/machine-load';

// Runs the built `forewarn` binary the way a user's shell would (its own process, real argv, pipes),
// and builds the small cluster directories the check exit-code tests need.

export const REPOSITORY = path.join(__dirname, '../../..');
export const BUILT_BINARY = path.join(REPOSITORY, 'dist/services/cli/main.js');

/** Fails the suite with the fix, instead of a cryptic spawn error, when nothing was built. */
export function requireBuiltBinary(): void {
  if (!existsSync(BUILT_BINARY))
    throw new Error(`${BUILT_BINARY} does not exist: run \`npm run build\` before the CLI tests`);
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * How long one run may take before it counts as hung: 15 s on a quiet machine (a run takes well
 * under one), scaled by the load when the run starts (test/support/machine-load.ts): under load 20
 * on 2 cores, node alone takes seconds to start. A hang detector, not a budget of the CLI's.
 */
const runTimeout = () => boundForThisMachine(15_000);

/**
 * Jest's limit for a test of the CLI suites, which run several processes in a row: a hang
 * detector too, set for load 20 on 2 cores (the suite's own 20 s failed there).
 */
export const CLI_TEST_TIMEOUT_MS = 180_000;

export function runForewarn(
  args: readonly string[],
  options: { input?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    // A clean environment: no FOREWARN_URL or NO_COLOR from the developer's shell.
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...options.env };
    const child = spawn(process.execPath, [BUILT_BINARY, ...args], { cwd: REPOSITORY, env });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timeout = runTimeout();
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`forewarn ${args.join(' ')} did not exit within ${Math.round(timeout)} ms`));
    }, timeout);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** A port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A cluster as files: `team-warn` has a default-deny NetworkPolicy (Warning), `team-critical` a
 * quota at 95% (Critical), `team-clean` nothing.
 */
export async function writeExitCodeCluster(): Promise<string> {
  const directory = await mkdtemp(path.join(tmpdir(), 'forewarn-cli-'));
  const cluster = path.join(directory, 'cluster');
  await mkdir(cluster);
  await writeFile(
    path.join(cluster, 'namespaces.yaml'),
    ['team-warn', 'team-critical', 'team-clean']
      .map((name) => `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n`)
      .join('---\n'),
  );
  await writeFile(
    path.join(cluster, 'policies.yaml'),
    `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: default-deny
  namespace: team-warn
spec:
  podSelector: {}
  policyTypes: [Ingress]
---
# Audited, not rejected: the finding about the object that exits 1 (the NetworkPolicy only applies).
apiVersion: kyverno.io/v1
kind: Policy
metadata:
  name: require-owner
  namespace: team-warn
spec:
  validationFailureAction: Audit
  rules:
    - name: owner-label
      match:
        any:
          - resources: { kinds: [Deployment] }
      validate:
        message: an owner label is required
        pattern:
          metadata:
            labels:
              owner: '?*'
---
apiVersion: v1
kind: ResourceQuota
metadata:
  name: compute
  namespace: team-critical
spec:
  hard: { requests.cpu: '4' }
status:
  hard: { requests.cpu: '4' }
  used: { requests.cpu: 3800m }
`,
  );
  await writeFile(
    path.join(directory, 'deployment.yaml'),
    `# no namespace: -n decides, as with kubectl apply -n
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: { app: web }
  template:
    metadata:
      labels: { app: web }
    spec:
      containers:
        - name: web
          image: registry.example.com/web:1.0.0
`,
  );
  await writeFile(
    path.join(directory, 'broken.yaml'),
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  labels:\n    a: b\n   c: d\n',
  );
  return directory;
}
