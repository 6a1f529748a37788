import type { KubernetesObject } from '../../model/kubernetes';
import { ConstraintIndex } from '../index/constraint-index';
import { indexObjects } from '../../../test/support/controller-fixtures';
import { indexLookup } from './index-lookup';
import { ObjectsInFiles } from './objects-in-files';
import { CANNOT_TELL, objectPath, objectsInCluster, operationOfApply } from '../verdicts/existing-objects';

// Issue 31: an object that exists is checked as the UPDATE the API server will see.

const deployment = (replicas: number, namespace?: string): KubernetesObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', ...(namespace ? { namespace } : {}) },
  spec: {
    replicas,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'web', image: 'web:1', resources: { requests: { cpu: '500m' } } }] },
    },
  },
});

describe('the operation of an apply', () => {
  it('is an UPDATE of the stored object when there is one, else a CREATE', async () => {
    const files = new ObjectsInFiles();
    files.observe(
      { ...deployment(3), metadata: { name: 'web', managedFields: [{}] } } as KubernetesObject,
      false,
    );
    const update = await operationOfApply(deployment(5, 'default'), files.find);
    expect(update.operation).toBe('UPDATE');
    // Kept without field ownership; an object without a namespace is in `default`.
    expect(update.oldObject?.metadata).toEqual({ name: 'web' });
    expect(await operationOfApply(deployment(5, 'shop'), files.find)).toEqual({ operation: 'CREATE' });
    files.observe(deployment(3), true);
    expect(await operationOfApply(deployment(5), files.find)).toEqual({ operation: 'CREATE' });
  });

  it('is a CREATE for an object without a name (generateName)', async () => {
    const find = jest.fn(() => Promise.resolve(deployment(3)));
    const unnamed = { ...deployment(5), metadata: { generateName: 'web-' } } as KubernetesObject;
    expect(await operationOfApply(unnamed, find)).toEqual({ operation: 'CREATE' });
    expect(find).not.toHaveBeenCalled();
  });
});

describe('stored objects on a cluster', () => {
  const readable = [
    { group: 'apps', resource: 'deployments' },
    { group: '', resource: 'services' },
  ];

  it('reads the object path of the kinds the controller reads, and nothing else', async () => {
    const paths: string[] = [];
    const find = objectsInCluster(
      (path) => {
        paths.push(path);
        return Promise.resolve(path.endsWith('/web') ? deployment(3, 'shop') : undefined);
      },
      readable,
      (object) => object.metadata?.namespace ?? 'default',
    );
    expect(await find(deployment(5, 'shop'))).toMatchObject({ spec: { replicas: 3 } });
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'web', namespace: 'shop' } };
    // Whether a Secret exists cannot be told: the controller does not read Secrets.
    expect(await find(secret)).toBe(CANNOT_TELL);
    expect(paths).toEqual(['/apis/apps/v1/namespaces/shop/deployments/web']);
    expect(objectPath({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'a b' } }, 'x')).toBe(
      '/api/v1/namespaces/x/services/a%20b',
    );
  });

  it('checks as a CREATE that may be an UPDATE when the read fails, and says why', async () => {
    const failures: unknown[] = [];
    const find = objectsInCluster(
      () => Promise.reject(new Error('forbidden')),
      readable,
      () => 'shop',
      (failure) => failures.push(failure),
    );
    expect(await operationOfApply(deployment(5, 'shop'), find)).toEqual({
      operation: 'CREATE',
      mayExist: true,
    });
    expect(failures).toHaveLength(1);
  });
});

describe('check through the index (MCP check, check --manifests)', () => {
  // 3 pods of 500m run: 1500m of 3 cpu used. Scaling to 5 adds 1 cpu: the API server admits it.
  const quota: KubernetesObject = {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: 'compute', namespace: 'default' },
    spec: { hard: { 'requests.cpu': '3' } },
    status: { hard: { 'requests.cpu': '3' }, used: { 'requests.cpu': '1500m' } },
  };

  async function quotaVerdict(index: ConstraintIndex, files: ObjectsInFiles) {
    const lookup = indexLookup(index, undefined, 'full', undefined, files.find);
    const entries = await lookup({
      object: deployment(5),
      namespace: 'default',
      resource: { group: 'apps', resource: 'deployments' },
      labels: { app: 'web' },
      clusterScoped: false,
    });
    return entries.find((entry) => entry.sourceKind === 'ResourceQuota')?.verdict;
  }

  it('admits scaling 3 -> 5 of a stored Deployment under a quota with room; a new one is rejected', async () => {
    const { index } = indexObjects([
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } },
      quota,
    ]);
    const files = new ObjectsInFiles();
    expect(await quotaVerdict(index, files)).toBe('violates');
    files.observe(deployment(3), false);
    expect(await quotaVerdict(index, files)).toBe('passes');
  });
});
