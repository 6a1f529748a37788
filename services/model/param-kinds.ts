import { BUILT_IN_API_GROUPS, type ResourceTarget } from './kubernetes';

// The custom kinds whose objects ValidatingAdmissionPolicies use as params (`spec.paramKind`),
// configured by the operator (`--param-kinds group/version/plural,...`): the controller watches them
// and its ClusterRole grants get/list/watch on exactly these resources (docs/decisions.md, "Params
// of a custom kind"). Policies name any kind they like; reading each one the controller is not
// granted would break least privilege, so an unconfigured paramKind leaves the verdict `unknown`.

export const PARAM_KINDS_FLAG = '--param-kinds';

export interface ParamKindResource {
  group: string;
  version: string;
  /** The resource name the API serves the kind under (`spec.names.plural` of its CRD). */
  plural: string;
}

export class ParamKindError extends Error {}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const VERSION = /^v\d+((alpha|beta)\d+)?$/;
const PLURAL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * A group of the Kubernetes project's own APIs: the built-in ones Forewarn knows, and any other
 * under `k8s.io` or `kubernetes.io` (reserved for the project: `events.k8s.io`, `resource.k8s.io`
 * and whatever a newer API server serves). Their objects are not params the controller reads.
 */
function isKubernetesGroup(group: string): boolean {
  return (
    BUILT_IN_API_GROUPS.has(group) ||
    ['k8s.io', 'kubernetes.io'].some((domain) => group === domain || group.endsWith(`.${domain}`))
  );
}

/** `example.com/v1/replicalimits,...` → resources; empty entries ignored, duplicates once. */
export function parseParamKinds(value: string): ParamKindResource[] {
  const resources = new Map<string, ParamKindResource>();
  for (const entry of value.split(',').map((part) => part.trim())) {
    if (entry === '') continue;
    const parts = entry.split('/');
    if (parts.length !== 3)
      throw new ParamKindError(
        `expected group/version/plural (a custom resource, e.g. example.com/v1/replicalimits), got ${JSON.stringify(entry)}`,
      );
    const [group, version, plural] = parts;
    // Built-in kinds (ConfigMaps, Secrets) hold anything: the controller does not read them (least privilege).
    if (!group.includes('.') || !DNS_SUBDOMAIN.test(group) || isKubernetesGroup(group))
      throw new ParamKindError(
        `${JSON.stringify(entry)}: the group must be a custom resource's API group (with a dot); ConfigMap and other built-in params are not read`,
      );
    if (!VERSION.test(version)) throw new ParamKindError(`${JSON.stringify(entry)}: invalid version`);
    if (!PLURAL.test(plural)) throw new ParamKindError(`${JSON.stringify(entry)}: invalid plural`);
    resources.set(`${group}/${plural}`, { group, version, plural });
  }
  return [...resources.values()];
}

export function formatParamKind(resource: ParamKindResource): string {
  return `${resource.group}/${resource.version}/${resource.plural}`;
}

/** What the ClusterRole grants for the configured param kinds. */
export function paramKindReadTargets(resources: readonly ParamKindResource[]): ResourceTarget[] {
  return resources.map(({ group, plural }) => ({ group, resource: plural }));
}
