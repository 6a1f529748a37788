import type { ConstraintDraft } from '../../../model/constraint';
import { text, type NamePart } from '../../../model/text';

// The naming rule every network-policy source follows (DESIGN.md section 3): a policy that governs
// both directions yields `<name>/ingress` and `<name>/egress`, one that governs only one keeps its
// own name, so a name never changes when the other direction's rules come and go.

export type NetworkDirection = 'ingress' | 'egress';

/** Identity fields of one direction's constraint: id, name, display name and constraint type. */
export function networkDirectionIdentity(
  sourceName: string,
  policy: NamePart,
  direction: NetworkDirection,
  bothDirections: boolean,
): Pick<ConstraintDraft, 'id' | 'name' | 'displayName' | 'type'> {
  return {
    id: direction,
    name: bothDirections ? `${sourceName}/${direction}` : sourceName,
    displayName: bothDirections ? text`${policy}/${direction}` : [policy],
    type: direction === 'ingress' ? 'NetworkIngress' : 'NetworkEgress',
  };
}
