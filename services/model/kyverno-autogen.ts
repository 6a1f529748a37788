import { isRecord } from './kubernetes';
import { ownEntry } from './own-entry';

// Kyverno's auto-generation of policies.kyverno.io policies for pod controllers (pkg/cel/autogen):
// a policy whose match is exactly core v1 `pods` is also applied to the pod templates of these
// controllers, all six unless spec.autogen.podControllers.controllers lists some (an empty list: none).
// Shared by the adapter (which resources the policy targets) and the verdicts (what they check).

/** Pod controllers by plural resource, with their API group. */
export const AUTOGEN_CONTROLLER_GROUPS: Readonly<Record<string, string>> = {
  daemonsets: 'apps',
  deployments: 'apps',
  replicasets: 'apps',
  statefulsets: 'apps',
  jobs: 'batch',
  cronjobs: 'batch',
};

const only = (value: unknown, expected: string): boolean =>
  Array.isArray(value) && value.length === 1 && value[0] === expected;

/** CanAutoGen: one resource rule for core v1 `pods`, without names, exclusions or an object selector. */
export function canAutogen(matchConstraints: unknown): boolean {
  if (!isRecord(matchConstraints)) return false;
  const selector = matchConstraints.objectSelector;
  if (
    isRecord(selector) &&
    ((isRecord(selector.matchLabels) && Object.keys(selector.matchLabels).length > 0) ||
      (Array.isArray(selector.matchExpressions) && selector.matchExpressions.length > 0))
  )
    return false;
  if (
    Array.isArray(matchConstraints.excludeResourceRules) &&
    matchConstraints.excludeResourceRules.length > 0
  )
    return false;
  const rules = Array.isArray(matchConstraints.resourceRules) ? matchConstraints.resourceRules : [];
  if (rules.length !== 1 || !isRecord(rules[0])) return false;
  const rule = rules[0];
  if (Array.isArray(rule.resourceNames) && rule.resourceNames.length > 0) return false;
  return only(rule.apiGroups, '') && only(rule.apiVersions, 'v1') && only(rule.resources, 'pods');
}

/** The controllers (plural resources) Kyverno checks the policy on through their pod templates. */
export function autogenControllersOf(spec: Record<string, unknown>): string[] {
  if (!canAutogen(spec.matchConstraints)) return [];
  const autogen = isRecord(spec.autogen) ? spec.autogen : {};
  const podControllers = isRecord(autogen.podControllers) ? autogen.podControllers : {};
  if (!Array.isArray(podControllers.controllers)) return Object.keys(AUTOGEN_CONTROLLER_GROUPS);
  return podControllers.controllers.filter(
    (controller): controller is string =>
      typeof controller === 'string' && ownEntry(AUTOGEN_CONTROLLER_GROUPS, controller) !== undefined,
  );
}

/**
 * The API version Kyverno 1.19 generates rules and policies for, by controller kind: the generated
 * match names fully qualified kinds (pkg/autogen/v1/internal/gvk.go; pkg/cel/autogen/data.go), so a
 * controller served at another version (a batch/v1beta1 CronJob) is not matched by them.
 */
const AUTOGEN_API_VERSIONS: Readonly<Record<string, string>> = {
  DaemonSet: 'apps/v1',
  Deployment: 'apps/v1',
  ReplicaSet: 'apps/v1',
  StatefulSet: 'apps/v1',
  ReplicationController: 'v1',
  Job: 'batch/v1',
  CronJob: 'batch/v1',
};

/** Whether an auto-generated Kyverno rule or policy can match this controller at its API version. */
export function isAutogenApiVersion(kind: string | undefined, apiVersion: string | undefined): boolean {
  return kind !== undefined && ownEntry(AUTOGEN_API_VERSIONS, kind) === apiVersion;
}
