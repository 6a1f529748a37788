import {
  isRecord,
  isStringRecord,
  type LabelSelector,
  type LabelSelectorRequirement,
  type Labels,
} from './kubernetes';

// Kubernetes label-selector semantics (apimachinery `metav1.LabelSelectorAsSelector`): requirements
// are ANDed; an empty selector matches everything; `In`/`NotIn` take values, `Exists`/`DoesNotExist`
// take none; `NotIn` and `DoesNotExist` match objects without the key. No maintained npm library
// implements these semantics on plain objects (client-node only serialises selectors), and they fit
// in this file, so they are written here and tested against the apimachinery cases.

export class LabelSelectorError extends Error {}

const OPERATORS = new Set(['In', 'NotIn', 'Exists', 'DoesNotExist']);

/** Validates an untyped selector from an object and returns it typed; throws LabelSelectorError. */
export function parseLabelSelector(value: unknown, where: string): LabelSelector {
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) throw new LabelSelectorError(`${where} is not a label selector object`);
  const selector: LabelSelector = {};
  if (value.matchLabels !== undefined && value.matchLabels !== null) {
    if (!isStringRecord(value.matchLabels))
      throw new LabelSelectorError(`${where}.matchLabels must map strings to strings`);
    selector.matchLabels = { ...value.matchLabels };
  }
  if (value.matchExpressions !== undefined && value.matchExpressions !== null) {
    if (!Array.isArray(value.matchExpressions))
      throw new LabelSelectorError(`${where}.matchExpressions must be a list`);
    selector.matchExpressions = value.matchExpressions.map((entry, index) =>
      parseRequirement(entry, `${where}.matchExpressions[${index}]`),
    );
  }
  return selector;
}

function parseRequirement(value: unknown, where: string): LabelSelectorRequirement {
  if (!isRecord(value) || typeof value.key !== 'string' || typeof value.operator !== 'string')
    throw new LabelSelectorError(`${where} needs a string key and operator`);
  if (!OPERATORS.has(value.operator))
    throw new LabelSelectorError(
      `${where}.operator ${JSON.stringify(value.operator)} is not In, NotIn, Exists or DoesNotExist`,
    );
  const values = value.values ?? [];
  if (!Array.isArray(values) || !values.every((entry) => typeof entry === 'string'))
    throw new LabelSelectorError(`${where}.values must be a list of strings`);
  if ((value.operator === 'In' || value.operator === 'NotIn') && values.length === 0)
    throw new LabelSelectorError(`${where}: operator ${value.operator} needs at least one value`);
  if ((value.operator === 'Exists' || value.operator === 'DoesNotExist') && values.length > 0)
    throw new LabelSelectorError(`${where}: operator ${value.operator} takes no values`);
  return { key: value.key, operator: value.operator, values: [...values] };
}

export function matchesLabelSelector(selector: LabelSelector, labels: Labels): boolean {
  for (const [key, expected] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== expected) return false;
  }
  for (const requirement of selector.matchExpressions ?? []) {
    if (!matchesRequirement(requirement, labels)) return false;
  }
  return true;
}

function matchesRequirement(requirement: LabelSelectorRequirement, labels: Labels): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, requirement.key);
  const values = requirement.values ?? [];
  switch (requirement.operator) {
    case 'In':
      return has && values.includes(labels[requirement.key]);
    case 'NotIn':
      return !has || !values.includes(labels[requirement.key]);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    default:
      return false;
  }
}

export function isEmptySelector(selector: LabelSelector): boolean {
  return (
    Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0
  );
}

/** Human form, as kubectl prints selectors: `app=web,tier in (a,b),!legacy`. */
export function formatLabelSelector(selector: LabelSelector): string {
  const parts = Object.entries(selector.matchLabels ?? {}).map(([key, value]) => `${key}=${value}`);
  for (const requirement of selector.matchExpressions ?? []) {
    const values = (requirement.values ?? []).join(',');
    if (requirement.operator === 'In') parts.push(`${requirement.key} in (${values})`);
    else if (requirement.operator === 'NotIn') parts.push(`${requirement.key} notin (${values})`);
    else if (requirement.operator === 'Exists') parts.push(requirement.key);
    else parts.push(`!${requirement.key}`);
  }
  return parts.length === 0 ? 'all pods' : parts.join(',');
}

/** Parses a label set written `k=v,k2=v2` (the `labels` query parameter). Throws on bad syntax. */
export function parseLabelSet(value: string): Record<string, string> {
  const labels: Record<string, string> = {};
  // Exactly as documented (docs/openapi.yaml): no spaces are trimmed, so what is accepted is what is
  // written there.
  if (value === '') return labels;
  for (const pair of value.split(',')) {
    const equals = pair.indexOf('=');
    if (equals <= 0) throw new LabelSelectorError(`label ${JSON.stringify(pair)} is not written key=value`);
    const key = pair.slice(0, equals);
    const labelValue = pair.slice(equals + 1);
    if (!/^([a-zA-Z0-9.-]+\/)?[a-zA-Z0-9]([-a-zA-Z0-9_.]*[a-zA-Z0-9])?$/.test(key))
      throw new LabelSelectorError(`label key ${JSON.stringify(key)} is not a valid label key`);
    if (labelValue !== '' && !/^[a-zA-Z0-9]([-a-zA-Z0-9_.]*[a-zA-Z0-9])?$/.test(labelValue))
      throw new LabelSelectorError(`label value ${JSON.stringify(labelValue)} is not a valid label value`);
    labels[key] = labelValue;
  }
  return labels;
}
