import { AdapterParseError, type ResourceTarget } from '../../../model/constraint';
import type { LabelSelector } from '../../../model/kubernetes';
import { groupOfKnownKind, pluralOfKind, targetMatches, targetsInclude } from '../../../model/resources';
import { readRecord, readRecordList, readSelector, readStringList } from '../shared/object-fields';
import { andSelectors, commonValue, uniqueSorted } from '../shared/scope-text';

// Kyverno rule `match` and `exclude` blocks → which resources, namespaces and labels a rule covers.
// A block is either legacy (`resources` plus `subjects`/`roles`) or `any` (OR) / `all` (AND) lists of
// such filters. Where an OR of selectors is not one selector, the result widens (applies to more),
// because a missed warning costs a developer more than an extra one.

export interface ResourceFilter {
  /** undefined: any resource. */
  targets?: ResourceTarget[];
  /** Kinds as the policy writes them, for the summary. */
  kindNames?: string[];
  /** undefined: any namespace. */
  namespaces?: string[];
  namespaceSelector?: LabelSelector;
  /** Labels of the resource itself. */
  selector?: LabelSelector;
  names?: string[];
  /** Whether the filter narrows by anything besides kinds and namespaces (labels, names, users). */
  narrowed: boolean;
}

/**
 * A Kyverno kind: `Pod`, `Deployment`, `apps/v1/Deployment`, `v1/Pod`, `apps/*\/Deployment`, `*`,
 * with an optional subresource (`Pod/exec`, `apps/v1/Deployment/scale`). A kind without a group is
 * matched in any group unless it is a well-known one.
 */
export function parseKyvernoKind(value: string, where: string): ResourceTarget {
  const parts = value.split('/');
  if (parts.some((part) => part === '') || parts.length > 4)
    throw new AdapterParseError(
      `${where} ${JSON.stringify(value)} is not a Kind, Version/Kind or Group/Version/Kind`,
    );
  // A kind starts with an upper-case letter (or is `*`); a subresource is lower-case.
  const isKind = (part: string) => part === '*' || /^[A-Z*]/.test(part);
  let group: string | undefined;
  let kind: string;
  let subresource: string | undefined;
  if (parts.length === 1) [kind] = parts;
  else if (parts.length === 2) {
    if (isKind(parts[1])) kind = parts[1];
    else [kind, subresource] = parts;
  } else if (parts.length === 3) {
    if (isKind(parts[2])) [group, , kind] = parts;
    else [, kind, subresource] = parts;
  } else [group, , kind, subresource] = parts;
  if (!isKind(kind)) throw new AdapterParseError(`${where} ${JSON.stringify(value)} names no kind`);
  const resource = kind === '*' ? '*' : pluralOfKind(kind);
  return {
    group: group ?? (kind === '*' ? '*' : (groupOfKnownKind(kind) ?? '*')),
    resource: subresource === undefined ? resource : `${resource}/${subresource}`,
  };
}

/** One filter: `{resources: {...}, subjects, roles, clusterRoles}` (or a legacy block). */
function readFilter(block: Record<string, unknown>, where: string): ResourceFilter {
  const resources = readRecord(block.resources, `${where}.resources`);
  const kinds = readStringList(resources.kinds, `${where}.resources.kinds`);
  const names = readStringList(resources.names, `${where}.resources.names`);
  if (typeof resources.name === 'string') names.push(resources.name);
  else if (resources.name !== undefined)
    throw new AdapterParseError(`${where}.resources.name must be a string`);
  const namespaces = readStringList(resources.namespaces, `${where}.resources.namespaces`);
  const filter: ResourceFilter = {
    narrowed:
      names.length > 0 ||
      resources.selector !== undefined ||
      resources.annotations !== undefined ||
      ['subjects', 'roles', 'clusterRoles'].some((field) =>
        readStringOrRecordList(block[field], `${where}.${field}`),
      ),
  };
  if (kinds.length > 0) {
    filter.targets = kinds.map((kind, index) => parseKyvernoKind(kind, `${where}.resources.kinds[${index}]`));
    filter.kindNames = kinds;
  }
  if (namespaces.length > 0) filter.namespaces = namespaces;
  if (names.length > 0) filter.names = names;
  if (resources.namespaceSelector !== undefined)
    filter.namespaceSelector = readSelector(
      resources.namespaceSelector,
      `${where}.resources.namespaceSelector`,
    );
  if (resources.selector !== undefined)
    filter.selector = readSelector(resources.selector, `${where}.resources.selector`);
  return filter;
}

/** `subjects` are objects, `roles` strings: only whether any are present matters here. */
function readStringOrRecordList(value: unknown, where: string): boolean {
  if (value === undefined || value === null) return false;
  if (!Array.isArray(value)) throw new AdapterParseError(`${where} must be a list`);
  return value.length > 0;
}

function unionOfLists(lists: ReadonlyArray<string[] | undefined>): string[] | undefined {
  return lists.some((list) => list === undefined)
    ? undefined
    : uniqueSorted(lists.flatMap((list) => list ?? []));
}

function intersectionOfLists(lists: ReadonlyArray<string[] | undefined>): string[] | undefined {
  const defined = lists.filter((list): list is string[] => list !== undefined);
  if (defined.length === 0) return undefined;
  return defined.reduce((common, list) => common.filter((entry) => list.includes(entry)));
}

/** Filters ORed (`any`): what any of them covers. */
function unionOfFilters(filters: readonly ResourceFilter[]): ResourceFilter {
  const union: ResourceFilter = { narrowed: filters.every((filter) => filter.narrowed) };
  if (filters.every((filter) => filter.targets !== undefined)) {
    union.targets = filters.flatMap((filter) => filter.targets ?? []);
    union.kindNames = uniqueSorted(filters.flatMap((filter) => filter.kindNames ?? []));
  }
  const namespaces = unionOfLists(filters.map((filter) => filter.namespaces));
  if (namespaces !== undefined) union.namespaces = namespaces;
  const names = unionOfLists(filters.map((filter) => filter.names));
  if (names !== undefined) union.names = names;
  const namespaceSelector = commonValue(filters.map((filter) => filter.namespaceSelector));
  if (namespaceSelector !== undefined) union.namespaceSelector = namespaceSelector;
  const selector = commonValue(filters.map((filter) => filter.selector));
  if (selector !== undefined) union.selector = selector;
  return union;
}

/** Filters ANDed (`all`, or legacy with `any`/`all`): what all of them cover. */
function intersectionOfFilters(filters: readonly ResourceFilter[]): ResourceFilter {
  const intersection: ResourceFilter = { narrowed: filters.some((filter) => filter.narrowed) };
  const withTargets = filters.filter((filter) => filter.targets !== undefined);
  if (withTargets.length > 0) {
    const [first, ...others] = withTargets;
    intersection.targets = (first.targets ?? []).filter((target) =>
      others.every((other) =>
        (other.targets ?? []).some(
          (candidate) => targetMatches(candidate, target) || targetMatches(target, candidate),
        ),
      ),
    );
    intersection.kindNames = first.kindNames;
  }
  const namespaces = intersectionOfLists(filters.map((filter) => filter.namespaces));
  if (namespaces !== undefined) intersection.namespaces = namespaces;
  const names = intersectionOfLists(filters.map((filter) => filter.names));
  if (names !== undefined) intersection.names = names;
  const namespaceSelector = filters.reduce<LabelSelector | undefined>(
    (combined, filter) => andSelectors(combined, filter.namespaceSelector),
    undefined,
  );
  if (namespaceSelector !== undefined) intersection.namespaceSelector = namespaceSelector;
  const selector = filters.reduce<LabelSelector | undefined>(
    (combined, filter) => andSelectors(combined, filter.selector),
    undefined,
  );
  if (selector !== undefined) intersection.selector = selector;
  return intersection;
}

/** Each form a block uses (legacy, `any`, `all`), as filters to be ANDed. */
function readBlockParts(block: Record<string, unknown>, where: string): ResourceFilter[] {
  const parts: ResourceFilter[] = [];
  if (block.resources !== undefined) parts.push(readFilter(block, where));
  const anyFilters = readRecordList(block.any, `${where}.any`).map((entry, index) =>
    readFilter(entry, `${where}.any[${index}]`),
  );
  if (anyFilters.length > 0) parts.push(unionOfFilters(anyFilters));
  const allFilters = readRecordList(block.all, `${where}.all`).map((entry, index) =>
    readFilter(entry, `${where}.all[${index}]`),
  );
  if (allFilters.length > 0) parts.push(intersectionOfFilters(allFilters));
  return parts;
}

/** The resources a rule's `match` covers. Kyverno requires a match, so an empty one is malformed. */
export function readMatch(value: unknown, where: string): ResourceFilter {
  const parts = readBlockParts(readRecord(value, where), where);
  if (parts.length === 0) throw new AdapterParseError(`${where} needs resources, any or all`);
  return parts.length === 1 ? parts[0] : intersectionOfFilters(parts);
}

/**
 * Namespaces a rule's `exclude` removes wholesale: only filters that exclude every resource the rule
 * matches there, for every user. Narrower exclusions (some labels, some users) are ignored, so the
 * constraint still shows in those namespaces: it applies to part of them.
 */
export function readExcludedNamespaces(value: unknown, where: string, matched: ResourceFilter): string[] {
  if (value === undefined || value === null) return [];
  const block = readRecord(value, where);
  const excludesWholeNamespaces = (filter: ResourceFilter) =>
    filter.namespaces !== undefined &&
    !filter.narrowed &&
    filter.namespaceSelector === undefined &&
    (filter.targets === undefined ||
      (matched.targets !== undefined &&
        matched.targets.every((target) => targetsInclude(filter.targets, target))));
  const excluded: string[] = [];
  if (block.resources !== undefined) {
    const filter = readFilter(block, where);
    if (excludesWholeNamespaces(filter)) excluded.push(...(filter.namespaces ?? []));
  }
  // Any one `any` entry excludes: each whole-namespace entry counts on its own.
  readRecordList(block.any, `${where}.any`).forEach((entry, index) => {
    const filter = readFilter(entry, `${where}.any[${index}]`);
    if (excludesWholeNamespaces(filter)) excluded.push(...(filter.namespaces ?? []));
  });
  // `all` entries exclude together: only when each of them excludes whole namespaces.
  const allFilters = readRecordList(block.all, `${where}.all`).map((entry, index) =>
    readFilter(entry, `${where}.all[${index}]`),
  );
  if (allFilters.length > 0 && allFilters.every(excludesWholeNamespaces))
    excluded.push(...(intersectionOfLists(allFilters.map((filter) => filter.namespaces)) ?? []));
  return uniqueSorted(excluded);
}
