import { AdapterParseError, type ResourceTarget } from '../../../model/constraint';
import { isServedTarget } from '../../../model/resources';
import { joinLimitedStrings } from '../../../model/summary-rules';
import type { LabelSelector } from '../../../model/kubernetes';
import { readOptionalSelector, readRecord, readRecordList, readStringList } from './object-fields';

// Admission rules (`RuleWithOperations` of webhooks, `NamedRuleWithOperations` of admission policies):
// which operations on which resources a webhook or policy intercepts. Shared by webhookconfig and
// admissionpolicy because both APIs use the same rule shape; the MatchResources type around them is
// shared by admission policies and Kyverno's CEL policies.

const OPERATIONS = new Set(['CREATE', 'UPDATE', 'DELETE', 'CONNECT', '*']);

export interface AdmissionRules {
  /** apiGroups × resources of the rules, first-seen order, without duplicates. */
  targets: ResourceTarget[];
  /** Operations of the rules that contributed a target; `['*']` when any of them allows all. */
  operations: string[];
  /** Whether some rule named only subresources, which never intercept a whole object. */
  skippedSubresources: boolean;
  /** Whether some rule had `scope: Cluster`: it intercepts no namespaced object, so it adds no target. */
  skippedClusterScoped: boolean;
}

/** What absent rules intercept: nothing. */
export const NO_ADMISSION_RULES: AdmissionRules = Object.freeze({
  targets: [],
  operations: [],
  skippedSubresources: false,
  skippedClusterScoped: false,
});

/**
 * The resource part of a rule's resource, or undefined for a subresource.
 * Decision: subresources (`pods/exec`, `deployments/scale`, `pods/*`) are skipped rather than reduced
 * to their resource, because a rule on `pods/exec` never sees a pod being created: reducing it would
 * warn every deployment about an exec policy. The wildcard with all subresources (star, slash, star;
 * it cannot be written here inside a comment) covers the whole objects too, so it becomes `*`.
 */
function wholeResourceOf(resource: string, where: string): string | undefined {
  if (resource === '') throw new AdapterParseError(`${where} must not be empty`);
  const slash = resource.indexOf('/');
  if (slash === -1) return resource;
  if (resource === '*/*') return '*';
  return undefined;
}

function addUnique(targets: ResourceTarget[], target: ResourceTarget): void {
  if (!targets.some((known) => known.group === target.group && known.resource === target.resource))
    targets.push(target);
}

export function readAdmissionRules(value: unknown, where: string): AdmissionRules {
  const targets: ResourceTarget[] = [];
  const operations = new Set<string>();
  let skippedSubresources = false;
  let skippedClusterScoped = false;
  readRecordList(value, where).forEach((rule, ruleIndex) => {
    const ruleWhere = `${where}[${ruleIndex}]`;
    if (rule.scope === 'Cluster') {
      skippedClusterScoped = true;
      return;
    }
    const groups = readStringList(rule.apiGroups, `${ruleWhere}.apiGroups`);
    readStringList(rule.apiVersions, `${ruleWhere}.apiVersions`);
    const ruleOperations = readStringList(rule.operations, `${ruleWhere}.operations`);
    ruleOperations.forEach((operation, operationIndex) => {
      if (!OPERATIONS.has(operation))
        throw new AdapterParseError(
          `${ruleWhere}.operations[${operationIndex}] is ${JSON.stringify(operation)}, expected CREATE, UPDATE, DELETE, CONNECT or *`,
        );
    });
    const resources = readStringList(rule.resources, `${ruleWhere}.resources`).flatMap(
      (resource, resourceIndex) => {
        const whole = wholeResourceOf(resource, `${ruleWhere}.resources[${resourceIndex}]`);
        if (whole === undefined) skippedSubresources = true;
        return whole === undefined ? [] : [whole];
      },
    );
    // A rule missing any of its three lists matches no request (the API server requires all three).
    if (resources.length === 0 || groups.length === 0 || ruleOperations.length === 0) return;
    for (const group of groups) for (const resource of resources) addUnique(targets, { group, resource });
    for (const operation of ruleOperations) operations.add(operation);
  });
  return {
    targets,
    operations: operations.has('*') ? ['*'] : [...operations],
    skippedSubresources,
    skippedClusterScoped,
  };
}

/** `CREATE, UPDATE` or `all` for the summaries. */
export function describeOperations(operations: readonly string[]): string {
  return operations.includes('*') ? 'all' : operations.join(', ');
}

/**
 * `apps/deployments, pods` (core group bare), `all resources` for `*` of `*`. Pairs of the rules'
 * cross product that no API server serves (`apps/pods`, core `deployments`) are left out, as they
 * never match a request; unless every pair is such. Past six, `and N more`: the summary that
 * holds the list stays whole within its 300 characters (the constraint view lists them all).
 */
export function describeTargets(targets: readonly ResourceTarget[]): string {
  const served = targets.filter(isServedTarget);
  return joinLimitedStrings(
    (served.length > 0 ? served : targets).map((target) => {
      if (target.group === '*' && target.resource === '*') return 'all resources';
      return target.group === '' ? target.resource : `${target.group}/${target.resource}`;
    }),
    DESCRIBED_TARGETS,
  );
}

/** How many resources a summary names before `and N more`. */
const DESCRIBED_TARGETS = 6;

/** `matchConstraints` of a policy or `matchResources` of a binding (Kubernetes' MatchResources type). */
export interface MatchResources {
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  /** undefined when `resourceRules` is absent: a binding without rules does not narrow its policy. */
  rules?: AdmissionRules;
  excluded: ResourceTarget[];
}

export function readMatchResources(value: unknown, where: string): MatchResources {
  const match = readRecord(value, where);
  return {
    namespaceSelector: readOptionalSelector(match.namespaceSelector, `${where}.namespaceSelector`),
    objectSelector: readOptionalSelector(match.objectSelector, `${where}.objectSelector`),
    rules:
      match.resourceRules === undefined || match.resourceRules === null
        ? undefined
        : readAdmissionRules(match.resourceRules, `${where}.resourceRules`),
    excluded: readAdmissionRules(match.excludeResourceRules, `${where}.excludeResourceRules`).targets,
  };
}

/** The targets no exclusion names exactly (a wildcard minus one resource stays a wildcard). */
export function withoutExcluded(
  targets: readonly ResourceTarget[],
  excluded: readonly ResourceTarget[],
): ResourceTarget[] {
  return targets.filter(
    (target) =>
      !excluded.some(
        (exclusion) => exclusion.group === target.group && exclusion.resource === target.resource,
      ),
  );
}
