import type { ResourceType } from './resource-registry';

// The built-in kinds a Forewarn cluster source reads, with the discovery facts of a 1.30 API server
// (plural, short names, scope, status subresource). Only these are served: a real server has more,
// but a client asking for an absent kind must see a 404 here as it would for a missing CRD.

interface BuiltInRow {
  apiVersion: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  status?: boolean;
  deleteReturnsObject?: boolean;
}

const BUILT_IN_ROWS: BuiltInRow[] = [
  {
    apiVersion: 'v1',
    kind: 'Namespace',
    plural: 'namespaces',
    namespaced: false,
    shortNames: ['ns'],
    status: true,
    deleteReturnsObject: true,
  },
  {
    apiVersion: 'v1',
    kind: 'Pod',
    plural: 'pods',
    namespaced: true,
    shortNames: ['po'],
    categories: ['all'],
    status: true,
    deleteReturnsObject: true,
  },
  {
    apiVersion: 'v1',
    kind: 'Service',
    plural: 'services',
    namespaced: true,
    shortNames: ['svc'],
    categories: ['all'],
    status: true,
    deleteReturnsObject: true,
  },
  { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true, shortNames: ['cm'] },
  { apiVersion: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true },
  {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    plural: 'resourcequotas',
    namespaced: true,
    shortNames: ['quota'],
    status: true,
  },
  { apiVersion: 'v1', kind: 'LimitRange', plural: 'limitranges', namespaced: true, shortNames: ['limits'] },
  {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    plural: 'serviceaccounts',
    namespaced: true,
    shortNames: ['sa'],
  },
  {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    plural: 'deployments',
    namespaced: true,
    shortNames: ['deploy'],
    categories: ['all'],
    status: true,
  },
  {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    plural: 'statefulsets',
    namespaced: true,
    shortNames: ['sts'],
    categories: ['all'],
    status: true,
  },
  {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    plural: 'daemonsets',
    namespaced: true,
    shortNames: ['ds'],
    categories: ['all'],
    status: true,
  },
  {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    plural: 'replicasets',
    namespaced: true,
    shortNames: ['rs'],
    categories: ['all'],
    status: true,
  },
  {
    apiVersion: 'batch/v1',
    kind: 'Job',
    plural: 'jobs',
    namespaced: true,
    categories: ['all'],
    status: true,
  },
  {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    plural: 'cronjobs',
    namespaced: true,
    shortNames: ['cj'],
    categories: ['all'],
    status: true,
  },
  {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    plural: 'networkpolicies',
    namespaced: true,
    shortNames: ['netpol'],
  },
  {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    plural: 'ingresses',
    namespaced: true,
    shortNames: ['ing'],
    status: true,
  },
  {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    plural: 'validatingwebhookconfigurations',
    namespaced: false,
    categories: ['api-extensions'],
  },
  {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    plural: 'mutatingwebhookconfigurations',
    namespaced: false,
    categories: ['api-extensions'],
  },
  {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    plural: 'customresourcedefinitions',
    namespaced: false,
    shortNames: ['crd', 'crds'],
    categories: ['api-extensions'],
    status: true,
    deleteReturnsObject: true,
  },
];

/** ValidatingAdmissionPolicy is GA since 1.30; older servers do not serve it at all. */
const ADMISSION_POLICY_ROWS: BuiltInRow[] = [
  {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    plural: 'validatingadmissionpolicies',
    namespaced: false,
    categories: ['api-extensions'],
    status: true,
  },
  {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    plural: 'validatingadmissionpolicybindings',
    namespaced: false,
    categories: ['api-extensions'],
  },
];

function toResourceType(row: BuiltInRow): ResourceType {
  const slash = row.apiVersion.indexOf('/');
  return {
    group: slash === -1 ? '' : row.apiVersion.slice(0, slash),
    versions: [slash === -1 ? row.apiVersion : row.apiVersion.slice(slash + 1)],
    kind: row.kind,
    listKind: `${row.kind}List`,
    plural: row.plural,
    singular: row.kind.toLowerCase(),
    namespaced: row.namespaced,
    shortNames: row.shortNames ?? [],
    categories: row.categories ?? [],
    hasStatusSubresource: row.status ?? false,
    builtIn: true,
    deleteReturnsObject: row.deleteReturnsObject ?? false,
  };
}

export function builtInResourceTypes(options: { validatingAdmissionPolicies: boolean }): ResourceType[] {
  const rows = options.validatingAdmissionPolicies
    ? [...BUILT_IN_ROWS, ...ADMISSION_POLICY_ROWS]
    : BUILT_IN_ROWS;
  return rows.map(toResourceType);
}

export const CRD_GROUP = 'apiextensions.k8s.io';
export const CRD_PLURAL = 'customresourcedefinitions';
export const NAMESPACE_PLURAL = 'namespaces';
