import type { AdapterName } from './api';
import type { ResourceTarget } from './kubernetes';
import { LISTED_WORKLOAD_KINDS } from './workload-kinds';
import { paramKindReadTargets, type ParamKindResource } from './param-kinds';

// Everything the controller reads from the API server, once: each policy source's kinds, the
// inventory (namespaces, workloads, CRDs) and the companion kinds. The controller's watches follow
// from it, and so does its ClusterRole (infra/rbac.ts), which is why it lives in the model: infra may
// import the model, never a service. A new source adds its entry here, its folder under
// services/controller/adapters/ and its line in the adapter registry; the compiler and
// services/controller/adapters/registry.test.ts fail until all three agree.

export interface AdapterKind {
  group: string;
  /** Versions tried in order when discovering what the cluster serves. */
  versions: readonly string[];
  kind: string;
  plural: string;
  namespaced: boolean;
}

export interface PolicySourceKinds {
  /** Kinds routed to the source's adapter by exact group and kind. */
  kinds: readonly AdapterKind[];
  /**
   * Whole API groups whose every kind belongs to this source (Gatekeeper creates one CRD per
   * constraint template in `constraints.gatekeeper.sh`). Discovered kinds are added at run time.
   */
  dynamicGroups?: readonly string[];
}

/** Adapters that read policy objects; `missingresource` derives its findings from the inventory. */
export type PolicySourceName = Exclude<AdapterName, 'missingresource'>;

const ADMISSION = 'admissionregistration.k8s.io';

export const POLICY_SOURCE_KINDS: { readonly [name in PolicySourceName]: PolicySourceKinds } = {
  networkpolicy: {
    kinds: [
      {
        group: 'networking.k8s.io',
        versions: ['v1'],
        kind: 'NetworkPolicy',
        plural: 'networkpolicies',
        namespaced: true,
      },
    ],
  },
  resourcequota: {
    kinds: [
      { group: '', versions: ['v1'], kind: 'ResourceQuota', plural: 'resourcequotas', namespaced: true },
    ],
  },
  limitrange: {
    kinds: [{ group: '', versions: ['v1'], kind: 'LimitRange', plural: 'limitranges', namespaced: true }],
  },
  webhookconfig: {
    kinds: [
      {
        group: ADMISSION,
        versions: ['v1'],
        kind: 'ValidatingWebhookConfiguration',
        plural: 'validatingwebhookconfigurations',
        namespaced: false,
      },
      {
        group: ADMISSION,
        versions: ['v1'],
        kind: 'MutatingWebhookConfiguration',
        plural: 'mutatingwebhookconfigurations',
        namespaced: false,
      },
    ],
  },
  admissionpolicy: {
    // v1beta1 (Kubernetes 1.28-1.29) has the same shape, so clusters that serve only it are covered too.
    kinds: [
      {
        group: ADMISSION,
        versions: ['v1', 'v1beta1'],
        kind: 'ValidatingAdmissionPolicy',
        plural: 'validatingadmissionpolicies',
        namespaced: false,
      },
      {
        group: ADMISSION,
        versions: ['v1', 'v1beta1'],
        kind: 'ValidatingAdmissionPolicyBinding',
        plural: 'validatingadmissionpolicybindings',
        namespaced: false,
      },
    ],
  },
  cni: {
    kinds: [
      {
        group: 'cilium.io',
        versions: ['v2'],
        kind: 'CiliumNetworkPolicy',
        plural: 'ciliumnetworkpolicies',
        namespaced: true,
      },
      {
        group: 'cilium.io',
        versions: ['v2'],
        kind: 'CiliumClusterwideNetworkPolicy',
        plural: 'ciliumclusterwidenetworkpolicies',
        namespaced: false,
      },
      // Calico: the v3 API server's group and the CRDs it stores them as (same UIDs, indexed once).
      ...(['projectcalico.org', 'crd.projectcalico.org'] as const).flatMap((group) => {
        const versions = [group === 'projectcalico.org' ? 'v3' : 'v1'];
        return [
          { group, versions, kind: 'NetworkPolicy', plural: 'networkpolicies', namespaced: true },
          {
            group,
            versions,
            kind: 'GlobalNetworkPolicy',
            plural: 'globalnetworkpolicies',
            namespaced: false,
          },
        ];
      }),
    ],
  },
  policyengine: {
    kinds: [
      {
        group: 'kyverno.io',
        versions: ['v1', 'v2beta1'],
        kind: 'ClusterPolicy',
        plural: 'clusterpolicies',
        namespaced: false,
      },
      {
        group: 'kyverno.io',
        versions: ['v1', 'v2beta1'],
        kind: 'Policy',
        plural: 'policies',
        namespaced: true,
      },
      ...(['ClusterCleanupPolicy', 'CleanupPolicy'] as const).map((kind) => ({
        group: 'kyverno.io',
        versions: ['v2', 'v2beta1', 'v2alpha1'],
        kind,
        plural: `${kind.toLowerCase().slice(0, -1)}ies`,
        namespaced: kind === 'CleanupPolicy',
      })),
      // Kyverno's CEL policies.
      ...(
        [
          'ValidatingPolicy',
          'ImageValidatingPolicy',
          'MutatingPolicy',
          'GeneratingPolicy',
          'DeletingPolicy',
        ] as const
      ).map((kind) => ({
        group: 'policies.kyverno.io',
        versions: ['v1', 'v1beta1', 'v1alpha1'],
        kind,
        plural: `${kind.toLowerCase().slice(0, -1)}ies`,
        namespaced: false,
      })),
      // Gatekeeper: the templates that hold each constraint kind's Rego or CEL, and its Config
      // (namespaces its admission webhook skips).
      {
        group: 'templates.gatekeeper.sh',
        versions: ['v1', 'v1beta1', 'v1alpha1'],
        kind: 'ConstraintTemplate',
        plural: 'constrainttemplates',
        namespaced: false,
      },
      {
        group: 'config.gatekeeper.sh',
        versions: ['v1alpha1'],
        kind: 'Config',
        plural: 'configs',
        namespaced: true,
      },
    ],
    dynamicGroups: ['constraints.gatekeeper.sh'],
  },
  adminnetworkpolicy: {
    kinds: [
      {
        group: 'policy.networking.k8s.io',
        versions: ['v1alpha1'],
        kind: 'AdminNetworkPolicy',
        plural: 'adminnetworkpolicies',
        namespaced: false,
      },
      {
        group: 'policy.networking.k8s.io',
        versions: ['v1alpha1'],
        kind: 'BaselineAdminNetworkPolicy',
        plural: 'baselineadminnetworkpolicies',
        namespaced: false,
      },
    ],
  },
  // Pod Security Admission: the `pod-security.kubernetes.io/*` labels of each Namespace.
  podsecurity: {
    kinds: [{ group: '', versions: ['v1'], kind: 'Namespace', plural: 'namespaces', namespaced: false }],
  },
  mesh: {
    kinds: [
      {
        group: 'security.istio.io',
        versions: ['v1', 'v1beta1'],
        kind: 'AuthorizationPolicy',
        plural: 'authorizationpolicies',
        namespaced: true,
      },
      {
        group: 'security.istio.io',
        versions: ['v1', 'v1beta1'],
        kind: 'PeerAuthentication',
        plural: 'peerauthentications',
        namespaced: true,
      },
      {
        group: 'networking.istio.io',
        versions: ['v1', 'v1beta1', 'v1alpha3'],
        kind: 'Sidecar',
        plural: 'sidecars',
        namespaced: true,
      },
      // Linkerd: Servers, their authorizations and the authentications those require.
      ...(
        [
          ['Server', ['v1beta3', 'v1beta2', 'v1beta1'], 'servers'],
          ['ServerAuthorization', ['v1beta1'], 'serverauthorizations'],
          ['AuthorizationPolicy', ['v1alpha1'], 'authorizationpolicies'],
          ['MeshTLSAuthentication', ['v1alpha1'], 'meshtlsauthentications'],
          ['NetworkAuthentication', ['v1alpha1'], 'networkauthentications'],
        ] as const
      ).map(([kind, versions, plural]) => ({
        group: 'policy.linkerd.io',
        versions,
        kind,
        plural,
        namespaced: true,
      })),
    ],
  },
};

export const POLICY_SOURCE_NAMES = Object.keys(POLICY_SOURCE_KINDS) as PolicySourceName[];

/** Kinds watched for everything that is not a policy: namespace labels, workload labels, CRDs. */
export const INVENTORY_KINDS: readonly AdapterKind[] = [
  { group: '', versions: ['v1'], kind: 'Namespace', plural: 'namespaces', namespaced: false },
  ...LISTED_WORKLOAD_KINDS.map(({ group, versions, kind, plural }) => ({
    group,
    versions,
    kind,
    plural,
    namespaced: true,
  })),
  // CRD discovery: which optional kinds (Cilium, Gatekeeper, Kyverno, Istio, ...) the cluster serves.
  {
    group: 'apiextensions.k8s.io',
    versions: ['v1'],
    kind: 'CustomResourceDefinition',
    plural: 'customresourcedefinitions',
    namespaced: false,
  },
];

/** Kinds the companion-resource rules look for (MissingResource). */
export const COMPANION_KINDS: readonly AdapterKind[] = [
  { group: '', versions: ['v1'], kind: 'Service', plural: 'services', namespaced: true },
  {
    group: 'networking.k8s.io',
    versions: ['v1', 'v1beta1'],
    kind: 'Ingress',
    plural: 'ingresses',
    namespaced: true,
  },
  {
    group: 'policy',
    versions: ['v1', 'v1beta1'],
    kind: 'PodDisruptionBudget',
    plural: 'poddisruptionbudgets',
    namespaced: true,
  },
  {
    group: 'autoscaling',
    versions: ['v2', 'v1'],
    kind: 'HorizontalPodAutoscaler',
    plural: 'horizontalpodautoscalers',
    namespaced: true,
  },
  { group: 'cert-manager.io', versions: ['v1'], kind: 'Issuer', plural: 'issuers', namespaced: true },
  {
    group: 'cert-manager.io',
    versions: ['v1'],
    kind: 'ClusterIssuer',
    plural: 'clusterissuers',
    namespaced: false,
  },
  {
    group: 'monitoring.coreos.com',
    versions: ['v1'],
    kind: 'ServiceMonitor',
    plural: 'servicemonitors',
    namespaced: true,
  },
  {
    group: 'monitoring.coreos.com',
    versions: ['v1'],
    kind: 'PodMonitor',
    plural: 'podmonitors',
    namespaced: true,
  },
];

/**
 * Every resource the controller may list and watch: the inventory, each policy source's kinds and
 * dynamic groups (as `group/*`), the companion kinds, and the param kinds the operator configured
 * (`--param-kinds`). The controller's ClusterRole grants these.
 */
export function controllerReadTargets(paramKinds: readonly ParamKindResource[] = []): ResourceTarget[] {
  const sources = Object.values(POLICY_SOURCE_KINDS);
  return [...INVENTORY_KINDS, ...sources.flatMap((source) => source.kinds), ...COMPANION_KINDS]
    .map(({ group, plural }) => ({ group, resource: plural }))
    .concat(
      sources.flatMap((source) => (source.dynamicGroups ?? []).map((group) => ({ group, resource: '*' }))),
    )
    .concat(paramKindReadTargets(paramKinds));
}
