import type { RunningController } from '../../../services/controller/runtime';
import type { RisksReport } from '../../../services/controller/risks/risk-view';
import { KubernetesApiTestServer } from '../../support/kubernetes-api-server';
import {
  startControllerOnTestServer,
  type ControllerOnTestServer,
} from '../../support/controller-on-test-server';
import { labelledDeployment as deployment, requiredLabelPolicy } from '../../support/required-label-policy';
import { waitUntil } from '../../support/kubernetes-api/wait-until';

// Workloads at risk through the whole controller (cluster source, reflectors, ingestion, tracker,
// HTTP) against the protocol-faithful Kubernetes API test server: the first evaluation after the
// sync, a policy created, a workload fixed and a policy deleted, each seen through the API.

const ADMISSION = 'admissionregistration.k8s.io/v1';

const [policy, binding] = requiredLabelPolicy({ name: 'require-team', label: 'team', actions: ['Deny'] });

describe('workloads at risk against the Kubernetes API test server', () => {
  const server = new KubernetesApiTestServer();
  let controller: RunningController;
  let running: ControllerOnTestServer | undefined;

  beforeAll(async () => {
    await server.start();
    for (const name of ['shop', 'blog'])
      server.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    server.create(deployment('shop', 'web'));
    server.create(deployment('shop', 'api', { team: 'shop' }));
    server.create(deployment('blog', 'site'));
    // A bare Pod is kept too; the policy below targets Deployments only.
    server.create({ ...deployment('shop', 'bare'), kind: 'Pod', apiVersion: 'v1' });
    running = await startControllerOnTestServer(server);
    controller = running.controller;
  });

  afterAll(async () => {
    await running?.stop();
    await server.stop();
  });

  async function risks(namespace: string): Promise<RisksReport> {
    const response = await fetch(`http://127.0.0.1:${controller.port}/resources/risks/${namespace}`);
    expect(response.status).toBe(200);
    return (await response.json()) as RisksReport;
  }
  const names = async (namespace: string) =>
    (await risks(namespace)).workloads.map((workload) => `${workload.kind}/${workload.name}`);

  async function until(check: () => Promise<boolean>, what: string): Promise<void> {
    let done = false;
    const poll = async () => {
      while (!done) {
        done = await check();
        if (!done) await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    void poll();
    await waitUntil(() => done, what, 10_000, 20);
  }

  it('evaluates every watched workload after the first sync: nothing at risk without a policy', async () => {
    await controller.risks.idle();
    expect(controller.risks.status()).toMatchObject({ evaluated: true, workloads: 4 });
    expect(await names('shop')).toEqual([]);
  });

  it('a policy created in the cluster puts the workloads it would reject at risk', async () => {
    server.create(policy);
    server.create(binding);
    await until(async () => (await names('shop')).length > 0, 'the policy reflected');
    expect(await names('shop')).toEqual(['Deployment/web']);
    expect(await names('blog')).toEqual(['Deployment/site']);
    const report = await fetch(`http://127.0.0.1:${controller.port}/resources/reports/shop`);
    expect(((await report.json()) as { atRiskCount: number }).atRiskCount).toBe(1);
  });

  it('a workload fixed in the cluster leaves; the policy deleted clears the rest', async () => {
    server.update(deployment('shop', 'web', { team: 'shop' }));
    await until(async () => !(await names('shop')).includes('Deployment/web'), 'the fix reflected');
    server.delete(ADMISSION, 'ValidatingAdmissionPolicyBinding', undefined, 'require-team');
    await until(async () => (await names('blog')).length === 0, 'the deletion reflected');
    expect(await names('shop')).toEqual([]);
  });
});
