import { AdapterParseError, type AdapterContext } from '../../../model/constraint';
import { isRecord, type KubernetesObject } from '../../../model/kubernetes';
import { detail, joinText, objectName, text, type Text } from '../../../model/text';
import { readRecord, readRecordList, readStringList } from '../shared/object-fields';
import { readRequiredString } from '../shared/scope-text';

// Who a Linkerd authorization admits: ServerAuthorization `client` blocks, and the authentications an
// AuthorizationPolicy requires (MeshTLSAuthentication identities, NetworkAuthentication networks,
// ServiceAccounts). Every client is a detail or a redactable name.

export const LINKERD_GROUP = 'policy.linkerd.io';

export interface Clients {
  description: Text;
  /** Every client must present a mesh identity (mTLS). */
  meshOnly: boolean;
  /** Admits any client at all (unauthenticated, from anywhere). */
  anyone: boolean;
}

function networksText(value: unknown, where: string): Text {
  const networks = readRecordList(value, where).map((network, index) => {
    const cidr = readRequiredString(network.cidr, `${where}[${index}].cidr`);
    const except = readStringList(network.except, `${where}[${index}].except`);
    return except.length > 0 ? `${cidr} except ${except.join(', ')}` : cidr;
  });
  return [detail(networks.join(', '), 'some IP ranges')];
}

function identitiesText(identities: readonly string[], accounts: Text[]): Text {
  const parts: Text[] = [];
  if (identities.length > 0)
    parts.push(
      identities.includes('*')
        ? text`any meshed client`
        : [detail(`mesh identities ${identities.join(', ')}`, 'some mesh identities')],
    );
  if (accounts.length > 0) parts.push(text`service accounts ${joinText(accounts, ', ')}`);
  return parts.length > 0 ? joinText(parts, ' or ') : text`any meshed client`;
}

function serviceAccountText(reference: Record<string, unknown>, where: string, ownNamespace: string): Text {
  const name = readRequiredString(reference.name, `${where}.name`);
  const namespace = typeof reference.namespace === 'string' ? reference.namespace : ownNamespace;
  return [objectName(name, namespace)];
}

/** ServerAuthorization `spec.client`. */
export function serverAuthorizationClients(client: Record<string, unknown>, ownNamespace: string): Clients {
  const parts: Text[] = [];
  let meshOnly = true;
  let anyone = false;
  if (client.unauthenticated === true) {
    meshOnly = false;
    anyone = client.networks === undefined;
    parts.push(text`unauthenticated clients`);
  }
  if (client.meshTLS !== undefined) {
    const meshTLS = readRecord(client.meshTLS, 'spec.client.meshTLS');
    if (meshTLS.unauthenticatedTLS === true) {
      meshOnly = false;
      parts.push(text`TLS clients without a mesh identity`);
    } else {
      const identities = readStringList(meshTLS.identities, 'spec.client.meshTLS.identities');
      const accounts = readRecordList(meshTLS.serviceAccounts, 'spec.client.meshTLS.serviceAccounts').map(
        (account, index) =>
          serviceAccountText(account, `spec.client.meshTLS.serviceAccounts[${index}]`, ownNamespace),
      );
      parts.push(identitiesText(identities, accounts));
    }
  }
  if (client.networks !== undefined)
    parts.push(text`from ${networksText(client.networks, 'spec.client.networks')}`);
  if (parts.length === 0)
    throw new AdapterParseError('spec.client must set unauthenticated, meshTLS or networks');
  return { description: joinText(parts, ' '), meshOnly, anyone };
}

type Lookup = AdapterContext['lookup'];

function authenticationClients(
  reference: Record<string, unknown>,
  where: string,
  ownNamespace: string,
  lookup: Lookup,
): Clients {
  const kind = readRequiredString(reference.kind, `${where}.kind`);
  const name = readRequiredString(reference.name, `${where}.name`);
  const namespace = typeof reference.namespace === 'string' ? reference.namespace : ownNamespace;
  if (kind === 'ServiceAccount')
    return {
      description: text`service account ${objectName(name, namespace)}`,
      meshOnly: true,
      anyone: false,
    };
  if (kind !== 'MeshTLSAuthentication' && kind !== 'NetworkAuthentication')
    throw new AdapterParseError(`${where}.kind is ${JSON.stringify(kind)}, expected an authentication kind`);
  const found = lookup({ group: LINKERD_GROUP, kind }, namespace, name);
  // An authentication that does not exist (yet) admits nobody: Linkerd treats the policy as unsatisfiable.
  if (!isRecord(found) || !isRecord((found as KubernetesObject).spec))
    return {
      description: text`nobody (${kind} "${objectName(name, namespace)}" is missing)`,
      meshOnly: true,
      anyone: false,
    };
  const spec = (found as KubernetesObject).spec as Record<string, unknown>;
  if (kind === 'NetworkAuthentication')
    return {
      description: text`clients from ${networksText(spec.networks, `${kind} ${name} spec.networks`)}`,
      meshOnly: false,
      anyone: false,
    };
  const identities = readStringList(spec.identities, `${kind} ${name} spec.identities`);
  const accounts = readRecordList(spec.identityRefs, `${kind} ${name} spec.identityRefs`).map((ref, index) =>
    ref.kind === 'ServiceAccount'
      ? serviceAccountText(ref, `${kind} ${name} spec.identityRefs[${index}]`, namespace)
      : text`any meshed client`,
  );
  return { description: identitiesText(identities, accounts), meshOnly: true, anyone: false };
}

/** AuthorizationPolicy `requiredAuthenticationRefs`: every one must hold (AND). */
export function authorizationPolicyClients(
  spec: Record<string, unknown>,
  ownNamespace: string,
  lookup: Lookup,
): Clients {
  const references = readRecordList(spec.requiredAuthenticationRefs, 'spec.requiredAuthenticationRefs');
  if (references.length === 0) return { description: text`any client`, meshOnly: false, anyone: true };
  const each = references.map((reference, index) =>
    authenticationClients(reference, `spec.requiredAuthenticationRefs[${index}]`, ownNamespace, lookup),
  );
  return {
    description: joinText(
      each.map((clients) => clients.description),
      ' and ',
    ),
    meshOnly: each.some((clients) => clients.meshOnly),
    anyone: false,
  };
}
