// Helpers for the end-to-end tier: a real etcd + kube-apiserver + kube-controller-manager of a current
// Kubernetes on loopback, driven by the scripts in ./provision (see docs/e2e.md). Each startCluster()
// gets a fresh data dir, fresh certificates and fresh ports; stop() removes everything. A watchdog
// stops the cluster when this process dies without calling stop().
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import path from 'node:path';
import { errorMessage } from '../../services/model/error-message';

const provisionDir = path.join(__dirname, 'provision');
const clusterScript = path.join(provisionDir, 'cluster.sh');

export interface ProcessResult {
  stdout: string;
  stderr: string;
  /** Exit code; 124 when the process was killed for exceeding its timeout, 128+N for signal N. */
  code: number;
}

export interface RunOptions {
  /** Written to the process's standard input, which is then closed. */
  stdin?: string;
  /** Killed with SIGKILL after this long (default 60 s). */
  timeoutMs?: number;
  /** Extra environment variables on top of this process's environment. */
  env?: Readonly<Record<string, string>>;
}

export interface ApiRequestOptions {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path on the API server, e.g. `/api/v1/namespaces/demo/resourcequotas/quota/status`. */
  path: string;
  /** Serialized as JSON unless it is already a string. */
  body?: unknown;
  /** Defaults to application/json (use application/merge-patch+json for PATCH). */
  contentType?: string;
  timeoutMs?: number;
}

export interface ApiResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  bodyText: string;
  /** The body parsed as JSON. */
  json(): unknown;
}

export interface Cluster {
  /** Kubeconfig of an admin user (client certificate with O=system:masters). */
  readonly kubeconfigPath: string;
  /** `https://127.0.0.1:PORT`; the port stays the same across killApiServer/startApiServer. */
  readonly serverUrl: string;
  readonly apiPort: number;
  /** Temporary directory holding certificates, etcd's data, logs; removed by stop(). */
  readonly dataDir: string;
  readonly caFile: string;
  readonly clientCertFile: string;
  readonly clientKeyFile: string;
  /** Static bearer token for the same admin identity. */
  readonly adminToken: string;
  readonly kubectlPath: string;
  /** `gitVersion` of the API server and kubectl (one build), e.g. `v1.34.4`. */
  readonly kubernetesVersion: string;
  readonly apiServerLogPath: string;
  /** Empty when the cluster was started with FOREWARN_E2E_CONTROLLER_MANAGER=0. */
  readonly controllerManagerLogPath: string;
  /** Variables a child process (controller, webhook) needs to reach this cluster, KUBECONFIG first. */
  readonly env: Readonly<Record<string, string>>;
  /** Runs kubectl against this cluster. Never rejects on a non-zero exit: check `code`. */
  kubectl(args: readonly string[], options?: RunOptions): Promise<ProcessResult>;
  /** Raw HTTPS request authenticated with the admin client certificate (e.g. writes to `/status`). */
  apiRequest(options: ApiRequestOptions): Promise<ApiResponse>;
  /**
   * A kubeconfig (in the data dir) authenticating as a ServiceAccount with a token from the
   * TokenRequest API (`kubectl create token`), so every request goes through that account's RBAC.
   */
  serviceAccountKubeconfig(namespace: string, name: string, durationSeconds?: number): Promise<string>;
  /** The API server's log so far (klog output, includes failed webhook calls). */
  readApiServerLog(): Promise<string>;
  /** SIGKILL the API server; etcd and its state stay. */
  killApiServer(): Promise<void>;
  /** Start the API server again on the same port with the same flags and wait for /readyz. */
  startApiServer(): Promise<void>;
  /** Stop etcd and the API server and delete the data dir. Safe to call more than once. */
  stop(): Promise<void>;
}

export interface StartClusterOptions {
  /** Seconds to wait for etcd and then for the API server's /readyz (default 60). */
  readyTimeoutSeconds?: number;
  /** Extra kube-apiserver flags, e.g. `['--v=4']`. */
  apiServerExtraArgs?: readonly string[];
}

/** Runs a process to completion, collecting its output. Rejects only when it cannot be started. */
export function runProcess(
  command: string,
  args: readonly string[],
  options: RunOptions = {},
): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args], {
      env: { ...process.env, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const stdoutChunks: Buffer[] = [];
    const stderrChunks: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs ?? 60_000);
    child.stdout.on('data', (chunk: Buffer) => stdoutChunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderrChunks.push(chunk));
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`cannot run ${command}: ${error.message}`));
    });
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer);
      const signalNumber = signal ? (signalNumbers[signal] ?? 0) : 0;
      resolve({
        stdout: Buffer.concat(stdoutChunks).toString('utf8'),
        stderr: Buffer.concat(stderrChunks).toString('utf8'),
        code: timedOut ? 124 : (exitCode ?? 128 + signalNumber),
      });
    });
    child.stdin.on('error', () => undefined); // the process may exit before reading its input
    child.stdin.end(options.stdin ?? '');
  });
}

const signalNumbers: Partial<Record<NodeJS.Signals, number>> = { SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };

function lastLines(text: string, count: number): string {
  return text.trimEnd().split('\n').slice(-count).join('\n');
}

async function runClusterScript(args: readonly string[], env: Record<string, string> = {}): Promise<string> {
  const result = await runProcess('bash', [clusterScript, ...args], { env, timeoutMs: 180_000 });
  if (result.code !== 0) {
    throw new Error(
      `test/e2e/provision/cluster.sh ${args.join(' ')} failed (exit ${result.code}):\n${lastLines(result.stderr, 40)}`,
    );
  }
  return result.stdout;
}

/** Parses the `KEY='value'` lines that `cluster.sh start` prints. */
export function parseEnvFile(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^([A-Z0-9_]+)='(.*)'$/.exec(line.trim());
    if (match) values[match[1]] = match[2];
  }
  return values;
}

function requireValue(values: Record<string, string>, key: string): string {
  const value = values[key];
  if (!value) throw new Error(`cluster.sh start did not print ${key}`);
  return value;
}

/** One request to the API server as its admin (client certificate), trusting only its CA. */
function apiRequest(
  serverUrl: string,
  tls: { ca: Buffer; cert: Buffer; key: Buffer },
  requestOptions: ApiRequestOptions,
): Promise<ApiResponse> {
  const url = new URL(requestOptions.path, serverUrl);
  const body =
    requestOptions.body === undefined
      ? undefined
      : typeof requestOptions.body === 'string'
        ? requestOptions.body
        : JSON.stringify(requestOptions.body);
  return new Promise<ApiResponse>((resolve, reject) => {
    const outgoing = httpsRequest(
      url,
      {
        method: requestOptions.method,
        ...tls,
        timeout: requestOptions.timeoutMs ?? 30_000,
        headers: {
          Accept: 'application/json',
          ...(body === undefined
            ? {}
            : {
                'Content-Type': requestOptions.contentType ?? 'application/json',
                'Content-Length': Buffer.byteLength(body),
              }),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const bodyText = Buffer.concat(chunks).toString('utf8');
          resolve({
            statusCode: response.statusCode ?? 0,
            headers: response.headers,
            bodyText,
            json: () => JSON.parse(bodyText) as unknown,
          });
        });
      },
    );
    outgoing.on('timeout', () =>
      outgoing.destroy(new Error(`${requestOptions.method} ${url.pathname} timed out`)),
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** A kubeconfig file with a TokenRequest token of the ServiceAccount (`kubectl create token`). */
async function writeServiceAccountKubeconfig(
  cluster: Cluster,
  ca: Buffer,
  { namespace, name, durationSeconds }: { namespace: string; name: string; durationSeconds: number },
): Promise<string> {
  const result = await cluster.kubectl([
    '-n',
    namespace,
    'create',
    'token',
    name,
    `--duration=${durationSeconds}s`,
  ]);
  if (result.code !== 0) {
    throw new Error(`kubectl create token ${namespace}/${name} exited ${result.code}: ${result.stderr}`);
  }
  const kubeconfig = serviceAccountKubeconfigText(
    cluster.serverUrl,
    ca,
    `${namespace}-${name}`,
    result.stdout.trim(),
  );
  const kubeconfigFile = path.join(cluster.dataDir, `kubeconfig-${namespace}-${name}`);
  await writeFile(kubeconfigFile, kubeconfig, { mode: 0o600 });
  return kubeconfigFile;
}

/** Starts etcd and kube-apiserver on free loopback ports and waits until the API server is ready. */
export async function startCluster(options: StartClusterOptions = {}): Promise<Cluster> {
  const scriptEnv: Record<string, string> = { FOREWARN_E2E_OWNER_PID: String(process.pid) };
  if (options.readyTimeoutSeconds !== undefined) {
    scriptEnv.FOREWARN_E2E_READY_TIMEOUT = String(options.readyTimeoutSeconds);
  }
  if (options.apiServerExtraArgs) {
    scriptEnv.FOREWARN_E2E_APISERVER_EXTRA_ARGS = options.apiServerExtraArgs.join(' ');
  }
  const values = parseEnvFile(await runClusterScript(['start'], scriptEnv));
  const dataDir = requireValue(values, 'FOREWARN_E2E_DATA_DIR');
  const kubeconfigPath = requireValue(values, 'KUBECONFIG');
  const serverUrl = requireValue(values, 'FOREWARN_E2E_API_URL');
  const caFile = requireValue(values, 'FOREWARN_E2E_CA_FILE');
  const clientCertFile = requireValue(values, 'FOREWARN_E2E_CLIENT_CERT_FILE');
  const clientKeyFile = requireValue(values, 'FOREWARN_E2E_CLIENT_KEY_FILE');
  const kubectlPath = requireValue(values, 'FOREWARN_E2E_KUBECTL');
  const apiServerLogPath = requireValue(values, 'FOREWARN_E2E_APISERVER_LOG');
  const kubernetesVersion = requireValue(values, 'FOREWARN_E2E_KUBERNETES_VERSION');
  const adminToken = (await readFile(requireValue(values, 'FOREWARN_E2E_ADMIN_TOKEN_FILE'), 'utf8')).trim();
  const [ca, clientCert, clientKey] = await Promise.all(
    [caFile, clientCertFile, clientKeyFile].map((file) => readFile(file)),
  );
  const kubectlCacheDir = path.join(dataDir, 'kubectl-cache');

  const cluster: Cluster = {
    kubeconfigPath,
    serverUrl,
    apiPort: Number(requireValue(values, 'FOREWARN_E2E_API_PORT')),
    dataDir,
    caFile,
    clientCertFile,
    clientKeyFile,
    adminToken,
    kubectlPath,
    kubernetesVersion,
    apiServerLogPath,
    controllerManagerLogPath: values.FOREWARN_E2E_CONTROLLER_MANAGER_PID
      ? requireValue(values, 'FOREWARN_E2E_CONTROLLER_MANAGER_LOG')
      : '',
    env: { ...values, KUBECONFIG: kubeconfigPath },

    kubectl(args, runOptions = {}) {
      return runProcess(
        kubectlPath,
        [`--kubeconfig=${kubeconfigPath}`, `--cache-dir=${kubectlCacheDir}`, ...args],
        {
          ...runOptions,
          env: { KUBECONFIG: kubeconfigPath, ...runOptions.env },
        },
      );
    },

    apiRequest(requestOptions) {
      return apiRequest(serverUrl, { ca, cert: clientCert, key: clientKey }, requestOptions);
    },

    serviceAccountKubeconfig(namespace, name, durationSeconds = 3600) {
      return writeServiceAccountKubeconfig(cluster, ca, { namespace, name, durationSeconds });
    },

    readApiServerLog() {
      return readFile(apiServerLogPath, 'utf8');
    },

    async killApiServer() {
      await runClusterScript(['kill-apiserver', dataDir]);
    },

    async startApiServer() {
      await runClusterScript(['start-apiserver', dataDir]);
    },

    async stop() {
      await runClusterScript(['stop', dataDir]); // the script is idempotent
    },
  };
  return cluster;
}

/** A kubeconfig with an embedded CA and a bearer token (JSON is valid YAML). */
function serviceAccountKubeconfigText(serverUrl: string, ca: Buffer, user: string, token: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'forewarn-e2e',
        cluster: { server: serverUrl, 'certificate-authority-data': ca.toString('base64') },
      },
    ],
    users: [{ name: user, user: { token } }],
    contexts: [{ name: user, context: { cluster: 'forewarn-e2e', user } }],
    'current-context': user,
  });
}

export type Truthy<T> = Exclude<T, false | null | undefined | 0 | ''>;

export interface WaitForOptions {
  /** Pause between attempts (default 200 ms). */
  intervalMs?: number;
  /** Named in the timeout error. */
  description?: string;
}

/**
 * Calls `predicate` until it returns a truthy value (resolved with it) or `timeoutMs` passes
 * (rejected, naming the last value or error). A throwing predicate counts as "not yet".
 */
export async function waitFor<T>(
  predicate: () => T | Promise<T>,
  timeoutMs: number,
  options: WaitForOptions = {},
): Promise<Truthy<T>> {
  const deadline = Date.now() + timeoutMs;
  const intervalMs = options.intervalMs ?? 200;
  let lastOutcome = 'never called';
  for (;;) {
    try {
      const value = await predicate();
      if (value) return value as Truthy<T>;
      lastOutcome = `returned ${JSON.stringify(value)}`;
    } catch (error) {
      lastOutcome = `threw ${errorMessage(error)}`;
    }
    if (Date.now() >= deadline) {
      throw new Error(
        `waitFor ${options.description ?? 'condition'} timed out after ${timeoutMs} ms (last: ${lastOutcome})`,
      );
    }
    await new Promise((resolve) =>
      setTimeout(resolve, Math.min(intervalMs, Math.max(0, deadline - Date.now()))),
    );
  }
}
