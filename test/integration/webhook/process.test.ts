import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubernetesApiTestServer } from '../../support/kubernetes-api-server';
import { bundleFromSecret } from '../../../services/webhook/certs/secret-store';
import {
  generateSelfSignedBundle,
  type CertificateBundle,
} from '../../../services/webhook/certs/self-signed';
import { admissionReview, StandInController, tlsRequest } from './harness';
import { KINDS } from './review-fixtures';

// The webhook as a process (services/webhook/main.ts run by node): flags, exit codes, wiring of
// both certificate modes, and a SIGTERM that lets an in-flight review finish.

const ROOT = join(__dirname, '../../..');
const MAIN = join(ROOT, 'services/webhook/main.ts');
const REGISTER = join(__dirname, 'swc-register.js');

interface RunningProcess {
  child: ChildProcess;
  stdout: string[];
  stderr: string;
  exited: Promise<number | null>;
}

const running: RunningProcess[] = [];

// Each test starts node on TypeScript sources: room for a loaded machine.
jest.setTimeout(120_000);

function startProcess(args: string[], env: Record<string, string> = {}): RunningProcess {
  const child = spawn(process.execPath, ['-r', REGISTER, MAIN, ...args], {
    cwd: ROOT,
    // A loopback ephemeral port unless a test says otherwise: the default :8443 may be taken.
    env: { PATH: process.env.PATH ?? '', FOREWARN_ADDR: '127.0.0.1:0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const result: RunningProcess = {
    child,
    stdout: [],
    stderr: '',
    exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))),
  };
  child.stdout
    ?.setEncoding('utf8')
    .on('data', (chunk: string) => result.stdout.push(...chunk.split('\n').filter(Boolean)));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (result.stderr += chunk));
  running.push(result);
  return result;
}

afterEach(async () => {
  for (const webhookProcess of running.splice(0)) {
    const { child } = webhookProcess;
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await webhookProcess.exited;
  }
});

async function until<T>(
  produce: () => Promise<T | undefined> | T | undefined,
  description: string,
  // A bound on failure, not a figure: the webhook compiles its TypeScript on start, slow on a busy machine.
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await Promise.resolve()
      .then(produce)
      .catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${description}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function listeningPort(webhookProcess: RunningProcess): number | undefined {
  for (const line of webhookProcess.stdout) {
    const entry = JSON.parse(line) as { event?: string; port?: number };
    if (entry.event === 'listening') return entry.port;
  }
  return undefined;
}

async function ready(port: number, ca: string): Promise<true | undefined> {
  const response = await tlsRequest({ port, ca, path: '/readyz', method: 'GET' });
  return response.status === 200 ? true : undefined;
}

describe('webhook process', () => {
  it('exits with status 2 naming an invalid flag', async () => {
    const webhook = startProcess(['--rotation-check-interval', 'sometimes']);
    expect(await webhook.exited).toBe(2);
    expect(webhook.stderr).toContain(
      "option '--rotation-check-interval <duration>' argument 'sometimes' is invalid",
    );
  });

  it('exits with status 2 naming an invalid FOREWARN_* variable', async () => {
    const webhook = startProcess([], { FOREWARN_SELF_SIGNED: 'perhaps' });
    expect(await webhook.exited).toBe(2);
    expect(webhook.stderr).toContain('FOREWARN_SELF_SIGNED (--self-signed)');
  });

  describe('with certificate files', () => {
    let directory: string;
    let bundle: CertificateBundle;
    const standIn = new StandInController({});

    beforeAll(async () => {
      directory = await mkdtemp(join(tmpdir(), 'forewarn-process-'));
      bundle = await generateSelfSignedBundle({
        serviceName: 'forewarn-webhook',
        namespace: 'forewarn-system',
        extraSans: ['127.0.0.1'],
        now: new Date(),
      });
      await writeFile(join(directory, 'tls.crt'), bundle.certPem);
      await writeFile(join(directory, 'tls.key'), bundle.keyPem);
    });

    afterAll(async () => {
      await standIn.stop();
      await rm(directory, { recursive: true, force: true });
    });

    it('on SIGTERM stops accepting, finishes the in-flight review and exits 0', async () => {
      standIn.behaviour = 'hang';
      const controllerUrl = await standIn.start();
      const webhook = startProcess([
        '--self-signed=false',
        `--tls-cert-file=${join(directory, 'tls.crt')}`,
        `--tls-key-file=${join(directory, 'tls.key')}`,
        '--addr=127.0.0.1:0',
        `--controller-url=${controllerUrl}`,
        // The warm-up's own queries to the (hanging) controller would be taken for the review's.
        '--warm-up=false',
      ]);
      const port = await until(() => listeningPort(webhook), 'the listening log line');
      await until(() => ready(port, bundle.caPem), 'readiness');

      // The controller hangs, so this review is in flight for the 3 s query timeout.
      const inFlight = tlsRequest({
        port,
        ca: bundle.caPem,
        body: admissionReview(KINDS.Pod.target, 'CREATE', 'uid-in-flight'),
      });
      await until(() => (standIn.queries.length > 0 ? true : undefined), 'the controller query');
      const signalled = Date.now();
      webhook.child.kill('SIGTERM');
      await until(
        () => (webhook.stdout.some((line) => line.includes('"event":"shutdown"')) ? true : undefined),
        'shutdown',
      );
      await expect(ready(port, bundle.caPem)).rejects.toThrow(/ECONNREFUSED/);

      const response = await inFlight;
      expect(JSON.parse(response.text).response).toEqual({
        uid: 'uid-in-flight',
        allowed: true,
        warnings: [],
      });
      expect(await webhook.exited).toBe(0);
      expect(Date.now() - signalled).toBeLessThan(10_000);
    });
  });

  describe('self-signed against the Kubernetes API', () => {
    let kube: KubernetesApiTestServer;
    let directory: string;

    beforeEach(async () => {
      kube = new KubernetesApiTestServer();
      await kube.start();
      directory = await mkdtemp(join(tmpdir(), 'forewarn-kubeconfig-'));
      await writeFile(join(directory, 'kubeconfig'), kube.kubeConfigYaml());
    });

    afterEach(async () => {
      await kube.stop();
      await rm(directory, { recursive: true, force: true });
    });

    it('creates its Secret through --kubeconfig and serves it on the listen address', async () => {
      const webhook = startProcess(
        ['--addr', '127.0.0.1:0', '--kubeconfig', join(directory, 'kubeconfig'), '--extra-san', '127.0.0.1'],
        { POD_NAMESPACE: 'forewarn-system' },
      );
      const port = await until(() => listeningPort(webhook), 'the listening log line');
      const secret = await until(
        () => kube.get('v1', 'Secret', 'forewarn-system', 'forewarn-webhook-tls'),
        'the Secret',
      );
      const bundle = bundleFromSecret({ data: secret.data as Record<string, string> });
      expect(bundle).not.toBeNull();
      expect(await until(() => ready(port, bundle?.caPem ?? ''), 'readiness')).toBe(true);
    });
  });
});
