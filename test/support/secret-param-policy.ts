import type { KubernetesObject } from '../../services/model/kubernetes';

// A ValidatingAdmissionPolicy whose param holds a secret-looking value and whose CEL names a field
// the admitted object does not have: what a caller below `full` must never read back from a verdict
// (the policy's names, its CEL text, its param values, the fields its CEL reads). Issue 27.

export const SECRET_PARAM_VALUE = 'PARAMSECRETVALUE42';
export const SECRET_FIELD_NAME = 'secretFieldName';
export const SECRET_POLICY_NAME = 'confidential-registry-rule';
export const SECRET_NAMESPACE = 'shop';

export const SECRET_PARAM_OBJECTS: KubernetesObject[] = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: SECRET_NAMESPACE } },
  // A Gatekeeper constraint as the param, as Gatekeeper's own VAP integration binds them: the index
  // holds it (it is a constraint source), so the verdict evaluates with its parameters.
  {
    apiVersion: 'constraints.gatekeeper.sh/v1beta1',
    kind: 'K8sAllowedRepos',
    metadata: { name: 'registry-settings' },
    spec: {
      enforcementAction: 'dryrun',
      match: { kinds: [{ apiGroups: ['apps'], kinds: ['Deployment'] }], namespaces: ['nowhere'] },
      parameters: { repos: [`${SECRET_PARAM_VALUE}.registry.example/`] },
    },
  },
  {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: SECRET_POLICY_NAME },
    spec: {
      failurePolicy: 'Fail',
      paramKind: { apiVersion: 'constraints.gatekeeper.sh/v1beta1', kind: 'K8sAllowedRepos' },
      matchConstraints: {
        resourceRules: [
          {
            apiGroups: ['apps'],
            apiVersions: ['v1'],
            operations: ['CREATE', 'UPDATE'],
            resources: ['deployments'],
          },
        ],
      },
      validations: [
        {
          expression:
            'object.spec.template.spec.containers.all(c, c.image.startsWith(params.spec.parameters.repos[0]))',
          messageExpression: "'images must come from ' + params.spec.parameters.repos[0]",
        },
        {
          expression: `has(object.spec.template.spec.${SECRET_FIELD_NAME})`,
          message: `set ${SECRET_FIELD_NAME}`,
        },
      ],
    },
  },
  {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: `${SECRET_POLICY_NAME}-binding` },
    spec: {
      policyName: SECRET_POLICY_NAME,
      validationActions: ['Deny'],
      paramRef: { name: 'registry-settings', parameterNotFoundAction: 'Deny' },
    },
  },
];

/** A Deployment that fails both validations (an image from elsewhere, no `secretFieldName`). */
export const SECRET_PARAM_DEPLOYMENT: KubernetesObject = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: SECRET_NAMESPACE },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'web', image: 'docker.io/library/nginx:1' }] },
    },
  },
};
