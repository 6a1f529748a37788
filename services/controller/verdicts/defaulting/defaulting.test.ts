import { SERVER_DEFAULTS, valueAt } from '../../../../test/support/server-defaults-table';
import type { KubernetesObject } from '../../../model/kubernetes';
import { imageTag } from './image-reference';
import { hasServerDefaults, withServerDefaults } from './index';

// The table is the API server's (test/support/server-defaults-table.ts, checked against a real
// kube-apiserver in test/e2e/defaulting.test.ts): each object lacks the fields it lists.

const cases = SERVER_DEFAULTS.flatMap(({ object, expected }) =>
  expected.map(([path, value]) => ({
    name: `${object.kind} ${object.metadata?.name}: ${path.join('.')}`,
    object,
    path,
    value,
  })),
);

describe('the API server defaults, applied to a copy', () => {
  test.each(cases)('$name', ({ object, path, value }) => {
    // Unset in the manifest (or set explicitly where the expected value is the manifest's own).
    const written = valueAt(object, path);
    if (written !== undefined) expect(written).toEqual(value);
    expect(valueAt(withServerDefaults(object), path)).toEqual(value);
  });

  test('the caller object is never changed', () => {
    for (const { object } of SERVER_DEFAULTS) {
      const before = JSON.stringify(object);
      const defaulted = withServerDefaults(object);
      expect(defaulted).not.toBe(object);
      expect(JSON.stringify(object)).toBe(before);
    }
  });

  test('an object defaulted already is judged as it is, not copied (what the webhook forwards)', () => {
    for (const { object } of SERVER_DEFAULTS) {
      const once = withServerDefaults(object);
      expect(once).not.toBe(object);
      expect(withServerDefaults(once)).toBe(once);
    }
  });

  test('one default missing deep inside a defaulted object: a copy with it, the caller untouched', () => {
    const deployment = withServerDefaults({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        template: {
          spec: {
            containers: [
              {
                name: 'app',
                image: 'registry.example.com/app:1',
                readinessProbe: { httpGet: { port: 8080 } },
              },
            ],
          },
        },
      },
    });
    const container = (object: KubernetesObject) =>
      valueAt(object, ['spec', 'template', 'spec', 'containers', 0]);
    // The probe's scheme is removed, as if an earlier hand had left it out.
    const probe = valueAt(deployment, [
      'spec',
      'template',
      'spec',
      'containers',
      0,
      'readinessProbe',
      'httpGet',
    ]);
    delete (probe as Record<string, unknown>).scheme;
    const before = JSON.stringify(deployment);
    const again = withServerDefaults(deployment);
    expect(again).not.toBe(deployment);
    expect(
      valueAt(again, ['spec', 'template', 'spec', 'containers', 0, 'readinessProbe', 'httpGet', 'scheme']),
    ).toBe('HTTP');
    expect(JSON.stringify(deployment)).toBe(before);
    expect(container(again)).not.toBe(container(deployment));
  });

  test('a field the server clears counts as a default to write (a Service without affinity)', () => {
    const service = withServerDefaults({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web' },
      spec: { ports: [{ port: 80 }] },
    });
    expect(withServerDefaults(service)).toBe(service);
    const withConfig = {
      ...service,
      spec: { ...(service.spec as object), sessionAffinityConfig: { clientIP: {} } },
    };
    const defaulted = withServerDefaults(withConfig);
    expect(defaulted).not.toBe(withConfig);
    expect(valueAt(defaulted, ['spec', 'sessionAffinityConfig'])).toBeUndefined();
    expect(valueAt(withConfig, ['spec', 'sessionAffinityConfig'])).toEqual({ clientIP: {} });
  });

  test('kinds and versions without defaults here are returned as they are', () => {
    const others: KubernetesObject[] = [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' } },
      { apiVersion: 'apps/v1beta1', kind: 'Deployment', metadata: { name: 'old' } },
      { apiVersion: 'example.com/v1', kind: 'Pod', metadata: { name: 'custom' } },
      { kind: 'Pod' },
    ];
    for (const object of others) {
      expect(hasServerDefaults(object)).toBe(false);
      expect(withServerDefaults(object)).toBe(object);
    }
  });

  test('a malformed object is defaulted where it can be and never throws', () => {
    const hostile: KubernetesObject[] = [
      { apiVersion: 'v1', kind: 'Pod', spec: 'nonsense' },
      { apiVersion: 'v1', kind: 'Pod', spec: { containers: 'nonsense', volumes: [null, 3, 'x'] } },
      { apiVersion: 'apps/v1', kind: 'Deployment', spec: { template: [], strategy: 7 } },
      { apiVersion: 'batch/v1', kind: 'CronJob', spec: { jobTemplate: { spec: null } } },
      { apiVersion: 'v1', kind: 'Service', spec: { ports: [{ port: 'http' }, null] } },
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x', labels: 'y' } as never },
    ];
    for (const object of hostile) expect(() => withServerDefaults(object)).not.toThrow();
    expect(withServerDefaults(hostile[0]).spec).toBe('nonsense');
    expect(valueAt(withServerDefaults(hostile[1]), ['spec', 'dnsPolicy'])).toBe('ClusterFirst');
  });

  test('a Pod without a spec gets the pod spec defaults (the server decodes it into an empty struct)', () => {
    const defaulted = withServerDefaults({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'empty' } });
    expect(valueAt(defaulted, ['spec', 'restartPolicy'])).toBe('Always');
    expect(valueAt(defaulted, ['spec', 'enableServiceLinks'])).toBe(true);
  });

  test('zero and empty values of non-pointer fields are replaced, of pointer fields kept', () => {
    const defaulted = withServerDefaults({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      spec: {
        replicas: 0,
        template: {
          spec: {
            restartPolicy: '',
            terminationGracePeriodSeconds: 0,
            containers: [{ name: 'a', image: 'a', imagePullPolicy: '', livenessProbe: { periodSeconds: 0 } }],
          },
        },
      },
    });
    expect(valueAt(defaulted, ['spec', 'replicas'])).toBe(0);
    expect(valueAt(defaulted, ['spec', 'template', 'spec', 'restartPolicy'])).toBe('Always');
    expect(valueAt(defaulted, ['spec', 'template', 'spec', 'terminationGracePeriodSeconds'])).toBe(0);
    const container = ['spec', 'template', 'spec', 'containers', 0];
    expect(valueAt(defaulted, [...container, 'imagePullPolicy'])).toBe('Always');
    expect(valueAt(defaulted, [...container, 'livenessProbe', 'periodSeconds'])).toBe(10);
  });
});

describe('the tag the server reads from an image reference', () => {
  test.each([
    ['nginx', 'latest'],
    ['nginx:1.27', '1.27'],
    ['docker.io/library/nginx:latest', 'latest'],
    ['localhost:5000/team/app', 'latest'],
    ['localhost:5000/team/app:v2', 'v2'],
    ['[::1]:5000/app:v3', 'v3'],
    [`nginx@sha256:${'b'.repeat(64)}`, ''],
    [`nginx:1.27@sha256:${'b'.repeat(64)}`, '1.27'],
    // Invalid references: the parser fails and the server reads no tag.
    [`nginx@sha256:${'b'.repeat(32)}`, ''],
    ['Nginx', ''],
    ['', ''],
    ['a'.repeat(64), ''],
    ['registry.example.com/app:has space', ''],
    [`registry.example.com/${'a'.repeat(250)}`, ''],
    ['Registry.Example.com/app', 'latest'],
  ])('%s → %j', (image, tag) => {
    expect(imageTag(image)).toBe(tag);
  });
});
