import type { KubernetesObject } from '../../model/kubernetes';
import { silentLogger } from '../../logging/logger';
import { indexObjects, runtimeStateFor, syncedSource } from '../../../test/support/controller-fixtures';
import { createAdmissionCheckAnswerer, type AdmissionCheckAnswerer } from './admission-check-route';
import { startAdmissionWarmUp, warmUpAdmissionChecks, warmUpCheckBody } from './admission-warm-up';

const namespace = (name: string): KubernetesObject => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name },
});
const quota = (name: string): KubernetesObject => ({
  apiVersion: 'v1',
  kind: 'ResourceQuota',
  metadata: { name: 'compute', namespace: name },
  spec: { hard: { 'requests.cpu': '3' } },
  status: { hard: { 'requests.cpu': '3' }, used: { 'requests.cpu': '2950m' } },
});

/** An answerer that keeps what it was asked. */
function recordingAnswerer(): AdmissionCheckAnswerer & { asked: string[] } {
  const asked: string[] = [];
  const answerer = (text: unknown) => {
    asked.push(String(text));
    return { status: 200, json: '{}' };
  };
  return Object.assign(answerer, { asked });
}

describe('warmUpCheckBody', () => {
  it('is the webhook check of a Deployment or a Pod in the namespace, distinct each time', () => {
    const deployment = JSON.parse(warmUpCheckBody('shop', 0)) as unknown;
    const pod = JSON.parse(warmUpCheckBody('shop', 1)) as unknown;
    expect(deployment).toMatchObject({
      operation: 'CREATE',
      view: 'warnings',
      object: { kind: 'Deployment', metadata: { namespace: 'shop' } },
    });
    expect(pod).toMatchObject({ object: { kind: 'Pod', metadata: { namespace: 'shop' } } });
    expect(warmUpCheckBody('shop', 2)).not.toBe(warmUpCheckBody('shop', 0));
  });

  it('gets verdicts from the real answerer: the namespace quota is evaluated on it', () => {
    const cluster = indexObjects([namespace('shop'), quota('shop')]);
    const answerer = createAdmissionCheckAnswerer({
      index: cluster.index,
      runtimeState: () => runtimeStateFor(cluster, syncedSource({ synced: true })),
    });
    const answer = answerer(warmUpCheckBody('shop', 0), 'full');
    expect(answer.status).toBe(200);
    const body = JSON.parse(answer.json) as { constraints: Array<{ summary: string }> };
    expect(body.constraints).toHaveLength(1);
    expect(body.constraints[0].summary).toContain('would exceed the quota');
  });
});

describe('warmUpAdmissionChecks', () => {
  const immediate = (next: () => void) => setImmediate(next);

  it('goes round the first namespaces by name until its count, every body distinct', async () => {
    const answerer = recordingAnswerer();
    const outcome = await warmUpAdmissionChecks({
      answerer,
      namespaces: () => ['c', 'a', 'b'],
      maxNamespaces: 2,
      maxChecks: 6,
      yieldToRequests: immediate,
    });
    expect(outcome).toMatchObject({ checks: 6, namespaces: 2 });
    const namespaces = answerer.asked.map(
      (body) =>
        (JSON.parse(body) as { object: { metadata: { namespace: string } } }).object.metadata.namespace,
    );
    expect(namespaces).toEqual(['a', 'b', 'a', 'b', 'a', 'b']);
    expect(new Set(answerer.asked).size).toBe(6);
  });

  it('drops a namespace whose one check takes longer than a slice, and keeps warming the others', async () => {
    let clock = 0;
    const asked: string[] = [];
    const answerer = (text: unknown) => {
      const namespace = (JSON.parse(String(text)) as { object: { metadata: { namespace: string } } }).object
        .metadata.namespace;
      asked.push(namespace);
      // The hostile namespace's checks take 20 ms each, the others' 1 ms.
      clock += namespace === 'hostile' ? 20 : 1;
      return { status: 200, json: '{}' };
    };
    const outcome = await warmUpAdmissionChecks({
      answerer,
      namespaces: () => ['hostile', 'shop'],
      maxChecks: 8,
      sliceMs: 5,
      now: () => clock,
      yieldToRequests: immediate,
    });
    expect(outcome.checks).toBe(8);
    expect(asked.filter((namespace) => namespace === 'hostile')).toHaveLength(1);
    expect(asked.filter((namespace) => namespace === 'shop')).toHaveLength(7);
  });

  it('gives requests their turn between slices and stops at its time budget', async () => {
    const answerer = recordingAnswerer();
    let clock = 0;
    let turns = 0;
    const outcome = await warmUpAdmissionChecks({
      answerer,
      namespaces: () => ['shop'],
      maxChecks: 1000,
      sliceMs: 3,
      budgetMs: 12,
      // Each reading advances 1 ms.
      now: () => clock++,
      yieldToRequests: (next) => {
        turns++;
        setImmediate(next);
      },
    });
    expect(outcome.checks).toBeLessThan(1000);
    expect(outcome.busyMs).toBeGreaterThanOrEqual(12);
    // Each slice (about 4 ms of this clock) waits for a turn: three or more slices for 12 ms.
    expect(turns).toBeGreaterThanOrEqual(3);
  });

  it('gives its objects the labels of a workload of the namespace, so label selectors pick them', async () => {
    const answerer = recordingAnswerer();
    await warmUpAdmissionChecks({
      answerer,
      namespaces: () => ['shop', 'empty'],
      labelsIn: (name) => (name === 'shop' ? { app: 'web' } : undefined),
      maxChecks: 4,
      yieldToRequests: immediate,
    });
    const labels = answerer.asked.map((body) => {
      const { object } = JSON.parse(body) as {
        object: { metadata: { namespace: string; labels: Record<string, string> } };
      };
      return `${object.metadata.namespace}:${object.metadata.labels.app}`;
    });
    expect(labels).toEqual(['empty:forewarn-warm-up-0', 'shop:web', 'empty:forewarn-warm-up-2', 'shop:web']);
  });

  it('does nothing without a namespace that has constraints', async () => {
    const answerer = recordingAnswerer();
    const outcome = await warmUpAdmissionChecks({
      answerer,
      namespaces: () => [],
      yieldToRequests: immediate,
    });
    expect(outcome).toEqual({ checks: 0, namespaces: 0, busyMs: 0 });
    expect(answerer.asked).toHaveLength(0);
  });

  it('ends at the first answer that throws', async () => {
    let calls = 0;
    const outcome = await warmUpAdmissionChecks({
      answerer: () => {
        calls++;
        throw new Error('broken');
      },
      namespaces: () => ['shop'],
      yieldToRequests: immediate,
    });
    expect(outcome.checks).toBe(0);
    expect(calls).toBe(1);
  });
});

describe('startAdmissionWarmUp', () => {
  it('checks only the namespaces with constraints', async () => {
    const cluster = indexObjects([namespace('shop'), quota('shop'), namespace('empty')]);
    const outcome = await startAdmissionWarmUp(
      {
        index: cluster.index,
        runtimeState: () => runtimeStateFor(cluster, syncedSource({ synced: true })),
      },
      silentLogger(),
    );
    expect(outcome.namespaces).toBe(1);
    expect(outcome.checks).toBeGreaterThan(0);
  });
});
