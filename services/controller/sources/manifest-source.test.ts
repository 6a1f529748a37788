import { mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { AdapterRegistry } from '../adapters/registry';
import { ManifestFileSource } from './manifest-files';
import { isClusterScoped, manifestObjectKey, parseManifest } from './manifest-parsing';
import type { KubernetesObjectSink } from './source';
import { createLogger } from '../../logging/logger';
import type { KubernetesObject } from '../../model/kubernetes';

// The `--manifests DIR` source: pure parsing first, then the file watcher on a real temp directory.
// Waits use `source.settled()` plus short bounded polling, never a fixed sleep, and every wait is
// capped at the re-index bound the issue promises (a second after a change).

const REINDEX_DEADLINE_MS = 1000;

function configMap(name: string, extra: string = '', namespace?: string): string {
  return [
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    `  name: ${name}`,
    ...(namespace ? [`  namespace: ${namespace}`] : []),
    ...(extra ? [extra] : []),
  ].join('\n');
}

describe('parseManifest', () => {
  it('reads every document of a multi-document YAML file, skipping empty ones', () => {
    const content = [
      '---',
      configMap('first', '', 'shop'),
      '---',
      '# only a comment',
      '---',
      configMap('second', '', 'payments'),
      '',
    ].join('\n');
    const parsed = parseManifest('two.yaml', content);
    expect(parsed.problems).toEqual([]);
    expect(parsed.objects.map((object) => `${object.metadata?.namespace}/${object.metadata?.name}`)).toEqual([
      'shop/first',
      'payments/second',
    ]);
  });

  it('flattens `kind: List` and `<Kind>List` objects', () => {
    const content = [
      'apiVersion: v1',
      'kind: List',
      'items:',
      '  - { apiVersion: v1, kind: ConfigMap, metadata: { name: a } }',
      '  - apiVersion: networking.k8s.io/v1',
      '    kind: NetworkPolicyList',
      '    items:',
      '      - { apiVersion: networking.k8s.io/v1, kind: NetworkPolicy, metadata: { name: b, namespace: shop } }',
    ].join('\n');
    const parsed = parseManifest('list.yaml', content);
    expect(parsed.problems).toEqual([]);
    expect(parsed.objects.map((object) => `${object.kind} ${object.metadata?.name}`)).toEqual([
      'ConfigMap a',
      'NetworkPolicy b',
    ]);
  });

  it('reads JSON files, including a JSON List', () => {
    const single = JSON.stringify(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'from-json' }, data: { a: '1' } },
      null,
      '\t',
    );
    expect(parseManifest('one.json', single).objects).toEqual([
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'from-json', namespace: 'default' },
        data: { a: '1' },
      },
    ]);
    const list = JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } }],
    });
    expect(parseManifest('list.json', list).objects).toEqual([
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } },
    ]);
  });

  it('defaults the namespace of namespaced kinds to `default` and keeps an explicit one', () => {
    const content = [
      configMap('implicit'),
      '---',
      configMap('explicit', '', 'shop'),
      '---',
      configMap('empty-namespace', '  namespace: ""'),
    ].join('\n');
    const namespaces = parseManifest('ns.yaml', content).objects.map((object) => object.metadata?.namespace);
    expect(namespaces).toEqual(['default', 'shop', 'default']);
  });

  it('gives cluster-scoped kinds no namespace, even when the file sets one', () => {
    const clusterScoped = [
      ['v1', 'Namespace'],
      ['admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration'],
      ['admissionregistration.k8s.io/v1', 'ValidatingAdmissionPolicyBinding'],
      ['cilium.io/v2', 'CiliumClusterwideNetworkPolicy'],
      ['projectcalico.org/v3', 'GlobalNetworkPolicy'],
      ['crd.projectcalico.org/v1', 'GlobalNetworkPolicy'],
      ['kyverno.io/v1', 'ClusterPolicy'],
      ['kyverno.io/v2', 'ClusterCleanupPolicy'],
      ['policies.kyverno.io/v1alpha1', 'ValidatingPolicy'],
      ['policy.networking.k8s.io/v1alpha1', 'AdminNetworkPolicy'],
      // Gatekeeper makes one kind per template: the whole group is cluster-scoped.
      ['constraints.gatekeeper.sh/v1beta1', 'K8sRequiredLabels'],
    ];
    const content = clusterScoped
      .map(([apiVersion, kind]) =>
        [`apiVersion: ${apiVersion}`, `kind: ${kind}`, 'metadata:', '  name: x', '  namespace: shop'].join(
          '\n',
        ),
      )
      .join('\n---\n');
    const parsed = parseManifest('cluster.yaml', content);
    expect(parsed.objects).toHaveLength(clusterScoped.length);
    for (const object of parsed.objects) expect(object.metadata).toEqual({ name: 'x' });
    // Namespaced kinds of the same groups keep theirs.
    expect(isClusterScoped('kyverno.io/v1', 'Policy')).toBe(false);
    expect(isClusterScoped('cilium.io/v2', 'CiliumNetworkPolicy')).toBe(false);
  });

  it('reports documents without kind or name with file and line, and keeps the others', () => {
    const content = [
      configMap('good'), // lines 1-4
      '---', // 5
      '# comment lines before a document do not count', // 6
      'apiVersion: v1', // 7
      'kind: ConfigMap', // 8
      'metadata: {}', // 9
      '---', // 10
      'metadata:', // 11
      '  name: no-kind', // 12
      '---', // 13
      '- a list, not an object', // 14
    ].join('\n');
    const parsed = parseManifest('dir/mixed.yaml', content);
    expect(parsed.objects.map((object) => object.metadata?.name)).toEqual(['good']);
    expect(parsed.problems).toEqual([
      { file: 'dir/mixed.yaml', line: 7, message: 'ConfigMap has no metadata.name' },
      { file: 'dir/mixed.yaml', line: 11, message: 'object has no apiVersion or kind' },
      { file: 'dir/mixed.yaml', line: 14, message: expect.stringMatching(/not a Kubernetes object/) },
    ]);
  });

  it('reports a YAML syntax error with its line and still reads the other documents', () => {
    const content = [
      configMap('before'), // 1-4
      '---', // 5
      'apiVersion: v1', // 6
      'kind: ConfigMap', // 7
      'metadata:', // 8
      '\tname: tab-indented', // 9
      '---', // 10
      configMap('after'), // 11-14
    ].join('\n');
    const parsed = parseManifest('syntax.yaml', content);
    expect(parsed.objects.map((object) => object.metadata?.name)).toEqual(['before', 'after']);
    expect(parsed.problems).toEqual([
      { file: 'syntax.yaml', line: 9, message: expect.stringMatching(/Tabs are not allowed as indentation/) },
    ]);
  });

  it('turns an alias bomb into a problem instead of throwing', () => {
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (const name of ['b', 'c', 'd']) {
      const previous = String.fromCharCode(name.charCodeAt(0) - 1);
      levels.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(', ')}]`);
    }
    const parsed = parseManifest('bomb.yaml', levels.join('\n'));
    expect(parsed.objects).toEqual([]);
    expect(parsed.problems).toEqual([
      { file: 'bomb.yaml', line: 1, message: expect.stringMatching(/alias/) },
    ]);
  });
});

/** Records what the source feeds the index. */
class RecordingSink implements KubernetesObjectSink {
  readonly objects = new Map<string, KubernetesObject>();
  readonly events: string[] = [];

  upsert(object: KubernetesObject): void {
    this.objects.set(manifestObjectKey(object), object);
    this.events.push(`upsert ${object.metadata?.name}`);
  }

  delete(object: KubernetesObject): void {
    this.objects.delete(manifestObjectKey(object));
    this.events.push(`delete ${object.metadata?.name}`);
  }

  names(): string[] {
    return [...this.objects.values()].map((object) => object.metadata?.name ?? '').sort();
  }

  dataOf(name: string): unknown {
    return [...this.objects.values()].find((object) => object.metadata?.name === name)?.data;
  }
}

/** Collects the JSON log lines the source writes. */
function recordingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean))
        lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger({ service: 'controller', level: 'debug', destination }) };
}

describe('ManifestFileSource', () => {
  let directory: string;
  let sink: RecordingSink;
  let log: ReturnType<typeof recordingLogger>;
  let source: ManifestFileSource | undefined;

  beforeEach(async () => {
    directory = await mkdtemp(path.join(tmpdir(), 'forewarn-manifests-'));
    sink = new RecordingSink();
    log = recordingLogger();
  });

  afterEach(async () => {
    await source?.stop();
    source = undefined;
    await rm(directory, { recursive: true, force: true });
  });

  async function write(relative: string, content: string): Promise<void> {
    await mkdir(path.dirname(path.join(directory, relative)), { recursive: true });
    await writeFile(path.join(directory, relative), content);
  }

  async function startSource(): Promise<ManifestFileSource> {
    source = new ManifestFileSource({ directory, sink, registry: new AdapterRegistry(), logger: log.logger });
    await source.start();
    return source;
  }

  /** Waits until `condition` holds, at most the re-index bound; returns how long it took. */
  async function reindexed(condition: () => boolean, what: string): Promise<number> {
    const started = Date.now();
    for (;;) {
      await source?.settled();
      if (condition()) return Date.now() - started;
      if (Date.now() - started > REINDEX_DEADLINE_MS)
        throw new Error(`not re-indexed within ${REINDEX_DEADLINE_MS} ms: ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('indexes every .yaml, .yml and .json file under the directory, recursively, on start', async () => {
    await write('a.yaml', configMap('from-yaml'));
    await write('nested/deeper/b.yml', configMap('from-yml'));
    await write(
      'nested/c.JSON',
      JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'from-json' } }),
    );
    await write('notes.txt', configMap('ignored-txt'));
    await write('README.md', '# not a manifest');
    const started = await startSource();
    expect(sink.names()).toEqual(['from-json', 'from-yaml', 'from-yml']);
    const status = started.status();
    expect(status).toMatchObject({ synced: true, connected: true, problems: [] });
    expect(started.isSynced()).toBe(true);
    expect(status.lastScan).toBeInstanceOf(Date);
    // Files can hold any kind, so every registered adapter is reported enabled.
    expect(Object.values(status.adapters).every((adapter) => adapter?.enabled === true)).toBe(true);
    expect(status.adapters.networkpolicy).toMatchObject({ enabled: true, watchFailing: false });
  });

  it('refuses to start on a path that is not a directory, naming the flag', async () => {
    source = new ManifestFileSource({
      directory: path.join(directory, 'missing'),
      sink,
      registry: new AdapterRegistry(),
      logger: log.logger,
    });
    await expect(source.start()).rejects.toThrow(/--manifests .*missing.* is not a readable directory/);
    expect(source.status().synced).toBe(false);
    expect(source.isSynced()).toBe(false);
  });

  it('indexes a file added after start within a second', async () => {
    await write('a.yaml', configMap('first'));
    await startSource();
    await write('sub/b.yaml', configMap('added'));
    const took = await reindexed(() => sink.names().includes('added'), 'added file');
    expect(took).toBeLessThanOrEqual(REINDEX_DEADLINE_MS);
    expect(sink.names()).toEqual(['added', 'first']);
  });

  it('re-indexes a changed file, upserting only what changed', async () => {
    await write(
      'a.yaml',
      [configMap('stable', 'data: { v: "1" }'), configMap('edited', 'data: { v: "1" }')].join('\n---\n'),
    );
    await startSource();
    sink.events.length = 0;
    await write(
      'a.yaml',
      [configMap('stable', 'data: { v: "1" }'), configMap('edited', 'data: { v: "2" }')].join('\n---\n'),
    );
    await reindexed(() => JSON.stringify(sink.dataOf('edited')) === '{"v":"2"}', 'changed object');
    expect(sink.events).toEqual(['upsert edited']);
  });

  it('deletes the objects of a deleted file', async () => {
    await write('keep.yaml', configMap('kept'));
    await write('drop.yaml', [configMap('dropped-1'), configMap('dropped-2', '', 'shop')].join('\n---\n'));
    await startSource();
    await unlink(path.join(directory, 'drop.yaml'));
    await reindexed(() => sink.names().length === 1, 'deleted file');
    expect(sink.names()).toEqual(['kept']);
  });

  it('deletes an object removed from a file and leaves the others untouched', async () => {
    await write('a.yaml', [configMap('stays'), configMap('goes')].join('\n---\n'));
    await startSource();
    sink.events.length = 0;
    await write('a.yaml', configMap('stays'));
    await reindexed(() => !sink.names().includes('goes'), 'removed object');
    expect(sink.events).toEqual(['delete goes']);
  });

  it('keeps the last good objects of a file that stops parsing, reports it, and clears it once fixed', async () => {
    await write('app.yaml', configMap('app', 'data: { v: "1" }'));
    await write('other.yaml', configMap('other'));
    const started = await startSource();

    await write('app.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: app\ndata: [\n');
    await reindexed(() => started.status().problems.length > 0, 'broken file reported');
    expect(sink.names()).toEqual(['app', 'other']);
    expect(sink.dataOf('app')).toEqual({ v: '1' });
    const [problem] = started.status().problems;
    expect(problem.source).toMatch(/^manifests: app\.yaml:\d+$/);
    expect(problem.message).toEqual(expect.any(String));
    expect(new Date(problem.since).toISOString()).toBe(problem.since);
    // The path and line are logged for operators.
    expect(log.lines).toContainEqual(
      expect.objectContaining({ level: 'warn', file: 'app.yaml', line: expect.any(Number) }),
    );

    // Another change elsewhere rescans everything: the problem stays, and so does its `since`.
    await write('third.yaml', configMap('third'));
    await reindexed(() => sink.names().includes('third'), 'unrelated file while one is broken');
    expect(started.status().problems).toEqual([problem]);

    await write('app.yaml', configMap('app', 'data: { v: "2" }'));
    await reindexed(() => started.status().problems.length === 0, 'fixed file clears the problem');
    expect(sink.dataOf('app')).toEqual({ v: '2' });
  });

  it('reports a file that never parsed, and indexes nothing from it', async () => {
    await write('good.yaml', configMap('good'));
    await write('bad.yaml', 'kind: [\n');
    const started = await startSource();
    expect(sink.names()).toEqual(['good']);
    expect(started.status().problems).toEqual([
      expect.objectContaining({ source: expect.stringMatching(/^manifests: bad\.yaml:\d+$/) }),
    ]);
    await unlink(path.join(directory, 'bad.yaml'));
    await reindexed(() => started.status().problems.length === 0, 'deleted broken file clears the problem');
  });

  it('lets the file that sorts last win when two files define the same object, whatever their age', async () => {
    await write('a.yaml', configMap('shared', 'data: { from: a }'));
    await write('c.yaml', configMap('shared', 'data: { from: c }'));
    await startSource();
    expect(sink.dataOf('shared')).toEqual({ from: 'c' });
    await write('b.yaml', configMap('shared', 'data: { from: b }'));
    await write('marker.yaml', configMap('marker'));
    await reindexed(() => sink.names().includes('marker'), 'files added');
    expect(sink.dataOf('shared')).toEqual({ from: 'c' });
    await unlink(path.join(directory, 'c.yaml'));
    await reindexed(() => JSON.stringify(sink.dataOf('shared')) === '{"from":"b"}', 'fallback to b.yaml');
  });
});
