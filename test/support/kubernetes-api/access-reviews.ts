import type { JsonObject, JsonValue } from './json';
import { ApiStatusError } from './api-status';

// RBAC grants and the SubjectAccessReview API (`POST /apis/authorization.k8s.io/v1/subjectaccessreviews`)
// of the test API server. Tests bind rules to a user or a group, in a namespace (a RoleBinding) or
// cluster-wide (a ClusterRoleBinding), and the review is answered as the RBAC authorizer answers it:
// a rule matches when its API groups, resources and verbs include the request's (or `*`); rules with
// `resourceNames` match only a request that names one of them (a request without a name asks about
// every object, which such a rule does not grant); a namespaced binding grants nothing outside its
// namespace. A spec naming neither a user nor a group, or no attributes, is refused with 422 Invalid
// as the real server refuses it. RBAC never denies, so `denied` is never set.

export interface RbacRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

export interface RbacBinding {
  subject: { kind: 'User' | 'Group'; name: string };
  /** A RoleBinding's namespace; absent for a ClusterRoleBinding. */
  namespace?: string;
  rules: RbacRule[];
}

interface ResourceAttributes {
  verb: string;
  group: string;
  resource: string;
  namespace: string;
  name: string;
}

function stringOf(value: JsonValue | undefined): string {
  return typeof value === 'string' ? value : '';
}

function includesOrStar(list: readonly string[], value: string): boolean {
  return list.includes('*') || list.includes(value);
}

function ruleAllows(rule: RbacRule, attributes: ResourceAttributes): boolean {
  if (!includesOrStar(rule.apiGroups, attributes.group)) return false;
  if (!includesOrStar(rule.resources, attributes.resource)) return false;
  if (!includesOrStar(rule.verbs, attributes.verb)) return false;
  const names = rule.resourceNames ?? [];
  return names.length === 0 || (attributes.name !== '' && names.includes(attributes.name));
}

export class AccessAuthority {
  private readonly bindings = new Set<RbacBinding>();
  /** Every review the server answered, for tests that count them (caching, batching). */
  readonly reviews: Array<{ user: string; attributes: ResourceAttributes; allowed: boolean }> = [];

  /** Adds a binding; the function returned revokes it (deleting the RoleBinding). */
  grant(binding: RbacBinding): () => void {
    this.bindings.add(binding);
    return () => this.bindings.delete(binding);
  }

  /** The SubjectAccessReview answered for a posted SubjectAccessReview body. */
  review(body: JsonObject): JsonObject {
    const spec = (typeof body.spec === 'object' && body.spec !== null ? body.spec : {}) as JsonObject;
    const user = stringOf(spec.user);
    const groups = Array.isArray(spec.groups)
      ? spec.groups.filter((group): group is string => typeof group === 'string')
      : [];
    const raw = spec.resourceAttributes;
    if (user === '' && groups.length === 0)
      throw new ApiStatusError(
        422,
        'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified',
        'Invalid',
      );
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
      throw new ApiStatusError(
        422,
        'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified',
        'Invalid',
      );
    const attributes: ResourceAttributes = {
      verb: stringOf(raw.verb),
      group: stringOf(raw.group),
      resource: stringOf(raw.resource),
      namespace: stringOf(raw.namespace),
      name: stringOf(raw.name),
    };
    const allowed = [...this.bindings].some(
      (binding) =>
        (binding.subject.kind === 'User'
          ? binding.subject.name === user
          : groups.includes(binding.subject.name)) &&
        (binding.namespace === undefined || binding.namespace === attributes.namespace) &&
        binding.rules.some((rule) => ruleAllows(rule, attributes)),
    );
    this.reviews.push({ user, attributes, allowed });
    return {
      kind: 'SubjectAccessReview',
      apiVersion: 'authorization.k8s.io/v1',
      metadata: { creationTimestamp: null },
      spec,
      status: allowed ? { allowed: true, reason: 'RBAC: allowed by a test binding' } : { allowed: false },
    };
  }
}
