import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { runCli, type CliEnvironment } from './program';
import {
  fixtureControllerApp,
  demoClusterObjects,
  indexObjects,
} from '../../test/support/controller-fixtures';
import { RiskTracker } from '../controller/risks/risk-tracker';
import { computeImpact } from '../controller/risks/impact';
import { EXIT_CODES } from './exit-codes';

// `forewarn risks` and `forewarn impact` (issue 35) against a controller serving the demo cluster,
// and offline with --manifests.

const ROOT = path.join(__dirname, '../..');
const DEMO = path.join(ROOT, 'examples/manifests');
const PROPOSED = path.join(ROOT, 'examples/proposed/require-probes-enforced.yaml');

let server: Server;
let url: string;

beforeAll(async () => {
  const cluster = indexObjects([]);
  const risks = new RiskTracker(cluster.index);
  cluster.ingestor.onChange((object, removed) => risks.observe(object, removed));
  for (const object of demoClusterObjects()) cluster.ingestor.upsert(object);
  risks.start();
  risks.evaluatePendingNow();
  risks.stop();
  const app = fixtureControllerApp(cluster, {
    risks,
    impact: (objects) =>
      computeImpact(
        {
          index: cluster.index,
          ingestor: cluster.ingestor,
          workloads: (namespaces) => risks.keptWorkloads(namespaces),
          objectOf: (workload) => risks.objectOf(workload),
        },
        objects,
      ),
  });
  server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function forewarn(...args: string[]) {
  let stdout = '';
  let stderr = '';
  const environment: CliEnvironment = {
    stdout: { write: (chunk: string) => (stdout += chunk), isTTY: false },
    stderr: { write: (chunk: string) => (stderr += chunk) },
    env: {},
    readStdin: async () => '',
  };
  const code = await runCli(args, environment);
  return { code, stdout, stderr };
}

describe('forewarn risks', () => {
  it('prints the namespace workloads at risk from a controller, like check, and JSON as sent', async () => {
    const table = await forewarn('--url', url, 'risks', '-n', 'payments');
    expect(table.code).toBe(EXIT_CODES.ok);
    expect(table.stdout).toMatch(/^namespace payments: 1 workload would be rejected/);
    expect(table.stdout).toContain('Deployment payments/ledger (apps/deployments): WILL BE REJECTED');
    expect(table.stdout).toContain('will be rejected (');
    const json = await forewarn('--url', url, '-o', 'json', 'risks', '-n', 'payments');
    expect(JSON.parse(json.stdout)).toMatchObject({ namespace: 'payments', atRiskCount: 1 });
  });

  it('exits as check does with --fail-on, offline over every namespace of a directory', async () => {
    const run = await forewarn('risks', '-A', '--manifests', DEMO, '--fail-on', 'critical');
    expect(run.code).toBe(EXIT_CODES.critical);
    expect(run.stdout).toContain('namespace shop:');
    const clean = await forewarn('risks', '-n', 'no-such', '--manifests', DEMO, '--fail-on', 'warning');
    expect(clean.code).toBe(EXIT_CODES.ok);
  });

  it('refuses usage mistakes with exit 2', async () => {
    expect((await forewarn('--url', url, 'risks', '-A')).code).toBe(EXIT_CODES.usage);
    expect((await forewarn('--url', url, 'risks', '--manifests', DEMO)).code).toBe(EXIT_CODES.usage);
    expect((await forewarn('risks', '-n', 'Bad_NS')).code).toBe(EXIT_CODES.usage);
  });
});

describe('forewarn impact', () => {
  it('answers the same against a controller and offline', async () => {
    const online = await forewarn('--url', url, '-o', 'json', 'impact', '-f', PROPOSED);
    const offline = await forewarn('-o', 'json', 'impact', '-f', PROPOSED, '--manifests', DEMO);
    expect(online.code).toBe(EXIT_CODES.ok);
    const answer = JSON.parse(online.stdout) as {
      newlyRejectedCount: number;
      proposed: Array<{ replaces: boolean }>;
    };
    expect(answer.newlyRejectedCount).toBe(4);
    expect(answer.proposed).toEqual([expect.objectContaining({ replaces: true })]);
    expect(JSON.parse(offline.stdout)).toEqual(answer);
  });

  it('gates with --fail-on, and refuses files that are missing or not manifests', async () => {
    expect((await forewarn('--url', url, 'impact', '-f', PROPOSED, '--fail-on', 'critical')).code).toBe(
      EXIT_CODES.critical,
    );
    expect((await forewarn('--url', url, 'impact', '-f', '/no/such/file.yaml')).code).toBe(EXIT_CODES.usage);
    expect((await forewarn('--url', url, 'impact', '-f', path.join(ROOT, 'README.md'))).code).toBe(
      EXIT_CODES.usage,
    );
  });
});
