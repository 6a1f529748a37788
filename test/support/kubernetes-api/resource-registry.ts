import { ApiStatusError } from './api-status';
import type { JsonObject } from './json';

// The resource types the server serves, the source of truth for discovery and routing. A type is
// identified by group + plural (as the real server stores it under /registry/<group>/<plural>); it
// may be served at several versions, and objects are stored once and shown at the version asked
// for (conversion strategy `None`, which is what CRDs without a webhook do).

export interface ResourceType {
  /** `''` for the core group. */
  group: string;
  /** Served versions. */
  versions: string[];
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  /** Has a `/status` subresource: the main resource then ignores status changes. */
  hasStatusSubresource: boolean;
  /** Built-in types omit apiVersion/kind on list items (typed encoding); custom resources keep them. */
  builtIn: boolean;
  /** DELETE answers with the deleted object (pods, namespaces, custom resources) instead of a Status. */
  deleteReturnsObject: boolean;
  /** The CustomResourceDefinition that defines this type. */
  definedBy?: string;
}

export const RESOURCE_VERBS = [
  'create',
  'delete',
  'deletecollection',
  'get',
  'list',
  'patch',
  'update',
  'watch',
];
export const STATUS_SUBRESOURCE_VERBS = ['get', 'patch', 'update'];

export function resourceKey(group: string, plural: string): string {
  return `${group}/${plural}`;
}

export function keyOf(type: ResourceType): string {
  return resourceKey(type.group, type.plural);
}

export function groupVersion(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}

/** `apps/v1` → ['apps', 'v1']; `v1` → ['', 'v1']. */
export function splitApiVersion(apiVersion: string): [string, string] {
  const slash = apiVersion.indexOf('/');
  return slash === -1 ? ['', apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)];
}

const VERSION_PATTERN = /^v(\d+)(?:(alpha|beta)(\d+))?$/;

/**
 * Kubernetes version priority (apimachinery `CompareKubeAwareVersionStrings`): GA before beta before
 * alpha, higher numbers first, then anything else alphabetically. Discovery lists versions in this
 * order and names the first one the preferred version.
 */
export function compareKubeVersions(left: string, right: string): number {
  const rank = (version: string): [number, number, number] | undefined => {
    const match = VERSION_PATTERN.exec(version);
    if (!match) return undefined;
    const stability = match[2] === undefined ? 2 : match[2] === 'beta' ? 1 : 0;
    return [stability, Number(match[1]), Number(match[3] ?? 0)];
  };
  const leftRank = rank(left);
  const rightRank = rank(right);
  if (!leftRank || !rightRank) {
    if (leftRank) return -1;
    if (rightRank) return 1;
    return left.localeCompare(right);
  }
  for (let index = 0; index < 3; index += 1) {
    if (leftRank[index] !== rightRank[index]) return rightRank[index] - leftRank[index];
  }
  return 0;
}

export class ResourceRegistry {
  private readonly types = new Map<string, ResourceType>();

  register(type: ResourceType): void {
    this.types.set(keyOf(type), { ...type, versions: [...type.versions].sort(compareKubeVersions) });
  }

  unregister(group: string, plural: string): ResourceType | undefined {
    const key = resourceKey(group, plural);
    const type = this.types.get(key);
    this.types.delete(key);
    return type;
  }

  byKey(key: string): ResourceType | undefined {
    return this.types.get(key);
  }

  /** The type served at `/{group}/{version}/.../{plural}`, if that version is served. */
  byPath(group: string, version: string, plural: string): ResourceType | undefined {
    const type = this.types.get(resourceKey(group, plural));
    return type && type.versions.includes(version) ? type : undefined;
  }

  /** The type of `apiVersion` + `kind`, for the programmatic API; throws when it is not served. */
  byKind(apiVersion: string, kind: string): ResourceType {
    const [group, version] = splitApiVersion(apiVersion);
    for (const type of this.types.values()) {
      if (type.group === group && type.kind === kind && type.versions.includes(version)) return type;
    }
    throw new ApiStatusError(404, `the server could not find the requested resource (${apiVersion} ${kind})`);
  }

  all(): ResourceType[] {
    return [...this.types.values()];
  }

  /** Served group names and their versions in priority order; the core group is not included. */
  groups(): Map<string, string[]> {
    const groups = new Map<string, Set<string>>();
    for (const type of this.types.values()) {
      if (type.group === '') continue;
      const versions = groups.get(type.group) ?? new Set<string>();
      type.versions.forEach((version) => versions.add(version));
      groups.set(type.group, versions);
    }
    const sorted = new Map<string, string[]>();
    for (const name of [...groups.keys()].sort()) {
      sorted.set(name, [...(groups.get(name) ?? [])].sort(compareKubeVersions));
    }
    return sorted;
  }

  servesGroupVersion(group: string, version: string): boolean {
    return this.all().some((type) => type.group === group && type.versions.includes(version));
  }

  /** An APIResourceList: the body of `/api/v1` and `/apis/{group}/{version}`. */
  resourceList(group: string, version: string): JsonObject {
    const resources: JsonObject[] = [];
    const served = this.all()
      .filter((type) => type.group === group && type.versions.includes(version))
      .sort((left, right) => left.plural.localeCompare(right.plural));
    for (const type of served) {
      const entry: JsonObject = {
        name: type.plural,
        singularName: type.singular,
        namespaced: type.namespaced,
        kind: type.kind,
        verbs: RESOURCE_VERBS,
      };
      if (type.shortNames.length > 0) entry.shortNames = type.shortNames;
      if (type.categories.length > 0) entry.categories = type.categories;
      resources.push(entry);
      if (type.hasStatusSubresource) {
        resources.push({
          name: `${type.plural}/status`,
          singularName: '',
          namespaced: type.namespaced,
          kind: type.kind,
          verbs: STATUS_SUBRESOURCE_VERBS,
        });
      }
    }
    return {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: groupVersion(group, version),
      resources,
    };
  }

  apiGroup(name: string, versions: string[]): JsonObject {
    const versionEntries = versions.map((version) => ({ groupVersion: `${name}/${version}`, version }));
    return { name, versions: versionEntries, preferredVersion: versionEntries[0] };
  }

  groupList(): JsonObject {
    const groups = [...this.groups()].map(([name, versions]) => this.apiGroup(name, versions));
    return { kind: 'APIGroupList', apiVersion: 'v1', groups };
  }
}
