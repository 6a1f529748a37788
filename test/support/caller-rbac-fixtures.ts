import type { KubernetesObject } from '../../services/model/kubernetes';
import {
  createCallerReadAccess,
  type CallerReadAccess,
} from '../../services/controller/http/caller-read-access';
import { kubernetesAccessReviewer } from '../../services/controller/http/access-review';
import { kubernetesTokenReviewer } from '../../services/controller/http/token-review';
import { silentLogger } from '../../services/logging/logger';
import type { KubernetesApiTestServer } from './kubernetes-api-server';
import type { RbacRule } from './kubernetes-api/access-reviews';

// Objects and helpers for the tests of detail levels that follow the caller's RBAC (issue 24): a
// Kyverno Policy in `shop`, a ClusterPolicy and a Policy of another namespace, and the controller's
// caller read access asking a KubernetesApiTestServer.

/** A Kyverno policy requiring a `team` label on Pods, with a message that names it. */
export function kyvernoPolicy(
  kind: 'Policy' | 'ClusterPolicy',
  name: string,
  namespace?: string,
  action: 'Enforce' | 'Audit' = 'Enforce',
): KubernetesObject {
  return {
    apiVersion: 'kyverno.io/v1',
    kind,
    metadata: { name, ...(namespace === undefined ? {} : { namespace }) },
    spec: {
      validationFailureAction: action,
      rules: [
        {
          name: `${name}-rule`,
          match: { any: [{ resources: { kinds: ['Pod'] } }] },
          validate: {
            message: `pods need the team label (${name})`,
            pattern: { metadata: { labels: { team: '?*' } } },
          },
        },
      ],
    },
  } as KubernetesObject;
}

export const CALLER_RBAC_OBJECTS: KubernetesObject[] = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop', labels: {} } } as KubernetesObject,
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other', labels: {} } } as KubernetesObject,
  // Audit: it reports, it never answers the caller, so its name is hidden below `full` (the one
  // naming rule, issue 31: a policy that rejects or warns names itself to the caller anyway).
  kyvernoPolicy('ClusterPolicy', 'require-team', undefined, 'Audit'),
  kyvernoPolicy('Policy', 'shop-team', 'shop'),
  kyvernoPolicy('Policy', 'other-team', 'other'),
];

export const READ_KYVERNO_POLICIES: RbacRule[] = [
  { apiGroups: ['kyverno.io'], resources: ['policies'], verbs: ['get', 'list'] },
];
export const READ_CLUSTER_POLICIES: RbacRule[] = [
  { apiGroups: ['kyverno.io'], resources: ['clusterpolicies'], verbs: ['get'] },
];

export function testCallerReadAccess(
  apiServer: KubernetesApiTestServer,
  options: { ttlMs?: number; timeoutMs?: number; clock?: () => number; maxReviewsPerRequest?: number } = {},
): CallerReadAccess {
  const timeoutMs = options.timeoutMs ?? 1000;
  const kubeConfig = apiServer.kubeConfig();
  return createCallerReadAccess({
    reviewToken: kubernetesTokenReviewer(kubeConfig, { timeoutMs, maxSockets: 8 }),
    reviewAccess: kubernetesAccessReviewer(kubeConfig, { timeoutMs, maxSockets: 8 }),
    ttlMs: options.ttlMs ?? 30_000,
    timeoutMs,
    maxConcurrentReviews: 8,
    ...(options.maxReviewsPerRequest === undefined
      ? {}
      : { maxReviewsPerRequest: options.maxReviewsPerRequest }),
    ...(options.clock ? { clock: options.clock } : {}),
    logger: silentLogger(),
  });
}
