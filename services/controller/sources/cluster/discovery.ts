import type { AdapterName } from '../../../model/api';
import { isRecord } from '../../../model/kubernetes';
import { COMPANION_KINDS, INVENTORY_KINDS, type AdapterKind } from '../../../model/watched-kinds';
import type { ParamKindResource } from '../../../model/param-kinds';
import type { AdapterRegistry } from '../../adapters/registry';

// Which kinds to watch, decided from API discovery: a pure function of the discovery documents and
// the kinds Forewarn knows, so it is tested without a server.

/** Who needs a watched kind: an adapter, or the inventory (namespaces, workloads, CRDs, companion kinds). */
export type WatchOwner = AdapterName | 'inventory';

export interface WatchCandidate {
  group: string;
  /** Tried in order; the first one the cluster serves is watched. */
  versions: readonly string[];
  kind: string;
  owner: WatchOwner;
  /**
   * Matched by resource name instead of kind: a configured param kind (`--param-kinds`) is named by
   * its plural, the kind is what discovery says it serves there.
   */
  plural?: string;
}

export interface WatchTarget {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  owner: WatchOwner;
}

export interface ServedResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

/** Discovery as fetched: group → version → resources, plus each group's preferred version. */
export interface DiscoveryDocument {
  groups: Map<string, { preferredVersion: string; versions: Map<string, ServedResource[]> }>;
}

function inventoryCandidate({ group, versions, kind }: AdapterKind): WatchCandidate {
  return { group, versions, kind, owner: 'inventory' };
}

/** Kinds watched for everything that is not a policy: namespace labels, workload labels, CRDs. */
export const INVENTORY_CANDIDATES: readonly WatchCandidate[] = INVENTORY_KINDS.map(inventoryCandidate);

/** Kinds the companion-resource rules look for (MissingResource). */
export const COMPANION_CANDIDATES: readonly WatchCandidate[] = COMPANION_KINDS.map(inventoryCandidate);

/** The configured param kinds, each watched in the version configured. */
export function paramKindCandidates(resources: readonly ParamKindResource[]): WatchCandidate[] {
  return resources.map(({ group, version, plural }) => ({
    group,
    versions: [version],
    kind: '',
    plural,
    owner: 'inventory',
  }));
}

export function candidatesOf(
  registry: AdapterRegistry,
  extra: readonly WatchCandidate[] = INVENTORY_CANDIDATES,
): WatchCandidate[] {
  // A kind both the inventory and an adapter need (Namespace: labels, and Pod Security Admission)
  // is watched once, owned by the adapter so its health shows the watch.
  const adapterKinds = new Set(registry.allKinds().map(({ kind }) => targetKey(kind)));
  return [
    ...extra.filter((candidate) => !adapterKinds.has(targetKey(candidate))),
    ...registry.allKinds().map(({ adapter, kind }) => ({
      group: kind.group,
      versions: kind.versions,
      kind: kind.kind,
      owner: adapter.name as WatchOwner,
    })),
  ];
}

/** The groups whose resource lists discovery must fetch. */
export function groupsOfInterest(
  candidates: readonly WatchCandidate[],
  dynamicGroups: readonly string[],
): Set<string> {
  return new Set([...candidates.map((candidate) => candidate.group), ...dynamicGroups]);
}

export function resolveWatchTargets(
  discovery: DiscoveryDocument,
  candidates: readonly WatchCandidate[],
  dynamicGroups: ReadonlyMap<string, AdapterName>,
): WatchTarget[] {
  const targets: WatchTarget[] = [];
  for (const candidate of candidates) {
    const group = discovery.groups.get(candidate.group);
    if (!group) continue;
    for (const version of candidate.versions) {
      const resource = group.versions
        .get(version)
        ?.find(
          (served) =>
            (candidate.plural === undefined
              ? served.kind === candidate.kind
              : served.name === candidate.plural) && !served.name.includes('/'),
        );
      if (resource) {
        targets.push({
          group: candidate.group,
          version,
          kind: resource.kind,
          plural: resource.name,
          namespaced: resource.namespaced,
          owner: candidate.owner,
        });
        break;
      }
    }
  }
  for (const [groupName, owner] of dynamicGroups) {
    const group = discovery.groups.get(groupName);
    const resources = group?.versions.get(group.preferredVersion) ?? [];
    for (const resource of resources) {
      if (resource.name.includes('/')) continue;
      targets.push({
        group: groupName,
        version: group?.preferredVersion ?? '',
        kind: resource.kind,
        plural: resource.name,
        namespaced: resource.namespaced,
        owner,
      });
    }
  }
  return targets;
}

export function targetKey(target: Pick<WatchTarget, 'group' | 'kind'>): string {
  return `${target.group}/${target.kind}`;
}

/** `/api/v1/pods` or `/apis/apps/v1/deployments`: the all-namespaces list/watch path. */
export function collectionPath(target: WatchTarget): string {
  return target.group === ''
    ? `/api/${target.version}/${target.plural}`
    : `/apis/${target.group}/${target.version}/${target.plural}`;
}

export function apiVersionOf(target: Pick<WatchTarget, 'group' | 'version'>): string {
  return target.group === '' ? target.version : `${target.group}/${target.version}`;
}

/** Reads an APIResourceList body into served resources; tolerant of unknown fields. */
export function parseResourceList(body: unknown): ServedResource[] {
  if (!isRecord(body) || !Array.isArray(body.resources)) return [];
  return body.resources.flatMap((resource) =>
    isRecord(resource) && typeof resource.name === 'string' && typeof resource.kind === 'string'
      ? [{ name: resource.name, kind: resource.kind, namespaced: resource.namespaced === true }]
      : [],
  );
}

/** Reads an APIGroupList body: group name → versions and preferred version. */
export function parseGroupList(body: unknown): Map<string, { versions: string[]; preferredVersion: string }> {
  const groups = new Map<string, { versions: string[]; preferredVersion: string }>();
  if (!isRecord(body) || !Array.isArray(body.groups)) return groups;
  for (const group of body.groups) {
    if (!isRecord(group) || typeof group.name !== 'string' || !Array.isArray(group.versions)) continue;
    const versions = group.versions.flatMap((entry) =>
      isRecord(entry) && typeof entry.version === 'string' ? [entry.version] : [],
    );
    const preferred =
      isRecord(group.preferredVersion) && typeof group.preferredVersion.version === 'string'
        ? group.preferredVersion.version
        : (versions[0] ?? '');
    groups.set(group.name, { versions, preferredVersion: preferred });
  }
  return groups;
}
