import {
  groupOf,
  isRecord,
  isStringRecord,
  versionOf,
  type KubernetesObject,
} from '../../../model/kubernetes';
import { matchesLabelSelector, parseLabelSelector, LabelSelectorError } from '../../../model/label-selector';
import { matchesWildcard } from '../../../model/wildcard';
import type { AdmittedObject, Requester } from '../types';

// Whether a Kyverno rule's `match` and `exclude` select this request, as Kyverno 1.19's engine
// decides (pkg/engine/utils/match.go): a filter ANDs its operations, kinds, name(s), namespaces,
// annotations, selector (the object's own labels) and namespaceSelector with who asks (roles,
// clusterRoles, subjects); `any` ORs filters, `all` ANDs them, and a filter of `exclude` that
// selects the request takes the rule off it. The index has already narrowed rules by kind and
// namespace; this decides the rest, per request.
//
// Who asks is not always known: offline (`check` of manifests) there is no requester, and the
// AdmissionReview carries the user name and groups but not the roles bound to them. A filter that
// hangs on what is not known is undecided, so the answer is three-valued: a filter that fails on
// what is known does not select, whatever the requester; otherwise an unknown part leaves it open.

type Fields = Record<string, unknown>;

export type MatchDecision =
  | { kind: 'selected' }
  | { kind: 'not-selected' }
  /** Whether the rule applies hangs on something not known; `missing` says what. */
  | { kind: 'undecided'; missing: string };

const SELECTED: MatchDecision = { kind: 'selected' };
const NOT_SELECTED: MatchDecision = { kind: 'not-selected' };

export interface MatchRequest {
  admitted: AdmittedObject;
  /** The rule reaches a pod controller through auto-generation: a kind naming Pod names it. */
  throughAutogen: boolean;
}

/** AND of decisions: one `not-selected` decides; else one undecided leaves it open. */
function allOf(decisions: readonly MatchDecision[]): MatchDecision {
  let open: MatchDecision | undefined;
  for (const decision of decisions) {
    if (decision.kind === 'not-selected') return decision;
    if (decision.kind === 'undecided') open ??= decision;
  }
  return open ?? SELECTED;
}

/** OR of decisions: one `selected` decides; else one undecided leaves it open. */
function anyOf(decisions: readonly MatchDecision[]): MatchDecision {
  let open: MatchDecision | undefined;
  for (const decision of decisions) {
    if (decision.kind === 'selected') return decision;
    if (decision.kind === 'undecided') open ??= decision;
  }
  return open ?? NOT_SELECTED;
}

/** A rule without `match`: one object, so that what is read of it is read once. */
const NO_BLOCK: Fields = {};

const decided = (holds: boolean): MatchDecision => (holds ? SELECTED : NOT_SELECTED);

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === 'string') : [];
}

const VERSION = /^(v\d((alpha|beta)\d)?|\*)$/;

/** Kyverno's kind selector: `Kind`, `v1/Kind`, `group/v1/Kind`, with an optional subresource. */
function parseKindSelector(value: string): { group: string; version: string; kind: string; sub: string } {
  const slashParts = value.split('/');
  const parts = [...slashParts.slice(0, -1), ...slashParts[slashParts.length - 1].split('.')];
  switch (parts.length) {
    case 1:
      return { group: '*', version: '*', kind: parts[0], sub: '' };
    case 2:
      if (parts[0] === '*' && parts[1] === '*') return { group: '*', version: '*', kind: '*', sub: '*' };
      if (parts[0] === '*' && parts[1].toLowerCase() === parts[1])
        return { group: '*', version: '*', kind: '*', sub: parts[1] };
      if (VERSION.test(parts[0])) return { group: '*', version: parts[0], kind: parts[1], sub: '' };
      return { group: '*', version: '*', kind: parts[0], sub: parts[1] };
    case 3:
      if (VERSION.test(parts[0])) return { group: '*', version: parts[0], kind: parts[1], sub: parts[2] };
      return { group: parts[0], version: parts[1], kind: parts[2], sub: '' };
    case 4:
      return { group: parts[0], version: parts[1], kind: parts[2], sub: parts[3] };
    default:
      return { group: '', version: '', kind: '', sub: '' };
  }
}

type KindSelector = ReturnType<typeof parseKindSelector>;

function kindsMatch(
  selectors: readonly KindSelector[],
  object: KubernetesObject,
  throughAutogen: boolean,
): boolean {
  const group = groupOf(object.apiVersion);
  const version = versionOf(object.apiVersion);
  const kind = object.kind ?? '';
  return selectors.some((selector) => {
    // The generated rule names the controllers where the rule names Pod, at their served version.
    if (throughAutogen && selector.kind === 'Pod') return true;
    return (
      matchesWildcard(selector.group, group) &&
      matchesWildcard(selector.version, version) &&
      matchesWildcard(selector.kind, kind) &&
      matchesWildcard(selector.sub, '')
    );
  });
}

/** Kyverno's selector: matchLabels may hold wildcards in keys and values (wildcards.ReplaceInSelector). */
function selectorMatches(value: unknown, labels: Record<string, string>): boolean {
  if (!isRecord(value)) return false;
  const matchLabels = isStringRecord(value.matchLabels) ? value.matchLabels : {};
  const plain: Record<string, string> = {};
  for (const [key, expected] of Object.entries(matchLabels)) {
    if (!/[*?]/.test(key) && !/[*?]/.test(expected)) plain[key] = expected;
    else if (
      !Object.entries(labels).some(
        ([actualKey, actual]) => matchesWildcard(key, actualKey) && matchesWildcard(expected, actual),
      )
    )
      return false;
  }
  try {
    const selector = parseLabelSelector({ ...value, matchLabels: plain }, 'selector');
    return matchesLabelSelector(selector, labels);
  } catch (error) {
    // Kyverno fails the filter on a selector it cannot parse.
    if (error instanceof LabelSelectorError) return false;
    throw error;
  }
}

function annotationsMatch(expected: unknown, actual: Record<string, string>): boolean {
  if (!isStringRecord(expected)) return true;
  return Object.entries(expected).every(([key, value]) =>
    Object.entries(actual).some(
      ([actualKey, actualValue]) => matchesWildcard(key, actualKey) && matchesWildcard(value, actualValue),
    ),
  );
}

function stringMap(value: unknown): Record<string, string> {
  return isStringRecord(value) ? value : {};
}

/**
 * What a filter names, read once per filter object: a policy's rules do not change while the index
 * holds them (a changed policy is a new object), and every admission asks again (issue 32: ordinary
 * verdicts keep their cost).
 */
interface CompiledFilter {
  /** It names nothing: Kyverno matches nothing with it and excludes nothing with it. */
  empty: boolean;
  resources: Fields;
  operations: string[];
  kinds: KindSelector[];
  names: string[];
  namespaces: string[];
  /** It names no roles, cluster roles or subjects: who asks does not matter. */
  anyRequester: boolean;
}

const compiledFilters = new WeakMap<Fields, CompiledFilter>();

function compiledFilter(filter: Fields): CompiledFilter {
  let compiled = compiledFilters.get(filter);
  if (compiled === undefined) {
    const resources = isRecord(filter.resources) ? filter.resources : {};
    compiled = {
      empty: isEmptyFilter(filter),
      resources,
      operations: strings(resources.operations),
      kinds: strings(resources.kinds).map(parseKindSelector),
      names: strings(resources.names),
      namespaces: strings(resources.namespaces),
      anyRequester:
        strings(filter.roles).length === 0 &&
        strings(filter.clusterRoles).length === 0 &&
        !(Array.isArray(filter.subjects) && filter.subjects.some(isRecord)),
    };
    compiledFilters.set(filter, compiled);
  }
  return compiled;
}

/** The resource part of a filter: operations, kinds, names, namespaces, annotations, selectors. */
function resourceDecision(filter: CompiledFilter, request: MatchRequest): MatchDecision {
  const { resources, operations, kinds, names, namespaces } = filter;
  const { object, operation, namespace, namespaceLabels } = request.admitted;
  if (operations.length > 0 && !operations.includes(operation)) return NOT_SELECTED;
  if (kinds.length > 0 && !kindsMatch(kinds, object, request.throughAutogen)) return NOT_SELECTED;
  const metadata = isRecord(object.metadata) ? object.metadata : {};
  const name =
    typeof metadata.name === 'string' && metadata.name !== ''
      ? metadata.name
      : typeof metadata.generateName === 'string'
        ? metadata.generateName
        : '';
  if (typeof resources.name === 'string' && resources.name !== '' && !matchesWildcard(resources.name, name))
    return NOT_SELECTED;
  if (names.length > 0 && !names.some((pattern) => matchesWildcard(pattern, name))) return NOT_SELECTED;
  const isNamespace = object.kind === 'Namespace';
  const ownNamespace = isNamespace ? name : namespace;
  if (namespaces.length > 0 && !namespaces.some((pattern) => matchesWildcard(pattern, ownNamespace)))
    return NOT_SELECTED;
  if (resources.annotations !== undefined && resources.annotations !== null) {
    if (!annotationsMatch(resources.annotations, stringMap(metadata.annotations))) return NOT_SELECTED;
  }
  if (resources.selector !== undefined && resources.selector !== null) {
    if (!selectorMatches(resources.selector, stringMap(metadata.labels))) return NOT_SELECTED;
  }
  if (resources.namespaceSelector !== undefined && resources.namespaceSelector !== null) {
    // Kyverno never matches a Namespace by a namespace selector.
    if (isNamespace || !selectorMatches(resources.namespaceSelector, { ...namespaceLabels }))
      return NOT_SELECTED;
  }
  return SELECTED;
}

/** rbacv1 subjects against the requester (pkg/utils/match/subjects.go). */
function subjectsMatch(subjects: readonly Fields[], requester: Requester): boolean {
  return subjects.some((subject) => {
    const name = typeof subject.name === 'string' ? subject.name : '';
    switch (subject.kind) {
      case 'ServiceAccount': {
        const namespace = typeof subject.namespace === 'string' ? subject.namespace : '';
        return matchesWildcard(`system:serviceaccount:${namespace}:${name}`, requester.username);
      }
      case 'Group':
        return requester.groups.some((group) => matchesWildcard(name, group));
      case 'User':
        return matchesWildcard(name, requester.username);
      default:
        return false;
    }
  });
}

/** The requester part of a filter: roles, clusterRoles and subjects, each required when named. */
function requesterDecision(filter: Fields, requester: Requester | undefined): MatchDecision {
  const decisions: MatchDecision[] = [];
  for (const field of ['roles', 'clusterRoles'] as const) {
    const named = strings(filter[field]);
    if (named.length === 0) continue;
    const held = requester?.[field];
    if (held === undefined)
      decisions.push({
        kind: 'undecided',
        missing: requester
          ? `the requester's ${field === 'roles' ? 'Roles' : 'ClusterRoles'} (from its role bindings, which Forewarn does not read)`
          : 'who makes the request',
      });
    else decisions.push(decided(held.some((role) => named.includes(role))));
  }
  const subjects = Array.isArray(filter.subjects) ? filter.subjects.filter(isRecord) : [];
  if (subjects.length > 0)
    decisions.push(
      requester
        ? decided(subjectsMatch(subjects, requester))
        : { kind: 'undecided', missing: 'who makes the request' },
    );
  return allOf(decisions);
}

function filterDecision(filter: Fields, request: MatchRequest): MatchDecision {
  const compiled = compiledFilter(filter);
  if (compiled.empty) return NOT_SELECTED;
  // A filter that fails on the resource fails whoever asks.
  const resource = resourceDecision(compiled, request);
  if (resource.kind === 'not-selected' || compiled.anyRequester) return resource;
  return allOf([resource, requesterDecision(filter, request.admitted.requester)]);
}

const filterLists = new WeakMap<Fields, { any: Fields[]; all: Fields[] }>();

/** A block's `any` and `all` filters, read once per block object (as compiledFilter). */
function filtersOf(block: Fields): { any: Fields[]; all: Fields[] } {
  let lists = filterLists.get(block);
  if (lists === undefined) {
    const listOf = (key: 'any' | 'all') => (Array.isArray(block[key]) ? block[key].filter(isRecord) : []);
    lists = { any: listOf('any'), all: listOf('all') };
    filterLists.set(block, lists);
  }
  return lists;
}

/** A filter that names nothing: Kyverno matches nothing with it and excludes nothing with it. */
function isEmptyFilter(filter: Fields): boolean {
  const resources = isRecord(filter.resources) ? filter.resources : {};
  const namesSomething = (value: unknown) =>
    value !== undefined && value !== null && value !== '' && !(Array.isArray(value) && value.length === 0);
  return (
    !Object.values(resources).some(namesSomething) &&
    !['roles', 'clusterRoles', 'subjects'].some((field) => namesSomething(filter[field]))
  );
}

/** Whether a `match` or `exclude` block selects the request (`any` first, then `all`, else the legacy form). */
function blockDecision(block: Fields, request: MatchRequest): MatchDecision {
  const { any, all } = filtersOf(block);
  if (any.length > 0) return anyOf(any.map((filter) => filterDecision(filter, request)));
  if (all.length > 0) return allOf(all.map((filter) => filterDecision(filter, request)));
  return filterDecision(block, request);
}

/** The rule's match, less its exclude: whether Kyverno applies the rule to this request. */
export function ruleSelectsRequest(rule: Fields, request: MatchRequest): MatchDecision {
  const matched = blockDecision(isRecord(rule.match) ? rule.match : NO_BLOCK, request);
  if (matched.kind === 'not-selected' || !isRecord(rule.exclude)) return matched;
  const excluded = blockDecision(rule.exclude, request);
  if (excluded.kind === 'selected') return NOT_SELECTED;
  if (excluded.kind === 'not-selected') return matched;
  return matched.kind === 'undecided' ? matched : excluded;
}
