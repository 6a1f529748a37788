import { isJsonObject, objectField, stringField, type JsonObject } from './json';
import { compareKubeVersions, type ResourceType } from './resource-registry';

// What the apiextensions server does with a CustomResourceDefinition, reduced to what clients can
// observe: validation (422 on a malformed definition), the `Established` status written right away
// (there is no separate controller here, so the definition is established in the same write), and
// the resource type that discovery and routing then serve.

interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  hasStatus: boolean;
}

function crdVersions(spec: JsonObject | undefined): CrdVersion[] {
  const versions = spec?.versions;
  if (!Array.isArray(versions)) return [];
  return versions.filter(isJsonObject).map((version) => ({
    name: stringField(version, 'name') ?? '',
    served: version.served === true,
    storage: version.storage === true,
    hasStatus: objectField(objectField(version, 'subresources'), 'status') !== undefined,
  }));
}

/** Field errors in the shape `spec.scope: Unsupported value: "x"`; empty when the definition is valid. */
export function crdValidationCauses(crd: JsonObject): string[] {
  const causes: string[] = [];
  const spec = objectField(crd, 'spec');
  const names = objectField(spec, 'names');
  const group = stringField(spec, 'group') ?? '';
  const plural = stringField(names, 'plural') ?? '';
  if (!group.includes('.'))
    causes.push(`spec.group: Invalid value: "${group}": should be a domain with at least one dot`);
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(plural))
    causes.push(`spec.names.plural: Invalid value: "${plural}": a lowercase RFC 1123 label is required`);
  if (!/^[A-Za-z][A-Za-z0-9]*$/.test(stringField(names, 'kind') ?? ''))
    causes.push('spec.names.kind: Required value');
  const scope = stringField(spec, 'scope');
  if (scope !== 'Namespaced' && scope !== 'Cluster')
    causes.push(`spec.scope: Unsupported value: "${scope ?? ''}": supported values: "Cluster", "Namespaced"`);
  const name = stringField(objectField(crd, 'metadata'), 'name');
  if (name !== `${plural}.${group}`)
    causes.push(`metadata.name: Invalid value: "${name ?? ''}": must be spec.names.plural+"."+spec.group`);
  const versions = crdVersions(spec);
  if (versions.length === 0)
    causes.push('spec.versions: Invalid value: must have exactly one version marked as storage version');
  else if (versions.filter((version) => version.storage).length !== 1)
    causes.push('spec.versions: Invalid value: must have exactly one version marked as storage version');
  for (const version of versions) {
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(version.name))
      causes.push(`spec.versions.name: Invalid value: "${version.name}": a DNS-1035 label is required`);
  }
  return causes;
}

/** Changes the real server refuses on an existing definition. */
export function crdUpdateCauses(current: JsonObject, next: JsonObject): string[] {
  const scopeOf = (crd: JsonObject) => stringField(objectField(crd, 'spec'), 'scope');
  return scopeOf(current) === scopeOf(next) ? [] : ['spec.scope: Invalid value: field is immutable'];
}

/** Writes the status the apiextensions controllers would: names accepted, established. */
export function establish(crd: JsonObject, now: string): void {
  const spec = objectField(crd, 'spec');
  const names = objectField(spec, 'names') ?? {};
  const kind = stringField(names, 'kind') ?? '';
  const previous = objectField(crd, 'status');
  const acceptedNames: JsonObject = {
    ...names,
    kind,
    listKind: stringField(names, 'listKind') ?? `${kind}List`,
    singular: stringField(names, 'singular') ?? kind.toLowerCase(),
  };
  const storage = crdVersions(spec).find((version) => version.storage)?.name;
  const storedVersions = new Set<string>();
  const previousStored = previous?.storedVersions;
  if (Array.isArray(previousStored))
    previousStored.forEach((v) => typeof v === 'string' && storedVersions.add(v));
  if (storage) storedVersions.add(storage);
  const condition = (type: string, reason: string, message: string): JsonObject => ({
    type,
    status: 'True',
    lastTransitionTime: now,
    reason,
    message,
  });
  const previousConditions = previous?.conditions;
  crd.status = {
    acceptedNames,
    conditions: Array.isArray(previousConditions)
      ? previousConditions
      : [
          condition('NamesAccepted', 'NoConflicts', 'no conflicts found'),
          condition('Established', 'InitialNamesAccepted', 'the initial names have been accepted'),
        ],
    storedVersions: [...storedVersions],
  };
}

/** The type a valid definition serves, or undefined when it serves no version. */
export function resourceTypeFromCrd(crd: JsonObject): ResourceType | undefined {
  const spec = objectField(crd, 'spec');
  const names = objectField(spec, 'names');
  const kind = stringField(names, 'kind') ?? '';
  const versions = crdVersions(spec);
  const served = versions.filter((version) => version.served).map((version) => version.name);
  if (served.length === 0) return undefined;
  const stringList = (key: string) => {
    const value = names?.[key];
    return Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === 'string') : [];
  };
  return {
    group: stringField(spec, 'group') ?? '',
    versions: served.sort(compareKubeVersions),
    kind,
    listKind: stringField(names, 'listKind') ?? `${kind}List`,
    plural: stringField(names, 'plural') ?? '',
    singular: stringField(names, 'singular') ?? kind.toLowerCase(),
    namespaced: stringField(spec, 'scope') === 'Namespaced',
    shortNames: stringList('shortNames'),
    categories: stringList('categories'),
    hasStatusSubresource: versions.some((version) => version.hasStatus),
    builtIn: false,
    deleteReturnsObject: true,
    definedBy: stringField(objectField(crd, 'metadata'), 'name'),
  };
}
