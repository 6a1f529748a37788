import type { KubeConfig } from '@kubernetes/client-node';
import { isRecord } from '../../model/kubernetes';
import type { ObjectReadAccess } from '../../model/source-access';
import { apiServerReviewPoster } from './api-server-review';

// The SubjectAccessReview of issue 24: may this caller (as its TokenReview named it: user, uid,
// groups, extra) `get` this object? Posted through the controller's own kubeconfig; its
// ServiceAccount needs `create` on `authorization.k8s.io/subjectaccessreviews` (infra/rbac.ts).

export const ACCESS_REVIEW_PATH = '/apis/authorization.k8s.io/v1/subjectaccessreviews';

/** The user a SubjectAccessReview asks about, exactly as the TokenReview authenticated it. */
export interface CallerIdentity {
  username: string;
  uid?: string;
  groups: string[];
  extra: Record<string, string[]>;
}

/** Whether `caller` may `get` the object (an empty name asks about every object of the collection). */
export type ReviewAccess = (caller: CallerIdentity, access: ObjectReadAccess) => Promise<boolean>;

export interface AccessReviewerOptions {
  timeoutMs: number;
  maxSockets: number;
}

/** The SubjectAccessReview body for `get` on one object (or, with no name, on all of them). */
export function subjectAccessReview(caller: CallerIdentity, access: ObjectReadAccess): object {
  const resourceAttributes: Record<string, string> = {
    verb: 'get',
    group: access.group,
    resource: access.resource,
  };
  if (access.namespace !== null) resourceAttributes.namespace = access.namespace;
  if (access.name !== '') resourceAttributes.name = access.name;
  const spec: Record<string, unknown> = {
    user: caller.username,
    groups: caller.groups,
    resourceAttributes,
  };
  if (caller.uid !== undefined) spec.uid = caller.uid;
  if (Object.keys(caller.extra).length > 0) spec.extra = caller.extra;
  return { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec };
}

export function kubernetesAccessReviewer(
  kubeConfig: KubeConfig,
  options: AccessReviewerOptions,
): ReviewAccess {
  const post = apiServerReviewPoster(kubeConfig, {
    path: ACCESS_REVIEW_PATH,
    kind: 'SubjectAccessReview',
    ...options,
  });
  return async (caller, access) => {
    const review = await post(subjectAccessReview(caller, access));
    const status = isRecord(review) && isRecord(review.status) ? review.status : {};
    // Allowed only when the API server says so and no authorizer denied it outright.
    return status.allowed === true && status.denied !== true;
  };
}
