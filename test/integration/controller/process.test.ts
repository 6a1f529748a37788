import { cp, mkdir, mkdtemp, readFile, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  ControllerProcesses,
  exitOf,
  getJson,
  parseLogLines,
  repositoryRoot,
  until,
} from '../../support/controller-process';

// The real controller process (`node dist/services/controller/main.js`), as `npm start` runs it, on
// a temp copy of the demo cluster: flags, JSON logs, readiness, re-indexing on file changes, a
// broken file in health, and a clean SIGTERM. It runs the build output and builds nothing itself:
// `npm test` runs `npm run build` first.

const demoManifests = path.join(repositoryRoot, 'examples/manifests');

/** The promise: a change is in the index within a second. */
const REINDEX_DEADLINE_MS = 1000;
const SHUTDOWN_DEADLINE_MS = 10_000;
/** Starting node to parse flags and exit: seconds on a loaded machine. A bound on failure, not a figure. */
const EXIT_DEADLINE_MS = 30_000;

// Each test starts node processes one after the other: room for a loaded machine.
jest.setTimeout(120_000);

const processes = new ControllerProcesses();

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

afterEach(() => processes.cleanUp());

describe('the controller process', () => {
  it('serves the demo cluster, follows file changes, reports a broken file and stops cleanly on SIGTERM', async () => {
    const manifests = await mkdtemp(path.join(tmpdir(), 'forewarn-process-'));
    processes.removeAfterwards(manifests);
    await cp(demoManifests, manifests, { recursive: true });
    const { running, base } = await processes.startController(manifests);

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
      const running = processes.run(args, env);
      const exit = await exitOf(running, EXIT_DEADLINE_MS);
      expect({ args, env, code: exit.code }).toEqual({ args, env, code: 2 });
      expect(running.stderr()).toContain(named);
      expect(running.stdoutLines.join('')).toBe('');
    }
  });

  it('prints help listing every flag and exits 0', async () => {
    const running = processes.run(['--help']);
    const exit = await exitOf(running, EXIT_DEADLINE_MS);
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
    const running = processes.run([
      '--manifests',
      '/nonexistent/forewarn-manifests',
      '--port',
      '0',
      '--address',
      '127.0.0.1',
    ]);
    const exit = await exitOf(running, EXIT_DEADLINE_MS);
    expect(exit.code).toBe(1);
    const logs = parseLogLines(running.stdoutLines.filter((line) => line !== ''));
    expect(logs).toContainEqual(
      expect.objectContaining({ level: 'fatal', msg: 'controller failed to start' }),
    );
    expect(JSON.stringify(logs)).toContain('/nonexistent/forewarn-manifests');
  });
});
