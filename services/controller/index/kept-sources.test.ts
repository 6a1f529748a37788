import { indexObjects } from '../../../test/support/controller-fixtures';

// The index keeps each policy's source object for the verdicts, without the API server's
// `managedFields` (who owns which field), which nothing reads and which is often the largest part of
// an object read from a cluster (issue 26: memory at cluster scale).

const managedFields = [
  {
    manager: 'kubectl-client-side-apply',
    operation: 'Update',
    apiVersion: 'v1',
    fieldsType: 'FieldsV1',
    fieldsV1: { 'f:spec': { 'f:hard': { '.': {}, 'f:pods': {} } } },
  },
];

const quota = {
  apiVersion: 'v1',
  kind: 'ResourceQuota',
  metadata: { name: 'compute', namespace: 'shop', uid: 'q-1', annotations: { team: 'shop' }, managedFields },
  spec: { hard: { pods: '10' } },
  status: { hard: { pods: '10' }, used: { pods: '3' } },
};

const admissionPolicy = {
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingAdmissionPolicy',
  metadata: { name: 'replicas', uid: 'p-1', managedFields },
  spec: {
    matchConstraints: {
      resourceRules: [
        { apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] },
      ],
    },
    validations: [{ expression: 'object.spec.replicas <= 5' }],
  },
};

describe('source objects kept by the index', () => {
  it('keep everything but managedFields, and leave the object given to the Ingestor as it was', () => {
    const cluster = indexObjects([quota]);
    const [constraint] = cluster.index.constraintsForNamespace('shop');
    const kept = cluster.index.sourceOfConstraint(constraint);
    const { managedFields: _, ...metadataWithoutOwners } = quota.metadata;
    expect(kept).toEqual({ ...quota, metadata: metadataWithoutOwners });
    expect(cluster.index.findSource('', 'ResourceQuota', 'shop', 'compute')).toBe(kept);
    expect(quota.metadata.managedFields).toBe(managedFields);
  });

  it('keep retained kinds (a policy its bindings name) without managedFields too', () => {
    const cluster = indexObjects([admissionPolicy]);
    const kept = cluster.index.findSource(
      'admissionregistration.k8s.io',
      'ValidatingAdmissionPolicy',
      null,
      'replicas',
    );
    expect(kept?.spec).toEqual(admissionPolicy.spec);
    expect(kept?.metadata).not.toHaveProperty('managedFields');
  });
});
