import type { KubernetesObject } from '../../model/kubernetes';
import { regoEngine } from '../verdicts/gatekeeper/rego-engine';
import { compileTemplateOnArrival } from '../verdicts/gatekeeper/template-preparation';

// The one-shot check (`forewarn check --manifests`) compiles Gatekeeper templates' Rego as they are
// read, and waits for it before checking: a command has no "ask again in a moment".

export function compileGatekeeperTemplates(
  onChange: (listener: (object: KubernetesObject, removed: boolean) => void) => void,
  opaPath: string | undefined,
): { settled: () => Promise<void> } {
  regoEngine.configure(opaPath);
  onChange(compileTemplateOnArrival(regoEngine));
  return { settled: () => regoEngine.settled() };
}
