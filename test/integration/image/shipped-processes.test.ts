import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  generateSelfSignedBundle,
  type CertificateBundle,
} from '../../../services/webhook/certs/self-signed';
import { exitOf, repositoryRoot, until, type RunningProcess } from '../../support/controller-process';
import { admissionReview, tlsRequest, type ReviewTarget } from '../webhook/harness';

// The two processes the image ships, started from the build output as users and the image start them:
// the controller by `npm start` on examples/manifests (its prestart and script as package.json has
// them), the webhook by `node dist/services/webhook/main.js` (the image's /webhook) with certificate
// files, in front of that controller. One AdmissionReview goes the real path (HTTPS, the webhook's
// HTTP client, the controller's API, its verdicts and views). Each process reports on /metrics the
// Node.js it runs on, which must be the one running this test: under `npm test` the machine's Node,
// under CI's image-node tier (.ci/image-node) the image's release (docs/decisions.md, "The image's
// Node.js"). It runs the build and builds nothing itself: `npm test` runs `npm run build` first.

const WEBHOOK_MAIN = path.join(repositoryRoot, 'dist/services/webhook/main.js');
/**
 * Bounds on failure, not figures: `npm start` is npm, a shell and node starting one after the other
 * (plus an incremental `tsc -b` when sources are newer than dist/) on a machine that may be busy.
 */
const STARTUP_DEADLINE_MS = 90_000;
const SHUTDOWN_DEADLINE_MS = 20_000;

jest.setTimeout(240_000);

/** The environment of a user's shell, less Forewarn's own variables (a developer's must not leak in). */
function userEnvironment(): NodeJS.ProcessEnv {
  const environment = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('FOREWARN_')),
  );
  return { ...environment, npm_config_update_notifier: 'false' };
}

/** Spawns a command in a process group of its own (so npm's shell and node stop with it). */
function start(command: string, args: string[]): RunningProcess {
  const child: ChildProcess = spawn(command, args, {
    cwd: repositoryRoot,
    env: userEnvironment(),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const stdoutLines: string[] = [];
  let partial = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    stdoutLines.push(...lines);
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, stdoutLines, stderr: () => stderr, exited };
}

function signalGroup(running: RunningProcess, signal: NodeJS.Signals): void {
  if (running.child.pid === undefined) return;
  try {
    process.kill(-running.child.pid, signal);
  } catch {
    // The group is gone already.
  }
}

/** The JSON log lines among a process's output (npm prints its own plain lines around them). */
function jsonLines(running: RunningProcess): Array<Record<string, unknown>> {
  return running.stdoutLines
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function listeningPort(running: RunningProcess, field: string, value: string): Promise<number> {
  const { value: port } = await until(`the "${value}" log line`, STARTUP_DEADLINE_MS, async () => {
    if (running.child.exitCode !== null)
      throw new Error(`exited early (${running.child.exitCode}): ${running.stderr()}`);
    const line = jsonLines(running).find((entry) => entry[field] === value);
    return typeof line?.port === 'number' ? line.port : undefined;
  });
  return port;
}

/** The `version` label of prom-client's nodejs_version_info in a Prometheus text exposition. */
function reportedNodeVersion(exposition: string): string | undefined {
  return /^nodejs_version_info\{[^}]*version="(v[^"]+)"/m.exec(exposition)?.[1];
}

const frontendWithFiveReplicas: ReviewTarget = {
  group: 'apps',
  version: 'v1',
  kind: 'Deployment',
  resource: 'deployments',
  object: {
    metadata: { name: 'frontend', annotations: {} },
    spec: {
      replicas: 5,
      selector: { matchLabels: { app: 'frontend', tier: 'web' } },
      template: {
        metadata: { labels: { app: 'frontend', tier: 'web' } },
        spec: { containers: [{ name: 'frontend', image: 'registry.example.com/x:1' }] },
      },
    },
  },
};

let certificates: string;
let bundle: CertificateBundle;
let controller: RunningProcess;
let webhook: RunningProcess;
let controllerBase: string;
let webhookPort: number;

beforeAll(async () => {
  controller = start('npm', ['start', '--', '--port', '0', '--address', '127.0.0.1', '--mcp=false']);
  controllerBase = `http://127.0.0.1:${await listeningPort(controller, 'msg', 'HTTP API listening')}`;
  await until('controller readiness', STARTUP_DEADLINE_MS, async () =>
    (await fetch(`${controllerBase}/readyz`)).status === 200 ? true : undefined,
  );

  certificates = await mkdtemp(path.join(tmpdir(), 'forewarn-shipped-'));
  bundle = await generateSelfSignedBundle({
    serviceName: 'forewarn-webhook',
    namespace: 'forewarn-system',
    extraSans: ['127.0.0.1'],
    now: new Date(),
  });
  await writeFile(path.join(certificates, 'tls.crt'), bundle.certPem);
  await writeFile(path.join(certificates, 'tls.key'), bundle.keyPem);
  webhook = start(process.execPath, [
    WEBHOOK_MAIN,
    '--self-signed=false',
    `--tls-cert-file=${path.join(certificates, 'tls.crt')}`,
    `--tls-key-file=${path.join(certificates, 'tls.key')}`,
    '--addr=127.0.0.1:0',
    `--controller-url=${controllerBase}`,
    // This test stands in for the API server on loopback: warnings in full, as the API server gets them.
    '--trust-unauthenticated-reviews',
  ]);
  webhookPort = await listeningPort(webhook, 'event', 'listening');
  await until('webhook readiness', STARTUP_DEADLINE_MS, async () => {
    const response = await tlsRequest({
      port: webhookPort,
      ca: bundle.caPem,
      path: '/readyz',
      method: 'GET',
    });
    return response.status === 200 ? true : undefined;
  });
});

afterAll(async () => {
  for (const running of [webhook, controller]) {
    if (!running || running.child.exitCode !== null || running.child.signalCode !== null) continue;
    signalGroup(running, 'SIGKILL');
    await running.exited;
  }
  if (certificates) await rm(certificates, { recursive: true, force: true });
});

describe('the shipped processes, started from the build', () => {
  it('answer an admission through the real path: allowed, with the quota warning first', async () => {
    const response = await tlsRequest({
      port: webhookPort,
      ca: bundle.caPem,
      body: admissionReview(frontendWithFiveReplicas, 'CREATE', 'uid-shipped', 'shop'),
    });
    expect(response.status).toBe(200);
    const review = JSON.parse(response.text) as {
      response: { uid: string; allowed: boolean; warnings?: string[] };
    };
    expect(review.response).toMatchObject({ uid: 'uid-shipped', allowed: true });
    expect(review.response.warnings?.[0]).toMatch(
      /^\[CRITICAL\] its pods will be rejected: would exceed the quota: needs 640Mi requests\.memory \(5 pods\), 512Mi left of 8Gi \(ResourceQuota "compute"\) - /,
    );
  });

  it('run on the Node.js running this test (the image release under CI’s image-node tier)', async () => {
    const controllerMetrics = await (await fetch(`${controllerBase}/metrics`)).text();
    const webhookMetrics = await tlsRequest({
      port: webhookPort,
      ca: bundle.caPem,
      path: '/metrics',
      method: 'GET',
    });
    expect({
      controller: reportedNodeVersion(controllerMetrics),
      webhook: reportedNodeVersion(webhookMetrics.text),
    }).toEqual({ controller: process.version, webhook: process.version });
  });

  it('stop on SIGTERM: the webhook with status 0, `npm start` with its controller', async () => {
    signalGroup(webhook, 'SIGTERM');
    expect(await exitOf(webhook, SHUTDOWN_DEADLINE_MS)).toEqual({ code: 0, signal: null });
    signalGroup(controller, 'SIGTERM');
    // npm's shell hands node our stdout: the controller's last line may come after npm has exited.
    await until('the controller\'s "stopped" line', SHUTDOWN_DEADLINE_MS, async () =>
      jsonLines(controller).some((line) => line.msg === 'stopped') ? true : undefined,
    );
    await exitOf(controller, SHUTDOWN_DEADLINE_MS);
  });
});
