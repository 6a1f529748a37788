import {
  AdapterParseError,
  type Adapter,
  type AdapterContext,
  type ConstraintDraft,
} from '../../../model/constraint';
import { groupOf, type KubernetesObject } from '../../../model/kubernetes';
import { GATEKEEPER_GROUP, gatekeeperConstraintToConstraints } from './gatekeeper';
import {
  GATEKEEPER_RETAINED_KINDS,
  gatekeeperSourceToConstraints,
  isGatekeeperSource,
} from './gatekeeper-sources';
import { KYVERNO_GROUP, kyvernoPolicyToConstraints } from './kyverno';
import { POLICY_SOURCE_KINDS } from '../../../model/watched-kinds';
import { KYVERNO_CEL_GROUP, kyvernoCelPolicyToConstraints } from './kyverno-cel';
import { CLEANUP_KINDS, kyvernoCleanupPolicyToConstraints } from './kyverno-cleanup';

// The policy-engine adapter: Gatekeeper constraints (every kind of their API group, discovered at
// run time), their templates and Config, and Kyverno policies: ClusterPolicy/Policy, the CEL policies of policies.kyverno.io and
// the cleanup policies. Both engines are one adapter in health and capabilities.

export function policyEngineToConstraints(
  object: KubernetesObject,
  context: AdapterContext,
): ConstraintDraft[] {
  if (typeof object.apiVersion !== 'string') throw new AdapterParseError('apiVersion must be a string');
  const group = groupOf(object.apiVersion);
  if (group === GATEKEEPER_GROUP) return gatekeeperConstraintToConstraints(object, context);
  if (isGatekeeperSource(group)) return gatekeeperSourceToConstraints(object);
  if (group === KYVERNO_GROUP)
    return CLEANUP_KINDS.some((kind) => kind === object.kind)
      ? kyvernoCleanupPolicyToConstraints(object)
      : kyvernoPolicyToConstraints(object);
  if (group === KYVERNO_CEL_GROUP) return kyvernoCelPolicyToConstraints(object);
  throw new AdapterParseError(`${object.apiVersion} is neither Gatekeeper nor Kyverno`);
}

export const policyEngineAdapter: Adapter = {
  name: 'policyengine',
  kinds: POLICY_SOURCE_KINDS.policyengine.kinds,
  dynamicGroups: POLICY_SOURCE_KINDS.policyengine.dynamicGroups,
  // Every Gatekeeper constraint is evaluated again when the Config (its webhook exemptions) changes.
  retainedKinds: GATEKEEPER_RETAINED_KINDS,
  toConstraints: (object, context) => policyEngineToConstraints(object, context),
};
