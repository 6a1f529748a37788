// CustomResourceDefinitions the e2e files install for the adapters to watch: minimal structural
// schemas (spec, specs and status kept as they are). Also the Gatekeeper constraint kind the forewarn
// run installs while the controller runs, with a constraint of it.
import { constrainedNamespace } from './forewarn-manifests';

export interface CrdDescription {
  group: string;
  version: string;
  kind: string;
  plural: string;
  scope: 'Namespaced' | 'Cluster';
}

export function crdName(crd: CrdDescription): string {
  return `${crd.plural}.${crd.group}`;
}

export function crdManifest(crd: CrdDescription): string {
  return `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${crdName(crd)}
spec:
  group: ${crd.group}
  scope: ${crd.scope}
  names:
    kind: ${crd.kind}
    listKind: ${crd.kind}List
    plural: ${crd.plural}
    singular: ${crd.kind.toLowerCase()}
  versions:
    - name: ${crd.version}
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              x-kubernetes-preserve-unknown-fields: true
            specs:
              type: array
              items:
                type: object
                x-kubernetes-preserve-unknown-fields: true
            status:
              type: object
              x-kubernetes-preserve-unknown-fields: true
`;
}

export const ciliumNetworkPolicyCrd: CrdDescription = {
  group: 'cilium.io',
  version: 'v2',
  kind: 'CiliumNetworkPolicy',
  plural: 'ciliumnetworkpolicies',
  scope: 'Namespaced',
};

export const initialCrds: readonly CrdDescription[] = [
  ciliumNetworkPolicyCrd,
  {
    group: 'cilium.io',
    version: 'v2',
    kind: 'CiliumClusterwideNetworkPolicy',
    plural: 'ciliumclusterwidenetworkpolicies',
    scope: 'Cluster',
  },
  {
    group: 'constraints.gatekeeper.sh',
    version: 'v1beta1',
    kind: 'K8sRequiredLabels',
    plural: 'k8srequiredlabels',
    scope: 'Cluster',
  },
  { group: 'kyverno.io', version: 'v1', kind: 'ClusterPolicy', plural: 'clusterpolicies', scope: 'Cluster' },
  { group: 'kyverno.io', version: 'v1', kind: 'Policy', plural: 'policies', scope: 'Namespaced' },
  {
    group: 'security.istio.io',
    version: 'v1beta1',
    kind: 'AuthorizationPolicy',
    plural: 'authorizationpolicies',
    scope: 'Namespaced',
  },
  {
    group: 'security.istio.io',
    version: 'v1beta1',
    kind: 'PeerAuthentication',
    plural: 'peerauthentications',
    scope: 'Namespaced',
  },
];

/** Installed while the controller runs: a second Gatekeeper constraint kind. */
export const lateCrd: CrdDescription = {
  group: 'constraints.gatekeeper.sh',
  version: 'v1beta1',
  kind: 'K8sAllowedRepos',
  plural: 'k8sallowedrepos',
  scope: 'Cluster',
};

export const lateConstraintName = 'shop-trusted-registries';

export const lateConstraintManifest = `
apiVersion: constraints.gatekeeper.sh/v1beta1
kind: K8sAllowedRepos
metadata:
  name: ${lateConstraintName}
spec:
  enforcementAction: warn
  match:
    kinds:
      - apiGroups: [apps]
        kinds: [Deployment]
    namespaces: [${constrainedNamespace}]
  parameters:
    repos: [registry.shop.example.com/]
`;
