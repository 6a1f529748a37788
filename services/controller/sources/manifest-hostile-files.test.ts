import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { HOSTILE_FILE_PROBLEMS, writeHostileFiles } from '../../../test/support/hostile-manifests';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AdapterRegistry } from '../adapters/registry';
import { silentLogger } from '../../logging/logger';
import type { KubernetesObject } from '../../model/kubernetes';
import { ManifestFileSource } from './manifest-files';
import type { KubernetesObjectSink } from './source';

// A `--manifests` directory an attacker or an unlucky user filled (issue 13, item 3): the first
// sync completes, every rejected or unreadable file is in health, and the good files are indexed.

const SYNC_DEADLINE_MS = 15_000;

class NameSink implements KubernetesObjectSink {
  readonly names = new Set<string>();
  upsert(object: KubernetesObject): void {
    this.names.add(object.metadata?.name ?? '');
  }
  delete(object: KubernetesObject): void {
    this.names.delete(object.metadata?.name ?? '');
  }
}

async function withinDeadline<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what}: not within ${SYNC_DEADLINE_MS} ms`)),
      SYNC_DEADLINE_MS,
    );
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

describe('ManifestFileSource with hostile files', () => {
  let directory: string;
  let source: ManifestFileSource | undefined;

  beforeEach(async () => {
    directory = await mkdtemp(path.join(tmpdir(), 'forewarn-hostile-'));
  });

  afterEach(async () => {
    await source?.stop();
    source = undefined;
    await chmod(path.join(directory, 'secret.yaml'), 0o644).catch(() => undefined);
    await rm(directory, { recursive: true, force: true });
  });

  async function start(sink: NameSink): Promise<ManifestFileSource> {
    source = new ManifestFileSource({
      directory,
      sink,
      registry: new AdapterRegistry(),
      logger: silentLogger(),
    });
    await withinDeadline(source.start(), 'first sync');
    return source;
  }

  it('completes the first sync with a tab-indented file, an alias bomb, a deep sequence and link loops', async () => {
    await writeHostileFiles(directory);
    await writeFile(
      path.join(directory, 'good.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: good\n',
    );
    await writeFile(
      path.join(directory, 'sub/inner.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: inner\n',
    );
    const sink = new NameSink();
    const running = await start(sink);
    expect([...sink.names].sort()).toEqual(['good', 'inner']);
    const problems = running.status().problems.map((problem) => `${problem.source} ${problem.message}`);
    expect(problems).toEqual(HOSTILE_FILE_PROBLEMS.map((pattern) => expect.stringMatching(pattern)));
  });

  it('reads a file reached through a link to a directory once', async () => {
    await mkdir(path.join(directory, 'real'));
    await writeFile(
      path.join(directory, 'real/a.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n',
    );
    await symlink('real', path.join(directory, 'alias'));
    const sink = new NameSink();
    const running = await start(sink);
    expect([...sink.names]).toEqual(['a']);
    expect(running.status().problems).toEqual([]);
  });

  const runsAsRoot = process.getuid?.() === 0;
  // Root reads a file of mode 000 anyway, so the case cannot be produced as root.
  (runsAsRoot ? it.skip : it)(
    'reports a file it cannot read in health instead of skipping it silently',
    async () => {
      await writeFile(
        path.join(directory, 'secret.yaml'),
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\n',
      );
      await chmod(path.join(directory, 'secret.yaml'), 0o000);
      const running = await start(new NameSink());
      expect(running.status().problems).toEqual([
        expect.objectContaining({
          source: 'manifests: secret.yaml:1',
          message: expect.stringMatching(/cannot be read \(EACCES\)/),
        }),
      ]);
    },
  );
});
