import {
  CoreV1Api,
  KubeConfig,
  makeInformer,
  Watch,
  type Informer,
  type ObjectCache,
  type KubernetesObject,
  type V1ConfigMap,
} from '@kubernetes/client-node';
import { KubernetesApiTestServer } from './kubernetes-api-server';
import { errorCode, waitUntil } from './kubernetes-api/wait-until';

// Watches as client-node consumes them: informers (list, then watch from the list's resourceVersion),
// the raw Watch class, and the failures of a real cluster: a 410 after the history window moved on,
// dropped connections, clean closes, and an API server restart.

const CONFIGMAPS = '/api/v1/namespaces/default/configmaps';

let server: KubernetesApiTestServer;
let kubeConfig: KubeConfig;
let core: CoreV1Api;
const cleanups: (() => unknown)[] = [];

beforeEach(async () => {
  server = new KubernetesApiTestServer({ bookmarkIntervalMs: 100 });
  await server.start();
  kubeConfig = server.kubeConfig();
  core = kubeConfig.makeApiClient(CoreV1Api);
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  await server.stop();
});

function configMap(name: string, labels: Record<string, string> = {}, data: Record<string, string> = {}) {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', labels }, data };
}

interface RecordingInformer {
  informer: Informer<V1ConfigMap> & ObjectCache<V1ConfigMap>;
  events: string[];
  errors: unknown[];
}

/** A started configmap informer that records `add a`, `update a`, `delete a` and errors. */
async function startInformer(): Promise<RecordingInformer> {
  const informer = makeInformer<V1ConfigMap>(kubeConfig, CONFIGMAPS, () =>
    core.listNamespacedConfigMap({ namespace: 'default' }),
  );
  const recording: RecordingInformer = { informer, events: [], errors: [] };
  informer.on('add', (object) => recording.events.push(`add ${object.metadata?.name}`));
  informer.on('update', (object) => recording.events.push(`update ${object.metadata?.name}`));
  informer.on('delete', (object) => recording.events.push(`delete ${object.metadata?.name}`));
  informer.on('error', (error) => recording.errors.push(error));
  cleanups.push(() => informer.stop());
  await informer.start();
  await server.waitForWatches({ pathIncludes: '/configmaps' });
  return recording;
}

interface RawWatch {
  events: { type: string; object: KubernetesObject }[];
  ended: () => boolean;
  endError: () => unknown;
}

/** A raw client-node Watch that records every event and how the stream ended. */
async function startRawWatch(path: string, query: Record<string, string | boolean>): Promise<RawWatch> {
  const events: RawWatch['events'] = [];
  let ended = false;
  let endError: unknown;
  const controller = await new Watch(kubeConfig).watch(
    path,
    query,
    (type, object: KubernetesObject) => events.push({ type, object }),
    (error: unknown) => {
      ended = true;
      endError = error;
    },
  );
  cleanups.push(() => controller.abort());
  return { events, ended: () => ended, endError: () => endError };
}

const summary = (watch: RawWatch) =>
  watch.events.map((event) => `${event.type} ${event.object.metadata?.name}`);

describe('informers', () => {
  test('see adds, updates and deletes made over HTTP and through the programmatic API', async () => {
    server.create(configMap('before'));
    const { events, errors } = await startInformer();
    expect(events).toEqual(['add before']);
    expect(
      server.requests.map((request) => `${request.method} ${request.path} ${JSON.stringify(request.query)}`),
    ).toEqual([
      `GET ${CONFIGMAPS} {}`,
      `GET ${CONFIGMAPS} {"watch":"true","resourceVersion":"${server.resourceVersion}"}`,
    ]);

    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'created' } } });
    server.patch('v1', 'ConfigMap', 'default', 'before', { data: { changed: 'yes' } });
    await core.deleteNamespacedConfigMap({ name: 'created', namespace: 'default' });
    await waitUntil(() => events.length === 4, 'the informer saw every change');
    expect(events).toEqual(['add before', 'add created', 'update before', 'delete created']);
    expect(errors).toEqual([]);
  });

  test('recover from a 410 on re-watch by relisting, and report the delete they missed', async () => {
    server.create(configMap('stays'));
    server.create(configMap('vanishes'));
    const { informer, events, errors } = await startInformer();
    const resumedFrom = server.resourceVersion;

    // Between the end of the watch and the informer's re-watch (client and server share this event
    // loop, so nothing runs in between) the object is deleted and the history compacted: the
    // informer comes back with a resourceVersion the server no longer has.
    server.closeWatchesCleanly();
    server.delete('v1', 'ConfigMap', 'default', 'vanishes');
    server.expireHistory();

    await waitUntil(
      () => events.includes('delete vanishes'),
      'the informer relisted and noticed the delete',
      3000,
    );
    await server.waitForWatches({ pathIncludes: '/configmaps' });
    const requests = server.requests.map(
      (request) => `${request.watch ? 'watch' : 'list'} ${request.query.resourceVersion ?? ''}`,
    );
    expect(requests).toEqual([
      'list ',
      `watch ${resumedFrom}`,
      `watch ${resumedFrom}`, // answered 200 + ERROR 410 Expired
      'list ',
      `watch ${server.resourceVersion}`,
    ]);
    expect(errors).toEqual([]);
    expect(informer.list().map((object) => object.metadata?.name)).toEqual(['stays']);
  });

  test('relist on an HTTP 410 answer to the watch', async () => {
    await startInformer();
    server.failNext({ watch: true, status: 410 });
    server.closeWatchesCleanly();
    await waitUntil(
      () => server.requests.filter((request) => !request.watch).length === 2,
      'the informer relisted',
    );
    await server.waitForWatches({ pathIncludes: '/configmaps' });
    expect(server.requests.map((request) => request.status)).toEqual([200, 200, 410, 200, undefined]);
  });

  test('resume after a clean close from the last resourceVersion, but stop for good on a dropped connection', async () => {
    const { events, errors } = await startInformer();
    server.create(configMap('first'));
    await waitUntil(() => events.length === 1, 'the informer saw the first object');
    const lastSeen = server.resourceVersion;

    expect(server.closeWatchesCleanly()).toBe(1);
    await server.waitForWatches({ pathIncludes: '/configmaps' });
    expect(server.openWatches()[0].resourceVersion).toBe(lastSeen);
    expect(errors).toEqual([]);

    expect(server.dropWatches()).toBe(1);
    await waitUntil(() => errors.length === 1, 'the informer reported the dropped connection');
    expect(String(errors[0])).toMatch(/premature close/i);
    server.create(configMap('unseen'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(server.openWatches()).toEqual([]);
    expect(events).toEqual(['add first']);
  });

  test('report a failing list as an error and do not watch', async () => {
    server.failNext({ method: 'GET', pathIncludes: '/configmaps', watch: false, status: 500 });
    const informer = makeInformer<V1ConfigMap>(kubeConfig, CONFIGMAPS, () =>
      core.listNamespacedConfigMap({ namespace: 'default' }),
    );
    const errors: unknown[] = [];
    informer.on('error', (error) => errors.push(error));
    cleanups.push(() => informer.stop());
    await informer.start();
    expect(errors.map(errorCode)).toEqual([500]);
    expect(server.openWatches()).toEqual([]);
  });
});

describe('raw watches', () => {
  test('without a resourceVersion start with ADDED for every current object', async () => {
    server.create(configMap('a'));
    server.create(configMap('b'));
    const watch = await startRawWatch(CONFIGMAPS, {});
    await waitUntil(() => watch.events.length === 2, 'the initial state arrived');
    expect(summary(watch)).toEqual(['ADDED a', 'ADDED b']);
    expect(watch.events[0].object).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap' });
  });

  test('from a resourceVersion replay the history; DELETED carries the last state with a new resourceVersion', async () => {
    const from = server.resourceVersion;
    server.create(configMap('a', {}, { v: '1' }));
    const updated = server.patch('v1', 'ConfigMap', 'default', 'a', { data: { v: '2' } });
    const deleted = server.delete('v1', 'ConfigMap', 'default', 'a');
    const watch = await startRawWatch(CONFIGMAPS, { resourceVersion: from });
    await waitUntil(() => watch.events.length === 3, 'the replay arrived');
    expect(summary(watch)).toEqual(['ADDED a', 'MODIFIED a', 'DELETED a']);
    const last = watch.events[2].object as V1ConfigMap;
    expect(last.data).toEqual({ v: '2' });
    expect(Number(last.metadata?.resourceVersion)).toBeGreaterThan(Number(updated.metadata.resourceVersion));
    expect(last.metadata?.resourceVersion).toBe(deleted.metadata.resourceVersion);
  });

  test('from a resourceVersion older than the history window get ERROR 410 Expired and the end', async () => {
    server.setHistoryLimit(2);
    const from = server.resourceVersion;
    for (const name of ['a', 'b', 'c']) server.create(configMap(name));
    const watch = await startRawWatch(CONFIGMAPS, { resourceVersion: from });
    await waitUntil(() => watch.ended(), 'the expired watch ended');
    expect(watch.events).toEqual([
      {
        type: 'ERROR',
        object: expect.objectContaining({ kind: 'Status', status: 'Failure', reason: 'Expired', code: 410 }),
      },
    ]);
    expect(watch.endError()).toBeNull();
  });

  test('with a label selector see objects enter (ADDED) and leave (DELETED) the selection', async () => {
    server.create(configMap('a', { app: 'web' }));
    const watch = await startRawWatch(CONFIGMAPS, {
      resourceVersion: server.resourceVersion,
      labelSelector: 'app=web',
    });
    await server.waitForWatches();
    server.patch('v1', 'ConfigMap', 'default', 'a', { metadata: { labels: { app: 'db' } } });
    server.create(configMap('ignored', { app: 'db' }));
    server.patch('v1', 'ConfigMap', 'default', 'a', { metadata: { labels: { app: 'web' } } });
    server.patch('v1', 'ConfigMap', 'default', 'a', { data: { x: '1' } });
    await waitUntil(() => watch.events.length === 3, 'three events arrived');
    expect(summary(watch)).toEqual(['DELETED a', 'ADDED a', 'MODIFIED a']);
  });

  test('receive BOOKMARK events carrying only the current resourceVersion when they allow them', async () => {
    const watch = await startRawWatch(CONFIGMAPS, {
      resourceVersion: server.resourceVersion,
      allowWatchBookmarks: true,
    });
    await server.waitForWatches();
    server.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'other-kind', namespace: 'default' },
    });
    await waitUntil(() => watch.events.length >= 1, 'a bookmark arrived');
    expect(watch.events[0]).toEqual({
      type: 'BOOKMARK',
      object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: server.resourceVersion } },
    });
    expect(server.openWatches()[0].allowBookmarks).toBe(true);
  });

  test('end cleanly after timeoutSeconds', async () => {
    const started = Date.now();
    const watch = await startRawWatch(CONFIGMAPS, {
      resourceVersion: server.resourceVersion,
      timeoutSeconds: '1',
    });
    await waitUntil(() => watch.ended(), 'the watch timed out');
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(watch.endError()).toBeNull();
  });
});

describe('faults', () => {
  test('a restart drops every connection, refuses connections while down, and comes back with the changes', async () => {
    server.create(configMap('survivor'));
    server.create(configMap('deleted-while-down'));
    const { errors } = await startInformer();
    const before = server.resourceVersion;
    let refused: unknown;

    await server.restart({
      whileDown: async (down) => {
        down.delete('v1', 'ConfigMap', 'default', 'deleted-while-down');
        refused = await core
          .listNamespacedConfigMap({ namespace: 'default' })
          .catch((error: unknown) => error);
      },
    });
    expect(String(refused)).toMatch(/ECONNREFUSED/);
    await waitUntil(() => errors.length === 1, 'the informer lost its watch');

    const list = await core.listNamespacedConfigMap({ namespace: 'default' });
    expect(list.items.map((item) => item.metadata?.name)).toEqual(['survivor']);
    // Like a real API server, whose watch cache starts empty, resuming from before the restart is a 410.
    const resumed = await startRawWatch(CONFIGMAPS, { resourceVersion: before });
    await waitUntil(() => resumed.ended(), 'the resumed watch was refused');
    expect(resumed.events[0].object).toMatchObject({ code: 410 });
  });

  test('a restart that keeps the history lets a watch resume and replay the delete', async () => {
    server.create(configMap('doomed'));
    const before = server.resourceVersion;
    await server.restart({
      keepHistory: true,
      whileDown: (down) => void down.delete('v1', 'ConfigMap', 'default', 'doomed'),
    });
    const resumed = await startRawWatch(CONFIGMAPS, { resourceVersion: before });
    await waitUntil(() => resumed.events.length === 1, 'the delete was replayed');
    expect(summary(resumed)).toEqual(['DELETED doomed']);
  });

  test('hangNext never answers until the server stops; delayNext answers late', async () => {
    server.hangNext({ pathIncludes: '/configmaps' });
    const abort = new AbortController();
    const hung = fetch(`${server.url}${CONFIGMAPS}`, {
      headers: { Authorization: `Bearer ${server.token}` },
      signal: abort.signal,
    }).catch((error: unknown) => error);
    await waitUntil(() => server.requests.length === 1, 'the hung request arrived');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(server.requests[0].status).toBeUndefined();
    abort.abort();
    expect(String(await hung)).toMatch(/AbortError|aborted/);

    server.delayNext({ method: 'GET', ms: 250 });
    const started = Date.now();
    await core.listNamespacedConfigMap({ namespace: 'default' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(240);

    server.hangNext({});
    const pending = core.listNamespacedConfigMap({ namespace: 'default' }).catch((error: unknown) => error);
    await waitUntil(() => server.requests.length === 3, 'the hung request arrived');
    await server.stop();
    expect(String(await pending)).toMatch(/socket hang up|ECONNRESET/);
  });

  test('failNext answers the given status for the given number of matching requests', async () => {
    server.failNext({ method: 'GET', pathIncludes: '/secrets', status: 403, times: 2 });
    const statuses: (number | undefined)[] = [];
    for (let attempt = 0; attempt < 3; attempt += 1) {
      statuses.push(
        await core.listNamespacedSecret({ namespace: 'default' }).then(
          () => 200,
          (error: unknown) => errorCode(error),
        ),
      );
    }
    expect(statuses).toEqual([403, 403, 200]);
    expect((await core.listNamespacedConfigMap({ namespace: 'default' })).items).toEqual([]);
  });
});
