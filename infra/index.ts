// Library entry (package.json `main`: dist/infra/index.js). Named re-exports only, so Node's CommonJS
// export detection gives ESM importers the same names: `import { Forewarn } from 'forewarn'` works from
// CommonJS and from ESM programs.
//
// `./args` comes before `./forewarn` on purpose: ComponentProvider.getSchema() walks this file's imports
// in order and collects the doc comments of interfaces and enums from the files it visits before it
// finds the component, so the schema's types keep their descriptions.
export {
  CertManagement,
  DetailLevel,
  FailurePolicy,
  ImagePullPolicy,
  IssuerKind,
  TaintEffect,
  TolerationOperator,
  DEFAULTS,
  ALWAYS_EXCLUDED_NAMESPACES,
} from './args';
export type {
  AdmissionWebhookArgs,
  ApiServerClientCaArgs,
  CertIssuerArgs,
  ControllerArgs,
  ControllerNetworkPolicyArgs,
  ForewarnArgs,
  ImagesArgs,
  IssuerRefArgs,
  NamespaceArgs,
  PodDisruptionBudgetArgs,
  ResourceList,
  ResourceRequirements,
  Toleration,
} from './args';
export { Forewarn } from './forewarn';
