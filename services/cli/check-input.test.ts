import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli, type CliEnvironment } from './program';
import { namespaceMismatches, nearestName, notAManifestReason } from './manifest-input';
import { unknownNamespacesOf } from './check-command';
import { parseManifest } from '../controller/sources/manifest-parsing';
import { readYamlDocuments } from '../controller/sources/yaml-documents';
import { createControllerApp } from '../controller/http/app';
import { silentLogger } from '../logging/logger';
import {
  demoClusterObjects,
  FIXED_NOW,
  indexObjects,
  runtimeStateFor,
} from '../../test/support/controller-fixtures';

// `forewarn check` takes its input as `kubectl apply` does (issue 31): kubectl's refusal of a
// namespace mismatch, nothing checked is an error, an unknown namespace is said, folders of real
// repositories (Helm charts, kustomizations) are read without failing, `-k` says to pipe.

const DEMO_CLUSTER = path.join(__dirname, '../../examples/manifests');

function environment(stdin = '') {
  const stdout = { text: '', isTTY: false, write: (chunk: string) => (stdout.text += chunk) };
  const stderr = { text: '', isTTY: false, write: (chunk: string) => (stderr.text += chunk) };
  const cli: CliEnvironment = { stdout, stderr, env: {}, readStdin: async () => stdin };
  return { cli, stdout, stderr };
}

const APP_IN_SHOP = `apiVersion: v1
kind: ConfigMap
metadata: { name: settings, namespace: shop }
data: { mode: fast }
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: { name: data, namespace: shop }
spec: { accessModes: [ReadWriteOnce], resources: { requests: { storage: 1Gi } } }
`;

let directory: string;
beforeAll(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'forewarn-check-input-'));
  await writeFile(path.join(directory, 'app.yaml'), APP_IN_SHOP);
  // A repository folder: a kustomization next to its resource, and a Helm chart.
  await mkdir(path.join(directory, 'repo/chart/templates'), { recursive: true });
  await writeFile(
    path.join(directory, 'repo/kustomization.yaml'),
    'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [app.yaml]\n',
  );
  await writeFile(path.join(directory, 'repo/app.yaml'), APP_IN_SHOP);
  await writeFile(
    path.join(directory, 'repo/chart/Chart.yaml'),
    'apiVersion: v2\nname: shop\nversion: 0.1.0\n',
  );
  await writeFile(path.join(directory, 'repo/chart/values.yaml'), 'replicas: 2\n');
  // `name: {{ .Release.Name }}` reads as a mapping key that is a mapping: the YAML library would
  // print a process warning about it.
  await writeFile(
    path.join(directory, 'repo/chart/templates/service.yaml'),
    'apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  ports: [{ port: 80 }]\n',
  );
  await mkdir(path.join(directory, 'chart-only/templates'), { recursive: true });
  await writeFile(path.join(directory, 'chart-only/Chart.yaml'), 'apiVersion: v2\nname: x\nversion: 1.0.0\n');
  await writeFile(
    path.join(directory, 'chart-only/templates/deployment.yaml'),
    'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\n  labels:\n    {{- include "x.labels" . | nindent 4 }}\n',
  );
});
afterAll(() => rm(directory, { recursive: true, force: true }));

describe('check -n against objects that name another namespace', () => {
  it('lists the mismatches with kubectl apply’s own words', () => {
    const { objects } = parseManifest('app.yaml', APP_IN_SHOP, { defaultNamespace: 'payments' });
    expect(
      namespaceMismatches(
        objects.map((object) => ({ file: 'app.yaml', object })),
        'payments',
      ),
    ).toEqual([
      `app.yaml: ConfigMap settings: the namespace from the provided object "shop" does not match the namespace "payments". You must pass '--namespace=shop' to perform this operation.`,
      `app.yaml: PersistentVolumeClaim data: the namespace from the provided object "shop" does not match the namespace "payments". You must pass '--namespace=shop' to perform this operation.`,
    ]);
    expect(
      namespaceMismatches(
        objects.map((object) => ({ file: 'app.yaml', object })),
        'shop',
      ),
    ).toEqual([]);
    expect(
      namespaceMismatches(
        objects.map((object) => ({ file: 'app.yaml', object })),
        undefined,
      ),
    ).toEqual([]);
  });

  it('exits 2 with the reason instead of "0 of 2 objects checked"', async () => {
    const { cli, stdout, stderr } = environment();
    const code = await runCli(
      ['check', '-f', path.join(directory, 'app.yaml'), '-n', 'payments', '--manifests', DEMO_CLUSTER],
      cli,
    );
    expect(code).toBe(2);
    expect(stdout.text).toBe('');
    expect(stderr.text).toContain(
      `the namespace from the provided object "shop" does not match the namespace "payments". You must pass '--namespace=shop' to perform this operation.`,
    );
  });
});

describe('check with nothing to check', () => {
  it('exits 2 for empty standard input', async () => {
    const { cli, stderr } = environment('');
    expect(await runCli(['check', '-f', '-', '--manifests', DEMO_CLUSTER], cli)).toBe(2);
    expect(stderr.text).toContain('nothing to check: no Kubernetes object in -');
  });

  it('exits 2 for a folder holding only a Helm chart, saying why each file was set aside', async () => {
    const { cli, stderr } = environment();
    expect(
      await runCli(['check', '-f', path.join(directory, 'chart-only'), '--manifests', DEMO_CLUSTER], cli),
    ).toBe(2);
    expect(stderr.text).toContain('nothing to check');
    expect(stderr.text).toMatch(/Chart\.yaml: skipped, a Helm chart's Chart\.yaml/);
    expect(stderr.text).toMatch(/deployment\.yaml: skipped, template markup/);
  });
});

describe('check of a repository folder', () => {
  it('skips Kustomize and Helm files with a note, checks the objects, and no library warning escapes', async () => {
    const emitted = jest.spyOn(process, 'emitWarning');
    try {
      const { cli, stdout, stderr } = environment();
      const code = await runCli(
        ['check', '-f', path.join(directory, 'repo'), '--manifests', DEMO_CLUSTER, '-o', 'json'],
        cli,
      );
      expect(code).toBe(0);
      const output = JSON.parse(stdout.text) as {
        reports: Array<{ file: string; objects: Array<{ kind: string; skipped?: string }> }>;
        skippedFiles: Array<{ file: string; reason: string }>;
      };
      expect(output.reports.map((report) => path.basename(report.file))).toEqual(['app.yaml']);
      expect(output.reports[0].objects.map((object) => [object.kind, object.skipped ?? 'checked'])).toEqual([
        ['ConfigMap', 'checked'],
        ['PersistentVolumeClaim', 'checked'],
      ]);
      expect(
        output.skippedFiles.map((skipped) => [
          path.relative(directory, skipped.file),
          skipped.reason.split(';')[0],
        ]),
      ).toEqual([
        ['repo/chart/Chart.yaml', "a Helm chart's Chart.yaml, not a Kubernetes object"],
        [
          'repo/chart/templates/service.yaml',
          'template markup ({{ }}) that does not read as Kubernetes objects',
        ],
        ['repo/chart/values.yaml', 'Helm chart values, not a Kubernetes object'],
        ['repo/kustomization.yaml', 'a Kustomize kustomization, not a Kubernetes object'],
      ]);
      expect(stderr.text).toContain('kustomize build DIR | forewarn check -f -');
      expect(stderr.text.match(/^note: .*: skipped, /gm)).toHaveLength(4);
      expect(emitted).not.toHaveBeenCalled();
    } finally {
      emitted.mockRestore();
    }
  });

  it('sets aside a chart template that happens to read as an object', () => {
    const content =
      'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: x }\ndata: { image: "{{ .Values.image }}" }\n';
    const input = { file: path.join('chart', 'templates', 'cm.yaml'), content, fromFolder: true };
    expect(notAManifestReason(input, parseManifest(input.file, content))).toMatch(/^template markup/);
  });

  it('checks a ConfigMap holding {{ }} (an alerting template): it reads as an object', () => {
    const content =
      'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: alerts }\ndata: { text: "{{ .Labels.job }}" }\n';
    const input = { file: 'repo/alerts.yaml', content, fromFolder: true };
    expect(notAManifestReason(input, parseManifest(input.file, content))).toBeUndefined();
  });

  it('sets aside a folder file without apiVersion and kind, but refuses a named one as kubectl would', async () => {
    const content = 'replicas: 3\n';
    const parsed = parseManifest('settings.yaml', content);
    expect(notAManifestReason({ file: 'dir/settings.yaml', content, fromFolder: true }, parsed)).toMatch(
      /no apiVersion and kind/,
    );
    expect(notAManifestReason({ file: 'settings.yaml', content, fromFolder: false }, parsed)).toBeUndefined();
    const { cli, stderr } = environment(content);
    expect(await runCli(['check', '-f', '-', '--manifests', DEMO_CLUSTER], cli)).toBe(2);
    expect(stderr.text).toContain('<stdin>:1: object has no apiVersion or kind');
  });

  it('reads a mapping key that is a mapping as the document’s problem, not a library warning', () => {
    const emitted = jest.spyOn(process, 'emitWarning');
    try {
      const documents = readYamlDocuments('metadata:\n  name: {{ .Release.Name }}\n');
      expect(documents).toEqual([
        {
          line: 1,
          problem: 'a mapping key is itself a mapping or sequence (template markup such as {{ }}?)',
        },
      ]);
      expect(emitted).not.toHaveBeenCalled();
    } finally {
      emitted.mockRestore();
    }
  });
});

describe('check -k and -f -', () => {
  it('says to pipe kustomize build, and exits 2', async () => {
    const { cli, stderr } = environment();
    expect(await runCli(['check', '-k', path.join(directory, 'repo')], cli)).toBe(2);
    expect(stderr.text).toContain(`kustomize build ${path.join(directory, 'repo')} | forewarn check -f -`);
  });

  it('checks what standard input holds, as a rendering piped in', async () => {
    const { cli, stdout } = environment(APP_IN_SHOP);
    expect(await runCli(['check', '-f', '-', '--manifests', DEMO_CLUSTER], cli)).toBe(0);
    expect(stdout.text).toContain('2 of 2 objects checked');
  });
});

describe('check into a namespace the cluster does not have', () => {
  it('suggests the nearest known namespace for a typo, and nothing for a name far from all', () => {
    expect(nearestName('shpo', ['payments', 'shop', 'team-a'])).toBe('shop');
    expect(nearestName('paymnts', ['payments', 'shop'])).toBe('payments');
    expect(nearestName('analytics', ['payments', 'shop'])).toBeUndefined();
  });

  it('names only namespaces absent from the manifests, never the API server’s own, and says nothing without Namespaces', () => {
    const objects = parseManifest('app.yaml', APP_IN_SHOP.replace(/shop/g, 'shpo')).objects;
    const defaulted = parseManifest(
      'cm.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: a }\n',
    ).objects;
    expect(unknownNamespacesOf([...objects, ...defaulted], ['shop', 'payments'])).toEqual([
      {
        namespace: 'shpo',
        suggestion: 'shop',
        message:
          'namespace "shpo" does not exist in the cluster\'s manifests (did you mean "shop"?): kubectl apply would fail with namespaces "shpo" not found',
      },
    ]);
    expect(unknownNamespacesOf(objects, [])).toEqual([]);
  });

  it('says it on stderr and in the JSON output of an offline check (-n shpo)', async () => {
    const { cli, stdout, stderr } = environment(APP_IN_SHOP.replace(/ namespace: shop/g, ''));
    await runCli(['check', '-f', '-', '-n', 'shpo', '--manifests', DEMO_CLUSTER, '-o', 'json'], cli);
    expect(stderr.text).toContain(
      'warning: namespace "shpo" does not exist in the cluster\'s manifests (did you mean "shop"?)',
    );
    expect((JSON.parse(stdout.text) as { unknownNamespaces: unknown[] }).unknownNamespaces).toEqual([
      expect.objectContaining({ namespace: 'shpo', suggestion: 'shop' }),
    ]);
  });
});

describe('check against a controller, of kinds the webhook is not registered for', () => {
  it('checks a PersistentVolumeClaim against the storage quota: a rejection, exit 3', async () => {
    const cluster = indexObjects([
      ...demoClusterObjects(),
      {
        apiVersion: 'v1',
        kind: 'ResourceQuota',
        metadata: { name: 'storage', namespace: 'shop' },
        spec: { hard: { 'requests.storage': '1Gi' } },
      },
    ]);
    const server = createServer(
      createControllerApp({
        index: cluster.index,
        runtimeState: () => runtimeStateFor(cluster),
        configuredDetailLevel: 'summary',
        clock: () => FIXED_NOW,
        logger: silentLogger(),
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const address = server.address();
      const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
      const { cli, stdout } = environment(APP_IN_SHOP.replace('1Gi', '5Gi'));
      expect(await runCli(['check', '-f', '-', '--url', url, '-o', 'json'], cli)).toBe(3);
      const output = JSON.parse(stdout.text) as {
        reports: Array<{
          objects: Array<{
            kind: string;
            skipped?: string;
            findings: Array<{ name: string; verdict?: string }>;
          }>;
        }>;
      };
      const claim = output.reports[0].objects.find((object) => object.kind === 'PersistentVolumeClaim');
      expect(claim?.skipped).toBeUndefined();
      expect(claim?.findings).toContainEqual(
        expect.objectContaining({ name: 'storage', verdict: 'violates' }),
      );
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
