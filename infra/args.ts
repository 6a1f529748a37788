// The arguments of the Forewarn component. They mirror the deployment values of the spec (section 8:
// `admissionWebhook.*` with the same names and defaults) plus the namespace, the controller, the images
// and pod scheduling. Every closed set is a TypeScript enum, never a string-literal union: the Pulumi
// schema generator (ComponentProvider.getSchema) rejects unions, and enums keep the component usable
// from other languages.
import type * as pulumi from '@pulumi/pulumi';

/** How the webhook's serving certificate is issued and rotated. */
export enum CertManagement {
  /**
   * The component creates a CA, a server certificate, the TLS Secret and the registration's caBundle at
   * the first deploy; the webhook rotates them in the cluster from then on. No dependencies.
   */
  SelfSigned = 'self-signed',
  /** cert-manager issues the certificate and injects the CA bundle into the registration. */
  Managed = 'managed',
}

/** The most detailed view the controller serves (a request may lower it, never raise it). */
export enum DetailLevel {
  /** Same-namespace names only; no ports, CIDRs, hostnames or metrics. */
  Summary = 'summary',
  /** Adds port numbers, CIDRs, effect details and metrics. */
  Detailed = 'detailed',
  /** Adds cross-namespace and cluster-scoped policy names. */
  Full = 'full',
}

/**
 * The failure policy of the webhook registration. Only `Ignore` is accepted (spec B-2): `Fail` is listed
 * because it is the other value of the Kubernetes field, and it is always rejected, since it would block
 * every deployment in the cluster while the webhook is down. (A one-member enum cannot be expressed in a
 * Pulumi schema.)
 */
export enum FailurePolicy {
  /** The API server admits the request when the webhook fails or times out. */
  Ignore = 'Ignore',
  /** Rejected by the component: Forewarn must never block a request. */
  Fail = 'Fail',
}

/** The kind of a cert-manager issuer named by `issuerName`. */
export enum IssuerKind {
  /** A cluster-scoped issuer. */
  ClusterIssuer = 'ClusterIssuer',
  /** An issuer in the component's namespace. */
  Issuer = 'Issuer',
}

/** When the kubelet pulls a container image. */
export enum ImagePullPolicy {
  Always = 'Always',
  IfNotPresent = 'IfNotPresent',
  Never = 'Never',
}

/** How a toleration matches a taint. */
export enum TolerationOperator {
  Equal = 'Equal',
  Exists = 'Exists',
}

/** The taint effect a toleration tolerates. */
export enum TaintEffect {
  NoSchedule = 'NoSchedule',
  PreferNoSchedule = 'PreferNoSchedule',
  NoExecute = 'NoExecute',
}

/** Compute resources of one container, as Kubernetes quantities (e.g. `50m`, `128Mi`). */
export interface ResourceList {
  /** CPU quantity, e.g. `50m`. */
  cpu?: string;
  /** Memory quantity, e.g. `128Mi`. */
  memory?: string;
}

/** Requests and limits of one container. A field left out keeps its default. */
export interface ResourceRequirements {
  /** What the scheduler reserves. */
  requests?: ResourceList;
  /** The ceiling the kubelet enforces. */
  limits?: ResourceList;
}

/** A pod toleration, as in the Kubernetes API. */
export interface Toleration {
  /** The taint key; empty with operator `Exists` tolerates every taint. */
  key?: string;
  /** Default `Equal`. */
  operator?: TolerationOperator;
  /** The taint value (operator `Equal` only). */
  value?: string;
  /** The taint effect to tolerate; unset tolerates all effects. */
  effect?: TaintEffect;
  /** How long a `NoExecute` taint is tolerated, in seconds; unset means forever. */
  tolerationSeconds?: number;
}

/** The namespace Forewarn runs in. */
export interface NamespaceArgs {
  /** Name of the namespace. Default: the component's name. */
  name?: string;
  /** Create the namespace (true) or use an existing one (false). Default: true. */
  create?: boolean;
  /** Extra labels of a created namespace. Default: none. */
  labels?: { [key: string]: string };
  /** Annotations of a created namespace. Default: none. */
  annotations?: { [key: string]: string };
}

/** Container images. One image holds both processes: `/webhook` and the controller's default command. */
export interface ImagesArgs {
  /** Controller image. Default: `forewarn:0.1.0` (build it with the repository's Dockerfile). */
  controller?: pulumi.Input<string>;
  /** Webhook image. Default: the controller image. */
  webhook?: pulumi.Input<string>;
  /** Pull policy of both images. Default: `IfNotPresent`. */
  pullPolicy?: ImagePullPolicy;
}

/** The controller: indexes the cluster's constraints and serves them over HTTP (8080) and MCP (8090). */
export interface ControllerArgs {
  /** Replicas. Default: 1 (each replica keeps its own index; more only add availability). */
  replicas?: number;
  /** Most detailed view served (`--detail-level`). Default: `summary`. */
  detailLevel?: DetailLevel;
  /** Serve the agent protocol (MCP) on port 8090 (`--mcp`). Default: true. */
  mcp?: boolean;
  /** host:port of a flow observer (`--flowobserver-address`). Default: unset (no flow observer). */
  flowobserverAddress?: pulumi.Input<string>;
  /** Default contact on manual remediation steps (`--contact`). Default: unset. */
  contact?: pulumi.Input<string>;
  /** Period of API discovery and CRD rescans (`--rescan-interval`, e.g. `5m`). Default: the controller's own (5m). */
  rescanInterval?: string;
  /** Requests and limits. Default: requests cpu 100m / memory 256Mi, limits cpu 500m / memory 512Mi. */
  resources?: ResourceRequirements;
  /**
   * Custom resources whose objects ValidatingAdmissionPolicies use as params (`spec.paramKind`), each
   * `group/version/plural`, e.g. `rules.example.com/v1/replicalimits` (`--param-kinds`): the controller
   * watches them so those policies' verdicts are decided, and its ClusterRole grants get/list/watch
   * on exactly these resources. Built-in kinds (ConfigMap params) are refused: least privilege.
   * Default: none (policies with params of a custom kind are `unknown`).
   */
  paramKinds?: string[];
  /**
   * Write the workloads at risk as `wgpolicyk8s.io/v1alpha2` PolicyReports (`--policy-reports`, issue
   * 35): one named `forewarn` per namespace with a workload at risk, and a ClusterPolicyReport
   * `forewarn` of the counts by namespace, for Policy Reporter and `kubectl get polr`. The PolicyReport
   * CRDs must be installed (Kyverno or Policy Reporter ship them); the controller's ClusterRole then
   * also gets get, list, create, update and delete on policyreports and clusterpolicyreports, and
   * nothing more. Default: false (no flag, no such rule).
   */
  policyReports?: boolean;
  /** Extra command-line flags appended to the controller's arguments. Default: none. */
  extraArgs?: string[];
  /**
   * Who may reach the controller's ports (HTTP 8080, MCP 8090) over the pod network. Default: a
   * NetworkPolicy that admits the webhook pods and no one else (`allowedNamespaces` adds more).
   */
  networkPolicy?: ControllerNetworkPolicyArgs;
  /**
   * The key of opaque references (`--reference-key-file`, docs/operations.md), so that every replica
   * and every restart gives a redacted constraint the same reference: the name of an existing Secret
   * in the component's namespace whose `key` entry holds at least 16 bytes. Default: unset, and the
   * component creates the Secret `<name>-controller-reference-key` with 256 random bits of its own.
   */
  referenceKeySecret?: string;
}

/**
 * The controller's NetworkPolicy. Only pod-network traffic to the controller's ports is limited:
 * `kubectl port-forward` goes through the kubelet into the pod and keeps working, and the webhook's
 * own port (reached by the API server) is not selected by it.
 */
export interface ControllerNetworkPolicyArgs {
  /** Create the NetworkPolicy. Default: true. */
  enabled?: boolean;
  /**
   * Namespaces (by name) whose pods may reach the controller's HTTP and MCP ports, besides the
   * webhook pods, e.g. `["monitoring", "agents"]` for Prometheus and in-cluster agents. Default: none.
   */
  allowedNamespaces?: string[];
}

/** A cert-manager issuer reference; when it has a name it overrides `issuerName` and `issuerKind`. */
export interface IssuerRefArgs {
  /** Name of the issuer. Default: unset (required for the reference to take effect). */
  name?: string;
  /** Kind of the issuer (e.g. `ClusterIssuer`, `Issuer`, or an external issuer's kind). Default: cert-manager's (`Issuer`). */
  kind?: string;
  /** API group of the issuer. Default: cert-manager's (`cert-manager.io`). */
  group?: string;
}

/** The certificate issuer in `managed` mode (spec section 5). */
export interface CertIssuerArgs {
  /** Name of an existing issuer. Default: unset. */
  issuerName?: string;
  /** `ClusterIssuer` or `Issuer`. Default: unset (cert-manager then assumes `Issuer`). */
  issuerKind?: IssuerKind;
  /** Full issuer reference; when it has a name it overrides issuerName and issuerKind. Default: unset. */
  issuerRef?: IssuerRefArgs;
  /** Certificate validity, as a Go duration. Default: `8760h` (1 year). */
  duration?: string;
  /** Renew this long before expiry, as a Go duration. Default: `720h` (30 days). */
  renewBefore?: string;
}

/** The webhook's PodDisruptionBudget. */
export interface PodDisruptionBudgetArgs {
  /** Create the PodDisruptionBudget. Default: true. */
  enabled?: boolean;
  /** Pods that must stay available during voluntary disruptions. Default: 1. */
  minAvailable?: number;
}

/**
 * How the webhook knows the API server (issue 32, docs/webhook.md "Who gets which warnings"): the CA
 * of the client certificate the API server presents to webhooks (its AdmissionConfiguration names a
 * kubeConfigFile with `client-certificate` for the webhook's service). Only reviews over a connection
 * with such a certificate get warnings in full; every other caller of port 8443 gets what an
 * anonymous caller of the controller gets.
 */
export interface ApiServerClientCaArgs {
  /**
   * PEM of the CA; the component keeps it in a ConfigMap mounted read-only into the webhook pods.
   * Default: none (required when apiServerClientCa is set).
   */
  caCertificate: pulumi.Input<string>;
  /** Names one of which the certificate must carry (subject CN or DNS SAN). Default: any certificate of the CA. */
  clientNames?: string[];
}

/** The admission warning webhook (spec sections 4.3-4.5, 5, 8). */
export interface AdmissionWebhookArgs {
  /** Deploy the webhook. Default: true. */
  enabled?: boolean;
  /** Replicas, spread across nodes. Default: 2. */
  replicas?: number;
  /** Failure policy of the registration. Default: `Ignore`, and `Ignore` is the only accepted value. */
  failurePolicy?: FailurePolicy;
  /** Seconds the API server waits for the webhook, 1 to 9. Default: 5. */
  timeoutSeconds?: number;
  /** `self-signed` or `managed` (cert-manager). Default: `self-signed`. */
  certManagement?: CertManagement;
  /** Issuer and certificate lifetime in `managed` mode. Default: no issuer (required in managed mode). */
  certIssuer?: CertIssuerArgs;
  /** Disruption budget of the webhook pods. Default: enabled, minAvailable 1. */
  pdb?: PodDisruptionBudgetArgs;
  /**
   * Namespaces the webhook never sees, in addition to kube-system, kube-public, kube-node-lease and
   * Forewarn's own namespace. Default: none.
   */
  excludedNamespaces?: string[];
  /** Requests and limits. Default: requests cpu 50m / memory 192Mi, limits cpu 200m / memory 256Mi. */
  resources?: ResourceRequirements;
  /** Extra command-line flags appended to the webhook's arguments. Default: none. */
  extraArgs?: string[];
  /**
   * The CA of the API server's client certificate (`--api-server-client-ca-file`). Default: unset,
   * so no caller is known to be the API server and every review, the API server's included, gets
   * warnings at the controller's `detailLevel` (by default `summary`: constraint names of the
   * object's namespace and what to fix, no message text of other teams' policies).
   */
  apiServerClientCa?: ApiServerClientCaArgs;
}

/** The arguments of the Forewarn component. Every field is optional. */
export interface ForewarnArgs {
  /** The namespace. Default: a namespace named after the component, created by it. */
  namespace?: NamespaceArgs;
  /** Container images. Default: `forewarn:0.1.0` for both processes, pulled IfNotPresent. */
  images?: ImagesArgs;
  /** The controller. Default: see ControllerArgs. */
  controller?: ControllerArgs;
  /** The admission warning webhook. Default: see AdmissionWebhookArgs. */
  admissionWebhook?: AdmissionWebhookArgs;
  /** Labels added to every object and pod. Default: none (the standard app.kubernetes.io labels are always set). */
  labels?: { [key: string]: string };
  /** Annotations added to every object (not to pods). Default: none. */
  annotations?: { [key: string]: string };
  /** Node selector of every pod. Default: none. */
  nodeSelector?: { [key: string]: string };
  /** Tolerations of every pod. Default: none. */
  tolerations?: Toleration[];
  /** PriorityClass of every pod. Default: unset. */
  priorityClassName?: string;
  /** Names of image pull Secrets in the namespace, used by every pod. Default: none. */
  imagePullSecrets?: string[];
}

/** Defaults of the spec's deployment values and of the component's own values. */
export const DEFAULTS = {
  image: 'forewarn:0.1.0',
  imagePullPolicy: ImagePullPolicy.IfNotPresent,
  createNamespace: true,
  controller: {
    replicas: 1,
    detailLevel: DetailLevel.Summary,
    mcp: true,
    policyReports: false,
    // Measured (docs/operations.md, issue 26): ~150 MiB resident idle, ~210 MiB at 10,000 constraints
    // with their inventory, ~450-480 MiB settled and a 600 MiB peak during the first sync at 100,000.
    // The request covers the common cluster; the limit holds the first sync of a 100,000-constraint one.
    resources: { requests: { cpu: '100m', memory: '256Mi' }, limits: { cpu: '500m', memory: '512Mi' } },
    networkPolicy: { enabled: true },
  },
  admissionWebhook: {
    enabled: true,
    replicas: 2,
    failurePolicy: FailurePolicy.Ignore,
    timeoutSeconds: 5,
    certManagement: CertManagement.SelfSigned,
    pdb: { enabled: true, minAvailable: 1 },
    duration: '8760h',
    renewBefore: '720h',
    // Measured (docs/benchmarks.md, 2026-11-29): 145-155 MiB resident at start in the default
    // self-signed mode (the Kubernetes client is loaded), 160-177 MiB after bursts of reviews.
    resources: { requests: { cpu: '50m', memory: '192Mi' }, limits: { cpu: '200m', memory: '256Mi' } },
  },
} as const;

/** Namespaces the webhook never sees, whatever the arguments (spec 4.4); its own namespace is added. */
export const ALWAYS_EXCLUDED_NAMESPACES: readonly string[] = [
  'kube-system',
  'kube-public',
  'kube-node-lease',
];
