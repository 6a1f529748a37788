import {
  GATEKEEPER_TEMPLATE_GROUP,
  GatekeeperShapeError,
  readConstraintTemplate,
} from '../../../model/gatekeeper';
import { groupOf, type KubernetesObject } from '../../../model/kubernetes';
import { compiledTemplate } from './cel-template';
import type { RegoEngine } from './rego-engine';

// Templates are compiled when they arrive, not when the first object needs them: the ingest layer
// calls this for every change: a CEL template (K8sNativeValidation takes precedence) is compiled at
// once, a Rego template starts compiling in the background.

export function compileTemplateOnArrival(
  engine: RegoEngine,
): (object: KubernetesObject, removed: boolean) => void {
  return (object, removed) => {
    if (removed || object.kind !== 'ConstraintTemplate') return;
    if (groupOf(object.apiVersion) !== GATEKEEPER_TEMPLATE_GROUP) return;
    try {
      const code = readConstraintTemplate(object);
      // CEL compiles here, on the event loop, once: not within the first object's deadline.
      if (code.cel) compiledTemplate(code.cel, object.metadata?.name ?? '');
      else if (code.rego) engine.policyFor(code.rego);
    } catch (error) {
      // Counted as the template's parse error by its adapter.
      if (!(error instanceof GatekeeperShapeError)) throw error;
    }
  };
}
