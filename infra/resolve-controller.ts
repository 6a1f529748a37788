// The controller's part of the arguments -> configuration step (resolve.ts): checked settings, its
// NetworkPolicy and the reference key's Secret.
import { DEFAULTS, DetailLevel, type ForewarnArgs } from './args';
import { checkLabel, checkSubdomain, isInteger, isOneOf, parseGoDuration, quoted, show } from './checks';
import { rescanIntervalProblem } from '../services/model/duration';
import { ParamKindError, parseParamKinds, type ParamKindResource } from '../services/model/param-kinds';

type ControllerArgs = NonNullable<ForewarnArgs['controller']>;

export function resolveReferenceKeySecret(secret: unknown, errors: string[]): string | undefined {
  if (secret === undefined) return undefined;
  checkSubdomain('controller.referenceKeySecret', secret, errors);
  return typeof secret === 'string' ? secret : undefined;
}

export function resolveNetworkPolicy(
  args: ControllerArgs['networkPolicy'],
  errors: string[],
): { enabled: boolean; allowedNamespaces: string[] } {
  const allowed: unknown = args?.allowedNamespaces ?? [];
  const allowedNamespaces = Array.isArray(allowed) ? (allowed as unknown[]) : [allowed];
  allowedNamespaces.forEach((namespace, index) =>
    checkLabel(`controller.networkPolicy.allowedNamespaces[${index}]`, namespace, errors),
  );
  const enabled = args?.enabled ?? DEFAULTS.controller.networkPolicy.enabled;
  return { enabled, allowedNamespaces: allowedNamespaces.map(String) };
}

/** The controller's checked settings; its resources are resolved with the webhook's, last. */
export function resolveControllerSettings(
  controllerArgs: ControllerArgs,
  errors: string[],
): { replicas: number; detailLevel: DetailLevel } {
  const replicas = controllerArgs.replicas ?? DEFAULTS.controller.replicas;
  if (!isInteger(replicas) || replicas < 1) {
    errors.push(`controller.replicas must be an integer of at least 1 (got ${show(replicas)})`);
  }
  const detailLevel = controllerArgs.detailLevel ?? DEFAULTS.controller.detailLevel;
  if (!isOneOf(DetailLevel, detailLevel)) {
    errors.push(`controller.detailLevel must be one of ${quoted(DetailLevel)} (got ${show(detailLevel)})`);
  }
  if (controllerArgs.rescanInterval !== undefined) {
    // The controller's own rule: a value accepted here must not stop the controller at start.
    const milliseconds = parseGoDuration(String(controllerArgs.rescanInterval));
    const problem = milliseconds === undefined ? 'not a duration' : rescanIntervalProblem(milliseconds);
    if (problem)
      errors.push(
        `controller.rescanInterval must be a duration of at least 1s such as "5m" (got ${show(controllerArgs.rescanInterval)}): ${problem}`,
      );
  }
  return { replicas, detailLevel };
}

/** `controller.paramKinds`: each entry as the controller's `--param-kinds` reads it, no repeats. */
export function resolveParamKinds(paramKinds: unknown, errors: string[]): ParamKindResource[] {
  if (paramKinds === undefined) return [];
  if (!Array.isArray(paramKinds)) {
    errors.push(`controller.paramKinds must be a list of group/version/plural (got ${show(paramKinds)})`);
    return [];
  }
  const resolved = new Map<string, ParamKindResource>();
  paramKinds.forEach((entry: unknown, index) => {
    try {
      if (typeof entry !== 'string' || entry.includes(',') || entry.trim() === '')
        throw new ParamKindError(`expected one group/version/plural, got ${show(entry)}`);
      for (const resource of parseParamKinds(entry))
        resolved.set(`${resource.group}/${resource.plural}`, resource);
    } catch (error) {
      if (!(error instanceof ParamKindError)) throw error;
      errors.push(`controller.paramKinds[${index}]: ${error.message}`);
    }
  });
  return [...resolved.values()];
}

/** `controller.policyReports`: a boolean (a string "true" from a config file is refused, not guessed). */
export function resolvePolicyReports(policyReports: unknown, errors: string[]): boolean {
  if (policyReports === undefined) return DEFAULTS.controller.policyReports;
  if (typeof policyReports !== 'boolean') {
    errors.push(`controller.policyReports must be true or false (got ${show(policyReports)})`);
    return false;
  }
  return policyReports;
}
