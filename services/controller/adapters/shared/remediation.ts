import type { Privilege } from '../../../model/api';
import type { RemediationStepTemplate, SourceObject } from '../../../model/constraint';
import { objectName, text, type Text } from '../../../model/text';

// Remediation steps shared by the adapters: how to look at the source object, and whom to ask.

/** `kubectl get <resource> <name> [-n <ns>] -o yaml`, with the name redactable. */
export function inspectSourceStep(source: SourceObject, resource: string): RemediationStepTemplate {
  const name = objectName(source.name, source.namespace);
  const command =
    source.namespace === null
      ? text`kubectl get ${resource} ${name} -o yaml`
      : text`kubectl get ${resource} ${name} -n ${objectName(source.namespace, source.namespace)} -o yaml`;
  return {
    type: 'cli',
    description: text`Inspect the ${source.kind} to see exactly what it enforces`,
    command,
    requiresPrivilege: 'developer',
    automated: true,
  };
}

/** A manual step addressed to the policy owner; the contact is filled in by the ingest layer. */
export function askOwnerStep(description: Text, privilege: Privilege): RemediationStepTemplate {
  return { type: 'manual', description, requiresPrivilege: privilege, automated: false };
}

/** Who owns a source: the namespace's admins for namespaced objects, the cluster's for the rest. */
export function ownerPrivilege(source: SourceObject): Privilege {
  return source.namespace === null ? 'cluster-admin' : 'namespace-admin';
}
