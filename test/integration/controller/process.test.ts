import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

// The real controller process (`node dist/services/controller/main.js`), as `npm start` runs it, on
// a temp copy of the demo cluster: flags, JSON logs, readiness, re-indexing on file changes, a
// broken file in health, and a clean SIGTERM. It runs the build output and builds nothing itself:
// `npm test` runs `npm run build` first.

const repositoryRoot = path.join(__dirname, '../../..');
const controllerMain = path.join(repositoryRoot, 'dist/services/controller/main.js');
const demoManifests = path.join(repositoryRoot, 'examples/manifests');

/** The promise: a change is in the index within a second. */
const REINDEX_DEADLINE_MS = 1000;
const STARTUP_DEADLINE_MS = 8000;
const SHUTDOWN_DEADLINE_MS = 10_000;

interface LogLine {
  level: string;
  msg?: string;
  [field: string]: unknown;
}

interface RunningProcess {
  child: ChildProcess;
  stdoutLines: string[];
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const children: ChildProcess[] = [];
const temporaryDirectories: string[] = [];

function requireBuild(): void {
  if (!existsSync(controllerMain))
    throw new Error(
      `${path.relative(repositoryRoot, controllerMain)} is missing: run \`npm run build\` first (\`npm test\` does)`,
    );
}

function run(args: string[], env: NodeJS.ProcessEnv = {}): RunningProcess {
  requireBuild();
  const child = spawn(process.execPath, [controllerMain, ...args], {
    cwd: repositoryRoot,
    // A clean environment: no FOREWARN_* of the developer's shell leaks into the process.
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
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
    child.once('exit', (code, signal) => {
      if (partial) stdoutLines.push(partial);
      resolve({ code, signal });
    }),
  );
  return { child, stdoutLines, stderr: () => stderr, exited };
}

function parseLogLines(lines: string[]): LogLine[] {
  return lines.map((line) => {
    const parsed: unknown = JSON.parse(line);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new Error(`log line is not a JSON object: ${line}`);
    return parsed as LogLine;
  });
}

async function sleep(milliseconds: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, milliseconds));
}

/** Polls `probe` until it returns a value, at most `deadlineMs`; returns the value and the time taken. */
async function until<T>(
  what: string,
  deadlineMs: number,
  probe: () => Promise<T | undefined>,
): Promise<{ value: T; elapsedMs: number }> {
  const started = Date.now();
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return { value, elapsedMs: Date.now() - started };
    if (Date.now() - started > deadlineMs) throw new Error(`${what}: not within ${deadlineMs} ms`);
    await sleep(25);
  }
}

async function exitOf(running: RunningProcess, deadlineMs: number) {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>(
    (resolve) => (timer = setTimeout(() => resolve('timeout'), deadlineMs)),
  );
  try {
    const outcome = await Promise.race([running.exited, timeout]);
    if (outcome === 'timeout') throw new Error(`process did not exit within ${deadlineMs} ms`);
    return outcome;
  } finally {
    // A pending deadline timer would keep jest alive after the run.
    clearTimeout(timer);
  }
}

/** Starts the controller and waits for its bound port (from the log) and readiness. */
async function startController(manifests: string): Promise<{ running: RunningProcess; base: string }> {
  const running = run([
    '--manifests',
    manifests,
    '--port',
    '0',
    '--address',
    '127.0.0.1',
    '--detail-level',
    'full',
    '--mcp=false',
  ]);
  const { value: port } = await until('the "HTTP API listening" log line', STARTUP_DEADLINE_MS, async () => {
    if (running.child.exitCode !== null) throw new Error(`controller exited early: ${running.stderr()}`);
    const listening = parseLogLines(running.stdoutLines).find((line) => line.msg === 'HTTP API listening');
    return typeof listening?.port === 'number' ? listening.port : undefined;
  });
  const base = `http://127.0.0.1:${port}`;
  await until('readiness', STARTUP_DEADLINE_MS, async () =>
    (await fetch(`${base}/readyz`)).status === 200 ? true : undefined,
  );
  return { running, base };
}

async function getJson(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function constraintNames(report: Record<string, unknown>): string[] {
  const constraints = report.constraints as Array<{ name: string }>;
  return constraints.map((constraint) => constraint.name);
}

const ADDED_POLICY = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: process-test-deny-egress
  namespace: shop
spec:
  podSelector: {}
  policyTypes: [Egress]
`;

// A tab used as indentation, on line 4: a YAML syntax error.
const BROKEN_YAML = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: broken\n';

afterEach(async () => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  for (const directory of temporaryDirectories.splice(0))
    await rm(directory, { recursive: true, force: true });
});

describe('the controller process', () => {
  it('serves the demo cluster, follows file changes, reports a broken file and stops cleanly on SIGTERM', async () => {
    const manifests = await mkdtemp(path.join(tmpdir(), 'forewarn-process-'));
    temporaryDirectories.push(manifests);
    await cp(demoManifests, manifests, { recursive: true });
    const { running, base } = await startController(manifests);

    const initial = await getJson(`${base}/resources/reports/shop`);
    expect(initial.status).toBe(200);
    expect(constraintNames(initial.body)).toContain('default-deny-ingress');
    expect(constraintNames(initial.body)).not.toContain('process-test-deny-egress');

    // Edited: a NetworkPolicy appended to an existing file is in the report within a second.
    const policiesFile = path.join(manifests, 'network-policies.yaml');
    const originalPolicies = await readFile(policiesFile, 'utf8');
    await writeFile(policiesFile, `${originalPolicies}\n---\n${ADDED_POLICY}`);
    const added = await until('the added NetworkPolicy in the report', REINDEX_DEADLINE_MS, async () => {
      const report = await getJson(`${base}/resources/reports/shop`);
      return constraintNames(report.body).includes('process-test-deny-egress') ? report.body : undefined;
    });
    expect(added.value.constraintCount).toBe(Number(initial.body.constraintCount) + 1);

    // Removed from the file again: gone within a second, the file's other policies stay.
    await writeFile(policiesFile, originalPolicies);
    const removed = await until(
      'the removed NetworkPolicy gone from the report',
      REINDEX_DEADLINE_MS,
      async () => {
        const report = await getJson(`${base}/resources/reports/shop`);
        return constraintNames(report.body).includes('process-test-deny-egress') ? undefined : report.body;
      },
    );
    expect(removed.value.constraintCount).toBe(initial.body.constraintCount);

    // A new file, then deleted: in and out of the report.
    const addedFile = path.join(manifests, 'team/process-test-policy.yml');
    await mkdir(path.dirname(addedFile));
    await writeFile(addedFile, ADDED_POLICY);
    await until('the NetworkPolicy of a new file in the report', REINDEX_DEADLINE_MS, async () => {
      const report = await getJson(`${base}/resources/reports/shop`);
      return constraintNames(report.body).includes('process-test-deny-egress') ? true : undefined;
    });
    await unlink(addedFile);
    await until('the NetworkPolicy of a deleted file gone from the report', REINDEX_DEADLINE_MS, async () => {
      const report = await getJson(`${base}/resources/reports/shop`);
      return constraintNames(report.body).includes('process-test-deny-egress') ? undefined : true;
    });

    // Broken: health degraded with the file and line, while the rest keeps serving.
    await writeFile(path.join(manifests, 'broken.yaml'), BROKEN_YAML);
    const degraded = await until('health degraded by the broken file', REINDEX_DEADLINE_MS, async () => {
      const health = await getJson(`${base}/resources/health`);
      return health.body.status === 'degraded' ? health : undefined;
    });
    expect(degraded.value.status).toBe(200);
    expect(degraded.value.body.problems).toEqual([
      expect.objectContaining({ source: 'manifests: broken.yaml:4', message: expect.stringMatching(/Tabs/) }),
    ]);
    const stillServing = await getJson(`${base}/resources/reports/shop`);
    expect(stillServing.status).toBe(200);
    expect(stillServing.body.constraintCount).toBe(initial.body.constraintCount);
    // Below `full`, the problem keeps only what kind of thing is wrong.
    const summaryHealth = await getJson(`${base}/resources/health?detail_level=summary`);
    expect(summaryHealth.body.problems).toEqual([expect.objectContaining({ source: 'manifests' })]);
    expect((await getJson(`${base}/api/v1/health`)).body).toEqual({ status: 'degraded', synced: true });

    running.child.kill('SIGTERM');
    const exit = await exitOf(running, SHUTDOWN_DEADLINE_MS);
    expect(exit).toEqual({ code: 0, signal: null });

    // Logs: one JSON object per line, each with a level; the broken file was logged with its line.
    const logs = parseLogLines(running.stdoutLines.filter((line) => line !== ''));
    expect(logs.length).toBeGreaterThan(3);
    for (const line of logs)
      expect(line.level).toEqual(expect.stringMatching(/^(trace|debug|info|warn|error|fatal)$/));
    expect(logs).toContainEqual(expect.objectContaining({ level: 'warn', file: 'broken.yaml', line: 4 }));
    expect(logs.map((line) => line.msg)).toEqual(
      expect.arrayContaining(['first sync complete; ready', 'stopped']),
    );
    expect(running.stderr()).toBe('');
  });

  it('exits 2 naming the flag on an invalid flag value, an unknown flag or an invalid env var', async () => {
    for (const [args, env, named] of [
      [['--port', 'http'], {}, '--port'],
      [['--detail-level=everything'], {}, '--detail-level'],
      [['--no-such-flag'], {}, '--no-such-flag'],
      [[], { FOREWARN_LOG_LEVEL: 'loud' }, 'FOREWARN_LOG_LEVEL'],
    ] as Array<[string[], NodeJS.ProcessEnv, string]>) {
      const running = run(args, env);
      const exit = await exitOf(running, 5000);
      expect({ args, env, code: exit.code }).toEqual({ args, env, code: 2 });
      expect(running.stderr()).toContain(named);
      expect(running.stdoutLines.join('')).toBe('');
    }
  });

  it('prints help listing every flag and exits 0', async () => {
    const running = run(['--help']);
    const exit = await exitOf(running, 5000);
    expect(exit.code).toBe(0);
    const help = running.stdoutLines.join('\n');
    for (const flag of [
      '--manifests',
      '--kubeconfig',
      '--address',
      '--port',
      '--mcp-port',
      '--mcp',
      '--detail-level',
      '--rescan-interval',
      '--contact',
      '--flowobserver-address',
      '--own-webhook',
      '--mesh-root-namespace',
      '--missing-debounce',
      '--disable-missing-rule',
      '--log-level',
      '--help',
    ])
      expect(help).toContain(flag);
  });

  it('exits 1 with a fatal JSON log when the manifests directory does not exist', async () => {
    const running = run([
      '--manifests',
      '/nonexistent/forewarn-manifests',
      '--port',
      '0',
      '--address',
      '127.0.0.1',
    ]);
    const exit = await exitOf(running, 5000);
    expect(exit.code).toBe(1);
    const logs = parseLogLines(running.stdoutLines.filter((line) => line !== ''));
    expect(logs).toContainEqual(
      expect.objectContaining({ level: 'fatal', msg: 'controller failed to start' }),
    );
    expect(JSON.stringify(logs)).toContain('/nonexistent/forewarn-manifests');
  });
});
