import request from 'supertest';
import type { KubernetesObject } from '../../model/kubernetes';
import { silentLogger } from '../../logging/logger';
import {
  FIXED_NOW,
  indexObjects,
  runtimeStateFor,
  syncedSource,
} from '../../../test/support/controller-fixtures';
import { createControllerApp, createControllerRoutes, type ControllerAppDependencies } from './app';

// Issue 31: `forewarn check` sends no operation; the controller checks an object that exists as the
// UPDATE the API server will see. The webhook says its operation, which is used as given.

const deployment = (replicas: number): KubernetesObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'shop' },
  spec: {
    replicas,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'web', image: 'web:1', resources: { requests: { cpu: '500m' } } }] },
    },
  },
});
const quota: KubernetesObject = {
  apiVersion: 'v1',
  kind: 'ResourceQuota',
  metadata: { name: 'compute', namespace: 'shop' },
  spec: { hard: { 'requests.cpu': '3' } },
  status: { hard: { 'requests.cpu': '3' }, used: { 'requests.cpu': '1500m' } },
};

describe('admission-check without an operation', () => {
  const cluster = indexObjects([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } }, quota]);
  const looked: string[] = [];
  const dependencies: ControllerAppDependencies = {
    index: cluster.index,
    runtimeState: () => runtimeStateFor(cluster, syncedSource({ synced: true })),
    configuredDetailLevel: 'full',
    clock: () => FIXED_NOW,
    logger: silentLogger(),
    findExisting: (object) => {
      looked.push(`${object.kind}/${object.metadata?.name}`);
      return Promise.resolve(object.metadata?.name === 'web' ? deployment(3) : undefined);
    },
  };

  const quotaVerdict = async (app: ReturnType<typeof createControllerApp>, body: unknown) => {
    const answer = await request(app)
      .post('/api/v1/admission-check')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify(body));
    expect(answer.status).toBe(200);
    const entries = (answer.body as { constraints: Array<{ sourceKind: string; verdict: string }> })
      .constraints;
    return entries.find((entry) => entry.sourceKind === 'ResourceQuota')?.verdict;
  };

  it.each([
    ['the fast path', createControllerApp(dependencies)],
    ['express', createControllerRoutes(dependencies)],
  ])('checks a stored object as its UPDATE (%s)', async (_name, app) => {
    looked.length = 0;
    // Scaling the stored 3 replicas to 5 adds 1 cpu: 2500m of 3, admitted.
    expect(await quotaVerdict(app, { object: deployment(5) })).toBe('passes');
    expect(looked).toEqual(['Deployment/web']);
    // A new Deployment of 5 needs 2500m: rejected.
    const fresh = { ...deployment(5), metadata: { name: 'api', namespace: 'shop' } };
    expect(await quotaVerdict(app, { object: fresh })).toBe('violates');
  });

  it('takes the operation the webhook says, without looking anything up', async () => {
    looked.length = 0;
    const app = createControllerApp(dependencies);
    expect(await quotaVerdict(app, { operation: 'CREATE', object: deployment(5) })).toBe('violates');
    expect(
      await quotaVerdict(app, { operation: 'UPDATE', object: deployment(5), oldObject: deployment(3) }),
    ).toBe('passes');
    expect(looked).toEqual([]);
  });
});
