// The objects of the controller API storm (controller-api-faults.test.ts): a seeded generator, so a
// failing storm can be replayed from its seed, builders of random objects of every watched kind in
// a few namespaces, and writes that create or update, delete if present.
import type { KubernetesObject } from '../../../services/model/kubernetes';
import type { KubernetesApiTestServer } from '../../support/kubernetes-api-server';

export const NAMESPACES = ['alpha', 'beta', 'gamma'];

/** A small seeded generator, so a failing storm can be replayed from its seed. */
export function randomFrom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = state;
    mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}

export type Pick = <Item>(items: readonly Item[]) => Item;

export function objectsFor(pick: Pick, random: () => number): Array<() => KubernetesObject> {
  return [
    () => ({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: pick(NAMESPACES), labels: { team: pick(['red', 'blue']) } },
    }),
    () => ({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: `np-${Math.floor(random() * 4)}`, namespace: pick(NAMESPACES) },
      spec: {
        podSelector: random() < 0.5 ? {} : { matchLabels: { app: 'web' } },
        policyTypes: pick([['Ingress'], ['Egress'], ['Ingress', 'Egress']]),
      },
    }),
    () => {
      const used = pick(['1', '3', '3900m']);
      return {
        apiVersion: 'v1',
        kind: 'ResourceQuota',
        metadata: { name: 'compute', namespace: pick(NAMESPACES) },
        spec: { hard: { 'requests.cpu': '4' } },
        status: { hard: { 'requests.cpu': '4' }, used: { 'requests.cpu': used } },
      };
    },
    () => ({
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'defaults', namespace: pick(NAMESPACES) },
      spec: { limits: [{ type: 'Container', default: { cpu: pick(['100m', '500m']) } }] },
    }),
    () => ({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'guard' },
      webhooks: [
        {
          name: 'guard.example.com',
          clientConfig: { url: 'https://guard.example.com/validate' },
          rules: [
            { apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] },
          ],
          namespaceSelector: { matchLabels: { team: pick(['red', 'blue']) } },
          failurePolicy: pick(['Fail', 'Ignore']),
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    }),
    () => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: pick(NAMESPACES) },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web', track: pick(['stable', 'canary']) } },
          spec: { containers: [] },
        },
      },
    }),
  ];
}

export const WATCHED_TYPES: Array<[string, string]> = [
  ['v1', 'Namespace'],
  ['networking.k8s.io/v1', 'NetworkPolicy'],
  ['v1', 'ResourceQuota'],
  ['v1', 'LimitRange'],
  ['admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration'],
  ['apps/v1', 'Deployment'],
];

export function apply(server: KubernetesApiTestServer, object: KubernetesObject): void {
  const { apiVersion = '', kind = '', metadata = {} } = object;
  if (server.get(apiVersion, kind, metadata.namespace, metadata.name ?? '')) server.update(object);
  else server.create(object);
}

export function remove(server: KubernetesApiTestServer, object: KubernetesObject): void {
  const { apiVersion = '', kind = '', metadata = {} } = object;
  if (server.get(apiVersion, kind, metadata.namespace, metadata.name ?? ''))
    server.delete(apiVersion, kind, metadata.namespace, metadata.name ?? '');
}
