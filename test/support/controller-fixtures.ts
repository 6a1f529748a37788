import path from 'node:path';
import { readdirSync, readFileSync } from 'node:fs';
import type { KubernetesObject } from '../../services/model/kubernetes';
import { AdapterRegistry } from '../../services/controller/adapters/registry';
import {
  ConstraintIndex,
  type ConstraintIndexOptions,
} from '../../services/controller/index/constraint-index';
import { Ingestor, ParseErrorCounter } from '../../services/controller/index/ingest';
import { parseManifest } from '../../services/controller/sources/manifest-parsing';
import type { SourceStatus } from '../../services/controller/sources/source';
import type { RuntimeState } from '../../services/controller/views/health';
import { createControllerApp, type ControllerAppDependencies } from '../../services/controller/http/app';
import { createApiAccess } from '../../services/controller/http/api-auth';
import { kubernetesTokenReviewer } from '../../services/controller/http/token-review';
import { silentLogger } from '../../services/logging/logger';
import type { KubernetesApiTestServer } from './kubernetes-api-server';

/** Every object of the demo cluster in examples/manifests, parsed as the manifests source does. */
export function demoClusterObjects(): KubernetesObject[] {
  const directory = path.join(__dirname, '../../examples/manifests');
  return readdirSync(directory)
    .filter((file) => file.endsWith('.yaml'))
    .sort()
    .flatMap((file) => {
      return parseManifest(file, readFileSync(path.join(directory, file), 'utf8')).objects;
    });
}

export interface IndexedCluster {
  index: ConstraintIndex;
  ingestor: Ingestor;
  parseErrors: ParseErrorCounter;
}

export const FIXED_NOW = new Date('2026-11-22T12:00:00.000Z');

/** A Deployment in `shop` with one container and nothing else: what the admission-check routes are asked. */
export const SHOP_DEPLOYMENT = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'shop' },
  spec: { template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web' }] } } },
};

/** A default-deny ingress NetworkPolicy in `shop`: one constraint every check in `shop` lists. */
export const SHOP_DENY_ALL = {
  apiVersion: 'networking.k8s.io/v1',
  kind: 'NetworkPolicy',
  metadata: { name: 'default-deny', namespace: 'shop' },
  spec: { podSelector: {}, policyTypes: ['Ingress'] },
};

/** An index filled from objects through the real adapters, with a fixed clock. */
export function indexObjects(
  objects: readonly KubernetesObject[],
  options: ConstraintIndexOptions = {},
): IndexedCluster {
  const index = new ConstraintIndex(options);
  const parseErrors = new ParseErrorCounter();
  const ingestor = new Ingestor(index, new AdapterRegistry(), parseErrors, undefined, () => FIXED_NOW);
  for (const object of objects) ingestor.upsert(object);
  return { index, ingestor, parseErrors };
}

export function syncedSource(overrides: Partial<SourceStatus> = {}): SourceStatus {
  return {
    synced: true,
    connected: true,
    lastScan: FIXED_NOW,
    adapters: { networkpolicy: { enabled: true, watchedResources: 1, watchFailing: false } },
    problems: [],
    ...overrides,
  };
}

export function runtimeStateFor(
  cluster: IndexedCluster,
  source: SourceStatus = syncedSource(),
): RuntimeState {
  return {
    source,
    parseErrors: cluster.parseErrors,
    flowObserver: { enabled: false, connected: false, address: '' },
    mcp: { enabled: false, transport: 'sse', port: 8090 },
    startedAt: new Date('2026-11-22T11:00:00.000Z'),
  };
}

/** The controller's HTTP app serving `cluster`, synced, at FIXED_NOW, silent; `overrides` on top. */
export function fixtureControllerApp(
  cluster: IndexedCluster,
  overrides: Partial<ControllerAppDependencies> = {},
): ReturnType<typeof createControllerApp> {
  return createControllerApp({
    index: cluster.index,
    runtimeState: () => runtimeStateFor(cluster, syncedSource()),
    configuredDetailLevel: 'full',
    clock: () => FIXED_NOW,
    logger: silentLogger(),
    ...overrides,
  });
}

/**
 * The same at `summary` with `--api-auth=tokenreview`: unredacted only for a token of
 * `webhookServiceAccount` (namespace/name), reviewed by `apiServer`'s TokenReview API.
 */
export function tokenReviewControllerApp(
  cluster: IndexedCluster,
  apiServer: KubernetesApiTestServer,
  webhookServiceAccount: string,
): ReturnType<typeof createControllerApp> {
  return fixtureControllerApp(cluster, {
    configuredDetailLevel: 'summary',
    apiAccess: createApiAccess({
      mode: 'tokenreview',
      configuredDetailLevel: 'summary',
      webhookServiceAccount,
      reviewToken: kubernetesTokenReviewer(apiServer.kubeConfig()),
      logger: silentLogger(),
    }),
  });
}
