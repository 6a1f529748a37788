import { AdapterParseError, type Adapter, type ConstraintDraft } from '../../../model/constraint';
import { groupOf, type KubernetesObject } from '../../../model/kubernetes';
import { GATEKEEPER_GROUP, gatekeeperConstraintToConstraints } from './gatekeeper';
import { KYVERNO_GROUP, kyvernoPolicyToConstraints } from './kyverno';
import { KYVERNO_CEL_GROUP, KYVERNO_CEL_KINDS, kyvernoCelPolicyToConstraints } from './kyverno-cel';
import { CLEANUP_KINDS, kyvernoCleanupPolicyToConstraints } from './kyverno-cleanup';

// The policy-engine adapter: Gatekeeper constraints (every kind of their API group, discovered at
// run time) and Kyverno policies: ClusterPolicy/Policy, the CEL policies of policies.kyverno.io and
// the cleanup policies. Both engines are one adapter in health and capabilities.

export function policyEngineToConstraints(object: KubernetesObject): ConstraintDraft[] {
  if (typeof object.apiVersion !== 'string') throw new AdapterParseError('apiVersion must be a string');
  const group = groupOf(object.apiVersion);
  if (group === GATEKEEPER_GROUP) return gatekeeperConstraintToConstraints(object);
  if (group === KYVERNO_GROUP)
    return CLEANUP_KINDS.some((kind) => kind === object.kind)
      ? kyvernoCleanupPolicyToConstraints(object)
      : kyvernoPolicyToConstraints(object);
  if (group === KYVERNO_CEL_GROUP) return kyvernoCelPolicyToConstraints(object);
  throw new AdapterParseError(`${object.apiVersion} is neither Gatekeeper nor Kyverno`);
}

export const policyEngineAdapter: Adapter = {
  name: 'policyengine',
  kinds: [
    {
      group: KYVERNO_GROUP,
      versions: ['v1', 'v2beta1'],
      kind: 'ClusterPolicy',
      plural: 'clusterpolicies',
      namespaced: false,
    },
    {
      group: KYVERNO_GROUP,
      versions: ['v1', 'v2beta1'],
      kind: 'Policy',
      plural: 'policies',
      namespaced: true,
    },
    ...CLEANUP_KINDS.map((kind) => ({
      group: KYVERNO_GROUP,
      versions: ['v2', 'v2beta1', 'v2alpha1'],
      kind,
      plural: kind === 'CleanupPolicy' ? 'cleanuppolicies' : 'clustercleanuppolicies',
      namespaced: kind === 'CleanupPolicy',
    })),
    ...KYVERNO_CEL_KINDS.map((kind) => ({
      group: KYVERNO_CEL_GROUP,
      versions: ['v1', 'v1beta1', 'v1alpha1'],
      kind,
      plural: `${kind.toLowerCase().slice(0, -1)}ies`,
      namespaced: false,
    })),
  ],
  dynamicGroups: [GATEKEEPER_GROUP],
  toConstraints: (object) => policyEngineToConstraints(object),
};
