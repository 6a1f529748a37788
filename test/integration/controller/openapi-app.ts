// The controller app the OpenAPI tests call (openapi.test.ts, openapi-document.test.ts).
import type { RequestListener } from 'node:http';
import request from 'supertest';
import { createControllerApp, type ControllerAppDependencies } from '../../../services/controller/http/app';
import { createControllerMetrics } from '../../../services/controller/metrics';
import type { SourceStatus } from '../../../services/controller/sources/source';
import { silentLogger } from '../../../services/logging/logger';
import { DETAIL_LEVELS, type DetailLevel, type Report } from '../../../services/model/api';
import type { Constraint } from '../../../services/model/constraint';
import { objectName, text } from '../../../services/model/text';
import {
  demoClusterObjects,
  FIXED_NOW,
  indexObjects,
  runtimeStateFor,
  syncedSource,
} from '../../support/controller-fixtures';
import { conforms } from './openapi-contract';
import { RiskTracker } from '../../../services/controller/risks/risk-tracker';
import { computeImpact } from '../../../services/controller/risks/impact';
import type { AnswerImpact } from '../../../services/controller/http/impact-route';
import type { KubernetesObject } from '../../../services/model/kubernetes';

// The cluster served: the demo manifests through the registered adapters, plus two constraints
// written here so that metrics and a cluster-scoped (redactable) name occur whatever adapters the
// registry holds.

const cluster = indexObjects(demoClusterObjects());

export const syntheticQuota: Constraint = {
  id: 'openapi-test/ResourceQuota/shop/openapi-quota#quota',
  name: 'openapi-quota',
  type: 'ResourceLimit',
  severity: 'Info',
  effect: 'limit',
  adapter: 'resourcequota',
  source: { kind: 'ResourceQuota', apiVersion: 'v1', name: 'openapi-quota', namespace: 'shop' },
  scope: { kind: 'namespace', namespace: 'shop' },
  tags: ['quota'],
  displayName: text`${objectName('openapi-quota', 'shop')}`,
  summary: text`ResourceQuota ${objectName('openapi-quota', 'shop')} is at 25%`,
  remediationHint: text`stay within ResourceQuota ${objectName('openapi-quota', 'shop')}`,
  remediation: {
    summary: text`stay within ResourceQuota ${objectName('openapi-quota', 'shop')}`,
    steps: [
      {
        type: 'manual',
        description: text`Ask for more`,
        contact: 'owners@example.com',
        requiresPrivilege: 'namespace-admin',
        automated: false,
      },
    ],
  },
  metrics: { 'requests.cpu': { hard: '4', used: '1', unit: 'cores', percent_used: 25 } },
  lastObserved: FIXED_NOW.toISOString(),
};

const syntheticClusterPolicy: Constraint = {
  id: 'openapi-test/ClusterPolicy//openapi-cluster-policy#rule',
  name: 'openapi-cluster-policy/rule',
  type: 'Admission',
  severity: 'Critical',
  // Audit only: it never answers the caller, so its name stays hidden below `full` (issue 31's rule).
  effect: 'audit',
  adapter: 'policyengine',
  source: {
    kind: 'ClusterPolicy',
    apiVersion: 'kyverno.io/v1',
    name: 'openapi-cluster-policy',
    namespace: null,
  },
  scope: { kind: 'cluster' },
  tags: ['admission'],
  displayName: text`${objectName('openapi-cluster-policy', null)}/rule`,
  summary: text`ClusterPolicy ${objectName('openapi-cluster-policy', null)} audits`,
  remediationHint: text`pass ClusterPolicy ${objectName('openapi-cluster-policy', null)}`,
  remediation: {
    summary: text`pass ClusterPolicy ${objectName('openapi-cluster-policy', null)}`,
    steps: [
      {
        type: 'cli',
        description: text`Inspect it`,
        command: text`kubectl get clusterpolicy ${objectName('openapi-cluster-policy', null)} -o yaml`,
        requiresPrivilege: 'developer',
        automated: true,
      },
    ],
  },
  lastObserved: FIXED_NOW.toISOString(),
};

cluster.index.replaceObject('openapi-test/quota', [syntheticQuota]);
cluster.index.replaceObject('openapi-test/cluster-policy', [syntheticClusterPolicy]);
// An object an adapter could not read: a health problem that is not a file.
cluster.parseErrors.record('openapi-test/broken', {
  adapter: 'networkpolicy',
  object: 'NetworkPolicy shop/broken',
  message: 'spec.ingress must be a list',
  at: FIXED_NOW.toISOString(),
});

// The workloads at risk of the demo cluster, evaluated once (issue 35), plus one owned by an
// operator's custom resource so that `owner` occurs.
export const risks = new RiskTracker(cluster.index);
for (const object of demoClusterObjects()) risks.observe(object, false);
export const ownedWorkload = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'operated',
    namespace: 'shop',
    ownerReferences: [
      { apiVersion: 'example.com/v1', kind: 'App', name: 'operated', uid: 'u1', controller: true },
    ],
  },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'operated' } },
    template: {
      metadata: { labels: { app: 'operated' } },
      spec: { containers: [{ name: 'app', image: 'app:1' }] },
    },
  },
};
risks.observe(ownedWorkload as KubernetesObject, false);
risks.start();
risks.evaluatePendingNow();
risks.stop();

const answerImpact: AnswerImpact = (objects, options) =>
  computeImpact(
    {
      index: cluster.index,
      ingestor: cluster.ingestor,
      workloads: (namespaces) => risks.keptWorkloads(namespaces),
      objectOf: (workload) => risks.objectOf(workload),
    },
    objects,
    options,
  );

/** A source with one enabled adapter, one disabled (so `reason` occurs) and a broken file. */
function sourceStatus(synced: boolean): SourceStatus {
  return syncedSource({
    synced,
    adapters: {
      networkpolicy: { enabled: true, watchedResources: 1, watchFailing: false },
      cni: {
        enabled: false,
        watchedResources: 0,
        watchFailing: false,
        reason: 'no served kinds: cilium.io/v2 CiliumNetworkPolicy',
      },
    },
    problems: [
      {
        source: 'manifests: broken.yaml:4',
        message: 'Tabs are not allowed as indentation',
        since: FIXED_NOW.toISOString(),
      },
    ],
  });
}

export function controllerDependencies(
  options: { configured?: DetailLevel; synced?: boolean } = {},
): ControllerAppDependencies {
  const runtimeState = () => runtimeStateFor(cluster, sourceStatus(options.synced ?? true));
  const metrics = createControllerMetrics(cluster.index, runtimeState, { processMetrics: false });
  return {
    index: cluster.index,
    runtimeState,
    configuredDetailLevel: options.configured ?? 'full',
    clock: () => FIXED_NOW,
    logger: silentLogger(),
    metricsHandler: metrics.handler,
    requestObserver: metrics.requestObserver,
    risks,
    impact: answerImpact,
  };
}

export function controllerApp(options: { configured?: DetailLevel; synced?: boolean } = {}): RequestListener {
  return createControllerApp(controllerDependencies(options));
}

export const app = controllerApp();

/**
 * At `summary` for every caller but with `--caller-rbac`: a caller's token may read the sources of
 * the namespace's own constraints (a stand-in for the reviews, which caller-rbac-admission.test.ts
 * makes against the test API server).
 */
export const callerRbacApp = createControllerApp({
  ...controllerDependencies({ configured: 'summary' }),
  apiAccess: { levelFor: () => Promise.resolve('summary') },
  callerReadAccess: {
    readableConstraints: (_request, constraints) =>
      Promise.resolve(new Set(constraints.filter((constraint) => constraint.source.namespace === 'shop'))),
    reviewCounts: () => ({ tokenReviews: 0, accessReviews: 0, refused: 0 }),
  },
});
export const unsyncedApp = controllerApp({ synced: false });

export function withLevel(url: string, level: DetailLevel | undefined): string {
  if (level === undefined) return url;
  return `${url}${url.includes('?') ? '&' : '?'}detail_level=${level}`;
}

export const LEVELS: Array<DetailLevel | undefined> = [undefined, ...DETAIL_LEVELS];

/** A real URL for each documented path, for the 405 checks. */
export const SAMPLE_URLS: Record<string, string> = {
  '/resources/reports/{namespace}': '/resources/reports/shop',
  '/resources/risks/{namespace}': '/resources/risks/shop',
  '/api/v1/impact': '/api/v1/impact',
  '/resources/constraints/{namespace}/{name}': '/resources/constraints/shop/api-allow-frontend/ingress',
  '/resources/references/{ref}': '/resources/references/fw-0000000000000000',
  '/resources/health': '/resources/health',
  '/resources/capabilities': '/resources/capabilities',
  '/resources': '/resources',
  '/api/v1/constraints': '/api/v1/constraints?namespace=shop',
  '/api/v1/admission-check': '/api/v1/admission-check',
  '/api/v1/health': '/api/v1/health',
  '/healthz': '/healthz',
  '/readyz': '/readyz',
  '/metrics': '/metrics',
};

export async function fullReport(namespace: string): Promise<Report> {
  const response = await request(app).get(`/resources/reports/${namespace}?detail_level=full`).expect(200);
  conforms('/resources/reports/{namespace}', 'get', response);
  return response.body as Report;
}
