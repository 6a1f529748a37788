import { badRequest, invalid } from './api-status';
import { CRD_GROUP, CRD_PLURAL, NAMESPACE_PLURAL } from './builtin-resources';
import { crdUpdateCauses, crdValidationCauses, establish } from './custom-resource-definitions';
import { objectField, stringField, type JsonObject } from './json';
import { groupVersion, type ResourceType } from './resource-registry';

// What the real registries check and default on every write, apart from storage: type metadata
// matching the endpoint, valid names, and the per-kind rules clients can observe (a namespace's
// name label, a CustomResourceDefinition's validation and Established status).

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const GENERATE_NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** Timestamps as the API server writes them: RFC 3339, seconds precision, UTC. */
export function kubernetesTimestamp(date = new Date()): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function metadataOf(object: JsonObject): JsonObject {
  const metadata = objectField(object, 'metadata');
  if (metadata) return metadata;
  const created: JsonObject = {};
  object.metadata = created;
  return created;
}

export function checkTypeMeta(type: ResourceType, version: string, object: JsonObject): void {
  const expected = groupVersion(type.group, version);
  const apiVersion = stringField(object, 'apiVersion');
  if (apiVersion !== undefined && apiVersion !== expected)
    throw badRequest(
      `the API version in the data (${apiVersion}) does not match the expected API version (${expected})`,
    );
  const kind = stringField(object, 'kind');
  if (kind !== undefined && kind !== type.kind)
    throw badRequest(`the kind in the data (${kind}) does not match the expected kind (${type.kind})`);
  if (object.metadata !== undefined && objectField(object, 'metadata') === undefined)
    throw badRequest('metadata must be an object');
  object.apiVersion = expected;
  object.kind = type.kind;
}

export function validateName(type: ResourceType, name: string): void {
  const isNamespace = type.group === '' && type.plural === NAMESPACE_PLURAL;
  const causes: string[] = [];
  if (name === '') causes.push('metadata.name: Required value: name or generateName is required');
  else if (
    isNamespace ? !DNS_LABEL.test(name) || name.length > 63 : !DNS_SUBDOMAIN.test(name) || name.length > 253
  )
    causes.push(
      `metadata.name: Invalid value: "${name}": a lowercase RFC 1123 ${isNamespace ? 'label' : 'subdomain'} must ` +
        `consist of lower case alphanumeric characters, '-'${isNamespace ? '' : " or '.'"}, and must start and ` +
        'end with an alphanumeric character',
    );
  if (causes.length > 0) throw invalid(type.kind, name, type.group, causes);
}

/** Per-kind defaulting and validation the real registries apply on every write. */
export function applyKindRules(
  type: ResourceType,
  object: JsonObject,
  current: JsonObject | undefined,
): void {
  const metadata = metadataOf(object);
  const name = stringField(metadata, 'name') ?? '';
  if (type.group === '' && type.plural === NAMESPACE_PLURAL) {
    // Since 1.21 every namespace carries this label, so namespace selectors can match by name.
    metadata.labels = { ...objectField(metadata, 'labels'), 'kubernetes.io/metadata.name': name };
    object.spec = { finalizers: ['kubernetes'], ...objectField(object, 'spec') };
    object.status = { phase: 'Active', ...objectField(object, 'status') };
  }
  if (type.group === CRD_GROUP && type.plural === CRD_PLURAL) {
    const causes = [...crdValidationCauses(object), ...(current ? crdUpdateCauses(current, object) : [])];
    if (causes.length > 0) throw invalid(type.kind, name, type.group, causes);
    establish(object, kubernetesTimestamp());
  }
}

export function randomNameSuffix(): string {
  let suffix = '';
  for (let index = 0; index < 5; index += 1)
    suffix += GENERATE_NAME_ALPHABET[Math.floor(Math.random() * GENERATE_NAME_ALPHABET.length)];
  return suffix;
}
