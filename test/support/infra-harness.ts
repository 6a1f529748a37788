// Test harness of the Pulumi component: mocks that record every registered resource, helpers to read
// outputs, and Kubernetes OpenAPI validation of the rendered objects (kubernetes-models, CommonJS 4.x).
//
// setMocks changes global state of @pulumi/pulumi (kept on `global`), but jest runs every test file in its
// own global context with its own module registry, so files never see each other's mocks. Inside a file,
// call installMocks() before each scenario: it replaces the monitor and starts a fresh record (the
// previous scenario must have settled, or its late registrations land in the new record).
import * as pulumi from '@pulumi/pulumi';
import { Certificate } from '@kubernetes-models/cert-manager/cert-manager.io/v1/Certificate';
import { ValidatingWebhookConfiguration } from 'kubernetes-models/admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { errorMessage } from '../../services/model/error-message';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** One resource as the engine saw it. */
export interface Registered {
  type: string;
  name: string;
  /** Inputs with secrets still wrapped (see isSecretValue). */
  inputs: JsonObject;
  provider: string;
}

export const FAKE_PRIVATE_KEY = '-----BEGIN RSA PRIVATE KEY-----\nMIIfake\n-----END RSA PRIVATE KEY-----\n';
export const FAKE_CERT = (subject: string): string =>
  `-----BEGIN CERTIFICATE-----\n${Buffer.from(subject).toString('base64')}\n-----END CERTIFICATE-----\n`;

/**
 * What the TLS provider would compute. In preview with `unknownTlsOutputs` nothing is returned, as a real
 * preview of a first deploy: the PEMs are unknown.
 */
function tlsOutputs(type: string, name: string): JsonObject {
  switch (type) {
    case 'tls:index/privateKey:PrivateKey':
      return { privateKeyPem: FAKE_PRIVATE_KEY, publicKeyPem: 'public' };
    case 'tls:index/selfSignedCert:SelfSignedCert':
    case 'tls:index/locallySignedCert:LocallySignedCert':
      return { certPem: FAKE_CERT(name) };
    case 'tls:index/certRequest:CertRequest':
      return {
        certRequestPem: `-----BEGIN CERTIFICATE REQUEST-----\n${name}\n-----END CERTIFICATE REQUEST-----\n`,
      };
    default:
      return {};
  }
}

export interface MockOptions {
  preview?: boolean;
  /** Return no computed TLS outputs (they stay unknown in preview). */
  unknownTlsOutputs?: boolean;
}

/** Installs fresh mocks and returns the live list of registered resources. */
export function installMocks(options: MockOptions = {}): Registered[] {
  const registered: Registered[] = [];
  void pulumi.runtime.setMocks(
    {
      newResource(args: pulumi.runtime.MockResourceArgs): { id: string; state: JsonObject } {
        const inputs = args.inputs as JsonObject;
        registered.push({ type: args.type, name: args.name, inputs, provider: args.provider ?? '' });
        const computed = options.unknownTlsOutputs ? {} : tlsOutputs(args.type, args.name);
        return { id: `${args.name}-id`, state: { ...inputs, ...computed } };
      },
      call(args: pulumi.runtime.MockCallArgs): JsonObject {
        return args.inputs as JsonObject;
      },
    },
    'forewarn',
    'test',
    options.preview ?? false,
  );
  return registered;
}

/** The value of an output (never resolves for an unknown output in preview). */
export function valueOf<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => output.apply(resolve));
}

/** Whether an output is known (false for values computed by the provider during preview). */
export function isKnown<T>(output: pulumi.Output<T>): Promise<boolean> {
  return (output as unknown as { isKnown: Promise<boolean> }).isKnown;
}

/**
 * Whether a (nested) input value was unknown when registered. The mocks drop unknown top-level inputs and
 * show nested ones as an `{ __pulumiUnknown: true }` marker.
 */
export function isUnknownInput(value: Json | undefined): boolean {
  return (
    value === undefined ||
    (typeof value === 'object' && value !== null && !Array.isArray(value) && value.__pulumiUnknown === true)
  );
}

/** Waits until no resource was registered for a few turns of the event loop. */
export async function settle(registered: Registered[]): Promise<void> {
  let quietTurns = 0;
  let lastCount = -1;
  while (quietTurns < 5) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    quietTurns = registered.length === lastCount ? quietTurns + 1 : 0;
    lastCount = registered.length;
  }
}

export function isSecretValue(value: Json | undefined): value is JsonObject {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    value[pulumi.runtime.specialSigKey] === pulumi.runtime.specialSecretSig
  );
}

/** A deep copy with every secret replaced by its value. */
export function unwrapSecrets(value: Json): Json {
  if (isSecretValue(value)) {
    return unwrapSecrets(value.value);
  }
  if (Array.isArray(value)) {
    return value.map(unwrapSecrets);
  }
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value as JsonObject).map(([key, inner]) => [key, unwrapSecrets(inner)]),
    );
  }
  return value;
}

export function isKubernetes(resource: Registered): boolean {
  return resource.type.startsWith('kubernetes:');
}

/** The Kubernetes object a resource renders (secrets unwrapped). */
export function manifest(resource: Registered): JsonObject {
  return unwrapSecrets(resource.inputs) as JsonObject;
}

/** Resources of a Pulumi type token such as `kubernetes:apps/v1:Deployment`. */
export function ofType(registered: Registered[], type: string): Registered[] {
  return registered.filter((resource) => resource.type === type);
}

/** The only resource of a type whose Pulumi name is `name`. */
export function one(registered: Registered[], type: string, name: string): JsonObject {
  const found = registered.filter((resource) => resource.type === type && resource.name === name);
  if (found.length !== 1) {
    throw new Error(`expected one ${type} named ${name}, found ${found.length}`);
  }
  return manifest(found[0]);
}

/** Follows a path of keys and indexes into a manifest. */
export function at(value: Json | undefined, ...path: Array<string | number>): Json | undefined {
  let current: Json | undefined = value;
  for (const key of path) {
    if (current === null || typeof current !== 'object') {
      return undefined;
    }
    current = Array.isArray(current) ? current[key as number] : (current as JsonObject)[key as string];
  }
  return current;
}

interface Validatable {
  validate(): void;
}
type ModelClass = new (data: never) => Validatable;

const MODELS: { [apiVersionKind: string]: ModelClass } = {
  'v1/Namespace': Namespace,
  'v1/ServiceAccount': ServiceAccount,
  'v1/Service': Service,
  'v1/Secret': Secret,
  'apps/v1/Deployment': Deployment,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'rbac.authorization.k8s.io/v1/ClusterRole': ClusterRole,
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': ClusterRoleBinding,
  'rbac.authorization.k8s.io/v1/Role': Role,
  'rbac.authorization.k8s.io/v1/RoleBinding': RoleBinding,
  'admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration': ValidatingWebhookConfiguration,
  'cert-manager.io/v1/Certificate': Certificate,
};

/**
 * Validates a rendered object against its OpenAPI schema (CRD schema for cert-manager objects). Throws
 * with the object's kind and name when it is invalid or when no schema is known for its kind.
 */
export function validateManifest(object: JsonObject): void {
  const key = `${object.apiVersion}/${object.kind}`;
  const Model = MODELS[key];
  if (!Model) {
    throw new Error(`no schema known for ${key}`);
  }
  try {
    new Model(object as never).validate();
  } catch (error) {
    throw new Error(`${key} ${String(at(object, 'metadata', 'name'))}: ${errorMessage(error)}`);
  }
}
