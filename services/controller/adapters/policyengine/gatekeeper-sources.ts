import { AdapterParseError, type AdapterContext, type ConstraintDraft } from '../../../model/constraint';
import {
  GATEKEEPER_CONFIG_GROUP,
  GATEKEEPER_CONFIG_NAME,
  GATEKEEPER_CONSTRAINT_GROUP,
  GATEKEEPER_TEMPLATE_GROUP,
  GatekeeperShapeError,
  readConstraintTemplate,
  webhookExcludedNamespaces,
} from '../../../model/gatekeeper';
import { isRecord, type KubernetesObject } from '../../../model/kubernetes';
import { requireName } from '../shared/object-fields';

// Gatekeeper's ConstraintTemplates and its Config yield no constraint of their own: a template is
// the code its constraints run (the verdict engine reads it from the index), the Config the
// namespaces Gatekeeper's webhook skips (every constraint's scope excludes them). Both are read
// here so that a malformed one is a counted parse error.

export const GATEKEEPER_RETAINED_KINDS = [
  { group: GATEKEEPER_CONFIG_GROUP, kind: 'Config' },
  // Every constraint kind: they are discovered at run time.
  { group: GATEKEEPER_CONSTRAINT_GROUP, kind: '*' },
];

export function isGatekeeperSource(group: string): boolean {
  return group === GATEKEEPER_TEMPLATE_GROUP || group === GATEKEEPER_CONFIG_GROUP;
}

function asParseError<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof GatekeeperShapeError) throw new AdapterParseError(error.message);
    throw error;
  }
}

export function gatekeeperSourceToConstraints(object: KubernetesObject): ConstraintDraft[] {
  requireName(object);
  if (object.kind === 'ConstraintTemplate') {
    const code = asParseError(() => readConstraintTemplate(object));
    if (!code.rego && !code.cel)
      throw new AdapterParseError(
        'ConstraintTemplate has no Rego or K8sNativeValidation code for admission.k8s.gatekeeper.sh',
      );
    return [];
  }
  if (object.kind === 'Config') {
    asParseError(() => webhookExcludedNamespaces(object));
    return [];
  }
  throw new AdapterParseError(`${String(object.kind)} is not a Gatekeeper ConstraintTemplate or Config`);
}

/**
 * What Gatekeeper's Config exempts from its admission webhook (`spec.match` entries whose processes
 * include `webhook` or `*`). Only the Config named `config` counts; a malformed one exempts nothing
 * here (it is reported as its own parse error).
 */
export function configExcludedNamespaces(context: AdapterContext): string[] {
  const excluded: string[] = [];
  for (const found of context.lookupAll({ group: GATEKEEPER_CONFIG_GROUP, kind: 'Config' }, undefined)) {
    if (!isRecord(found)) continue;
    const config = found as KubernetesObject;
    if (config.metadata?.name !== GATEKEEPER_CONFIG_NAME) continue;
    try {
      excluded.push(...webhookExcludedNamespaces(config));
    } catch {
      // Counted when the Config itself was ingested.
    }
  }
  return excluded;
}
