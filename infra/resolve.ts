// Arguments -> a fully defaulted, validated configuration. Pure: no Pulumi resources here, so every rule
// is testable on its own and every problem is reported at once, before anything is registered.
import type * as pulumi from '@pulumi/pulumi';
import {
  ALWAYS_EXCLUDED_NAMESPACES,
  CertManagement,
  DEFAULTS,
  DetailLevel,
  FailurePolicy,
  ImagePullPolicy,
  IssuerKind,
  type ForewarnArgs,
  type IssuerRefArgs,
  type ResourceRequirements,
  type Toleration,
} from './args';
import {
  DNS1035_LABEL,
  MAX_COMPONENT_NAME_LENGTH,
  QUANTITY,
  checkDurations,
  checkLabel,
  checkSubdomain,
  checkTolerations,
  isInteger,
  isOneOf,
  quoted,
  show,
} from './checks';
import {
  resolveControllerSettings,
  resolveNetworkPolicy,
  resolveParamKinds,
  resolvePolicyReports,
  resolveReferenceKeySecret,
} from './resolve-controller';
import type { ParamKindResource } from '../services/model/param-kinds';
import { resolveApiServerClientCa, type ResolvedApiServerClientCa } from './resolve-webhook';

export { parseGoDuration } from './checks';

/** Object names derived from the component name, so two instances never collide (cluster-scoped included). */
export interface ForewarnNames {
  namespace: string;
  controller: string;
  webhook: string;
  /** The ValidatingWebhookConfiguration (cluster-scoped). */
  webhookConfiguration: string;
  /** The webhook entry inside the configuration (must be a fully qualified name). */
  webhookEntry: string;
  tlsSecret: string;
  certificate: string;
  /** The Secret the component creates for the reference key when none is given. */
  referenceKeySecret: string;
}

export interface ResolvedResources {
  requests: { cpu: string; memory: string };
  limits: { cpu: string; memory: string };
}

export interface ResolvedForewarn {
  name: string;
  names: ForewarnNames;
  createNamespace: boolean;
  namespaceLabels: { [key: string]: string };
  namespaceAnnotations: { [key: string]: string };
  images: { controller: pulumi.Input<string>; webhook: pulumi.Input<string>; pullPolicy: ImagePullPolicy };
  controller: {
    replicas: number;
    detailLevel: DetailLevel;
    mcp: boolean;
    flowobserverAddress?: pulumi.Input<string>;
    contact?: pulumi.Input<string>;
    rescanInterval?: string;
    resources: ResolvedResources;
    extraArgs: string[];
    networkPolicy: { enabled: boolean; allowedNamespaces: string[] };
    /** An existing Secret holding the reference key; unset: the component creates one. */
    referenceKeySecret?: string;
    /** Custom resources read as ValidatingAdmissionPolicy params: a flag and a ClusterRole rule each. */
    paramKinds: ParamKindResource[];
    /** `--policy-reports` and the ClusterRole rules on PolicyReports (infra/rbac.ts). */
    policyReports: boolean;
  };
  webhook: {
    enabled: boolean;
    replicas: number;
    failurePolicy: FailurePolicy;
    timeoutSeconds: number;
    certManagement: CertManagement;
    /** Set in managed mode only. */
    issuerRef?: { name: string; kind?: string; group?: string };
    duration: string;
    renewBefore: string;
    pdb: { enabled: boolean; minAvailable: number };
    /** kube-system, kube-public, kube-node-lease, the own namespace, then the extra ones; no duplicates. */
    excludedNamespaces: string[];
    resources: ResolvedResources;
    extraArgs: string[];
    /** Unset: the webhook knows no API server (every review at the controller's detail level). */
    apiServerClientCa?: ResolvedApiServerClientCa;
  };
  labels: { [key: string]: string };
  annotations: { [key: string]: string };
  nodeSelector: { [key: string]: string };
  tolerations: Toleration[];
  priorityClassName?: string;
  imagePullSecrets: string[];
}

/** Derives every object name from the component name (see ForewarnNames). */
export function forewarnNames(name: string, namespace: string): ForewarnNames {
  const webhook = `${name}-webhook`;
  return {
    namespace,
    controller: `${name}-controller`,
    webhook,
    webhookConfiguration: webhook,
    webhookEntry: 'warnings.forewarn.io',
    tlsSecret: `${webhook}-tls`,
    certificate: webhook,
    referenceKeySecret: `${name}-controller-reference-key`,
  };
}

function resolveResources(
  path: string,
  given: ResourceRequirements | undefined,
  defaults: ResolvedResources,
  errors: string[],
): ResolvedResources {
  const resolved: ResolvedResources = {
    requests: {
      cpu: given?.requests?.cpu ?? defaults.requests.cpu,
      memory: given?.requests?.memory ?? defaults.requests.memory,
    },
    limits: {
      cpu: given?.limits?.cpu ?? defaults.limits.cpu,
      memory: given?.limits?.memory ?? defaults.limits.memory,
    },
  };
  for (const kind of ['requests', 'limits'] as const) {
    for (const resource of ['cpu', 'memory'] as const) {
      const value = resolved[kind][resource];
      if (typeof value !== 'string' || !QUANTITY.test(value)) {
        errors.push(
          `${path}.${kind}.${resource} must be a Kubernetes quantity such as "50m" or "128Mi" (got ${show(value)})`,
        );
      }
    }
  }
  return resolved;
}

function resolveIssuerRef(
  args: ForewarnArgs,
  certManagement: CertManagement,
  errors: string[],
): ResolvedForewarn['webhook']['issuerRef'] {
  const issuer = args.admissionWebhook?.certIssuer;
  if (issuer?.issuerKind !== undefined && !isOneOf(IssuerKind, issuer.issuerKind)) {
    errors.push(
      `admissionWebhook.certIssuer.issuerKind must be one of ${quoted(IssuerKind)} (got ${show(issuer.issuerKind)})`,
    );
  }
  if (certManagement !== CertManagement.Managed) {
    return undefined;
  }
  const ref: IssuerRefArgs | undefined = issuer?.issuerRef;
  const refIsSet =
    ref !== undefined && Object.values(ref).some((value) => value !== undefined && value !== '');
  if (refIsSet) {
    // The spec: a non-empty issuerRef overrides issuerName and issuerKind.
    if (!ref.name) {
      errors.push('admissionWebhook.certIssuer.issuerRef must have a name when it is set');
      return undefined;
    }
    return { name: ref.name, kind: ref.kind || undefined, group: ref.group || undefined };
  }
  if (!issuer?.issuerName) {
    errors.push(
      'admissionWebhook.certManagement is "managed" but no issuer is set: set admissionWebhook.certIssuer.issuerName ' +
        '(and issuerKind) or admissionWebhook.certIssuer.issuerRef to an existing cert-manager issuer',
    );
    return undefined;
  }
  return { name: issuer.issuerName, kind: issuer.issuerKind };
}

function checkComponentName(name: string, errors: string[]): void {
  if (!DNS1035_LABEL.test(name) || name.length > MAX_COMPONENT_NAME_LENGTH) {
    errors.push(
      `the component name ${show(name)} must be a DNS-1035 label (lowercase letters, digits and "-", starting ` +
        `with a letter) of at most ${MAX_COMPONENT_NAME_LENGTH} characters: every object name is derived from it`,
    );
  }
}

type WebhookArgs = NonNullable<ForewarnArgs['admissionWebhook']>;

/** Failure policy and timeout: what the API server does while the webhook is slow or down. */
function resolveWebhookFailure(
  webhookArgs: WebhookArgs,
  errors: string[],
): Pick<ResolvedForewarn['webhook'], 'failurePolicy' | 'timeoutSeconds'> {
  const failurePolicy = webhookArgs.failurePolicy ?? DEFAULTS.admissionWebhook.failurePolicy;
  if (failurePolicy !== FailurePolicy.Ignore) {
    errors.push(
      `admissionWebhook.failurePolicy must be "Ignore" (got ${show(failurePolicy)}): Forewarn only warns, and any ` +
        'other policy would block deployments in the whole cluster while the webhook is down (spec B-2)',
    );
  }
  const timeoutSeconds = webhookArgs.timeoutSeconds ?? DEFAULTS.admissionWebhook.timeoutSeconds;
  if (!isInteger(timeoutSeconds) || timeoutSeconds < 1 || timeoutSeconds > 9) {
    errors.push(
      `admissionWebhook.timeoutSeconds must be an integer from 1 to 9 (got ${show(timeoutSeconds)}): the API ` +
        'server waits that long on every admission request, so it stays under 10 seconds',
    );
  }
  return { failurePolicy, timeoutSeconds };
}

/** How the serving certificate is issued: the mode, the issuer and the lifetimes cert-manager uses. */
function resolveWebhookCertificate(
  args: ForewarnArgs,
  errors: string[],
): Pick<ResolvedForewarn['webhook'], 'certManagement' | 'issuerRef' | 'duration' | 'renewBefore'> {
  const webhookArgs = args.admissionWebhook ?? {};
  const certManagement = webhookArgs.certManagement ?? DEFAULTS.admissionWebhook.certManagement;
  if (!isOneOf(CertManagement, certManagement)) {
    errors.push(
      `admissionWebhook.certManagement must be one of ${quoted(CertManagement)} (got ${show(certManagement)})`,
    );
  }
  const issuerRef = resolveIssuerRef(args, certManagement, errors);
  const duration = webhookArgs.certIssuer?.duration ?? DEFAULTS.admissionWebhook.duration;
  const renewBefore = webhookArgs.certIssuer?.renewBefore ?? DEFAULTS.admissionWebhook.renewBefore;
  if (certManagement === CertManagement.Managed) {
    checkDurations(duration, renewBefore, errors);
  }
  return { certManagement, issuerRef, duration, renewBefore };
}

function resolvePodDisruptionBudget(
  webhookArgs: WebhookArgs,
  replicas: number,
  errors: string[],
  warnings: string[],
): ResolvedForewarn['webhook']['pdb'] {
  const enabled = webhookArgs.pdb?.enabled ?? DEFAULTS.admissionWebhook.pdb.enabled;
  const minAvailable = webhookArgs.pdb?.minAvailable ?? DEFAULTS.admissionWebhook.pdb.minAvailable;
  if (!isInteger(minAvailable) || minAvailable < 0) {
    errors.push(
      `admissionWebhook.pdb.minAvailable must be an integer of at least 0 (got ${show(minAvailable)})`,
    );
  } else if (enabled && minAvailable >= replicas) {
    // Valid, but a node drain could then never evict a webhook pod.
    warnings.push(
      `admissionWebhook.pdb.minAvailable (${minAvailable}) is not lower than admissionWebhook.replicas ` +
        `(${replicas}): node drains will wait forever for the webhook pods; raise replicas or disable the PDB`,
    );
  }
  return { enabled, minAvailable };
}

/** The webhook's checked settings, in the order its problems are reported; its resources come last. */
function resolveWebhookSettings(
  args: ForewarnArgs,
  namespace: string,
  errors: string[],
  warnings: string[],
): Omit<ResolvedForewarn['webhook'], 'resources' | 'extraArgs'> {
  const webhookArgs = args.admissionWebhook ?? {};
  const replicas = webhookArgs.replicas ?? DEFAULTS.admissionWebhook.replicas;
  if (!isInteger(replicas) || replicas < 1) {
    errors.push(`admissionWebhook.replicas must be an integer of at least 1 (got ${show(replicas)})`);
  }
  const failure = resolveWebhookFailure(webhookArgs, errors);
  const certificate = resolveWebhookCertificate(args, errors);
  const pdb = resolvePodDisruptionBudget(webhookArgs, replicas, errors, warnings);
  const extraExcluded = webhookArgs.excludedNamespaces ?? [];
  extraExcluded.forEach((excluded, index) =>
    checkLabel(`admissionWebhook.excludedNamespaces[${index}]`, excluded, errors),
  );
  return {
    enabled: webhookArgs.enabled ?? DEFAULTS.admissionWebhook.enabled,
    replicas,
    ...failure,
    ...certificate,
    pdb,
    excludedNamespaces: [...new Set([...ALWAYS_EXCLUDED_NAMESPACES, namespace, ...extraExcluded])],
  };
}

/** Scheduling and image settings both processes share. */
function resolvePodSettings(
  args: ForewarnArgs,
  errors: string[],
): Pick<ResolvedForewarn, 'images' | 'tolerations' | 'imagePullSecrets'> {
  const pullPolicy = args.images?.pullPolicy ?? DEFAULTS.imagePullPolicy;
  if (!isOneOf(ImagePullPolicy, pullPolicy)) {
    errors.push(`images.pullPolicy must be one of ${quoted(ImagePullPolicy)} (got ${show(pullPolicy)})`);
  }
  const tolerations = args.tolerations ?? [];
  checkTolerations(tolerations, errors);
  const imagePullSecrets = args.imagePullSecrets ?? [];
  imagePullSecrets.forEach((secret, index) => checkSubdomain(`imagePullSecrets[${index}]`, secret, errors));
  const controllerImage = args.images?.controller ?? DEFAULTS.image;
  return {
    images: { controller: controllerImage, webhook: args.images?.webhook ?? controllerImage, pullPolicy },
    tolerations,
    imagePullSecrets,
  };
}

/**
 * Applies the defaults of ForewarnArgs and checks every rule. Returns every problem found (empty when the
 * arguments are valid), which the component turns into one ResourceError, and warnings about valid but
 * risky values, which it logs.
 */
export function resolveForewarnArgs(
  name: string,
  args: ForewarnArgs,
): { config: ResolvedForewarn; errors: string[]; warnings: string[] } {
  const errors: string[] = [];
  const warnings: string[] = [];
  checkComponentName(name, errors);
  const namespace = args.namespace?.name ?? name;
  checkLabel('namespace.name', namespace, errors);
  const controllerArgs = args.controller ?? {};
  const controller = resolveControllerSettings(controllerArgs, errors);
  const webhookArgs = args.admissionWebhook ?? {};
  const webhook = resolveWebhookSettings(args, namespace, errors, warnings);
  const pods = resolvePodSettings(args, errors);
  const config: ResolvedForewarn = {
    name,
    names: forewarnNames(name, namespace),
    createNamespace: args.namespace?.create ?? DEFAULTS.createNamespace,
    namespaceLabels: args.namespace?.labels ?? {},
    namespaceAnnotations: args.namespace?.annotations ?? {},
    images: pods.images,
    controller: {
      ...controller,
      mcp: controllerArgs.mcp ?? DEFAULTS.controller.mcp,
      flowobserverAddress: controllerArgs.flowobserverAddress,
      contact: controllerArgs.contact,
      rescanInterval: controllerArgs.rescanInterval,
      resources: resolveResources(
        'controller.resources',
        controllerArgs.resources,
        DEFAULTS.controller.resources,
        errors,
      ),
      extraArgs: controllerArgs.extraArgs ?? [],
      networkPolicy: resolveNetworkPolicy(controllerArgs.networkPolicy, errors),
      referenceKeySecret: resolveReferenceKeySecret(controllerArgs.referenceKeySecret, errors),
      paramKinds: resolveParamKinds(controllerArgs.paramKinds, errors),
      policyReports: resolvePolicyReports(controllerArgs.policyReports, errors),
    },
    webhook: {
      ...webhook,
      resources: resolveResources(
        'admissionWebhook.resources',
        webhookArgs.resources,
        DEFAULTS.admissionWebhook.resources,
        errors,
      ),
      extraArgs: webhookArgs.extraArgs ?? [],
      apiServerClientCa: resolveApiServerClientCa(webhookArgs.apiServerClientCa, errors),
    },
    labels: args.labels ?? {},
    annotations: args.annotations ?? {},
    nodeSelector: args.nodeSelector ?? {},
    tolerations: pods.tolerations,
    priorityClassName: args.priorityClassName,
    imagePullSecrets: pods.imagePullSecrets,
  };
  return { config, errors, warnings };
}
