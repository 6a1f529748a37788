// Small, pure checks of Kubernetes and Go value formats used by the argument resolver.

// The longest suffix appended to the component name in a DNS-1035 label (Service names) is
// "-controller" (11 characters); labels are at most 63 characters.
export const MAX_COMPONENT_NAME_LENGTH = 63 - '-controller'.length;
export const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
// Kubernetes quantity: a signed decimal number with an optional binary/decimal suffix or exponent.
export const QUANTITY = /^[+-]?(\d+(\.\d*)?|\.\d+)(([KMGTPE]i)|[numkMGTPE]|[eE][+-]?\d+)?$/;
export { parseGoDuration } from '../services/model/duration';

export function isOneOf<T extends string>(values: { [key: string]: T }, value: unknown): value is T {
  return typeof value === 'string' && (Object.values(values) as string[]).includes(value);
}

export function quoted(values: { [key: string]: string }): string {
  return Object.values(values)
    .map((value) => `"${value}"`)
    .join(', ');
}

export function show(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}

export function isInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value);
}

export function checkLabel(path: string, value: unknown, errors: string[]): void {
  if (typeof value !== 'string' || value.length > 63 || !DNS1123_LABEL.test(value)) {
    errors.push(
      `${path} must be a DNS-1123 label (lowercase letters, digits and "-", at most 63 characters; got ${show(value)})`,
    );
  }
}

export function checkSubdomain(path: string, value: unknown, errors: string[]): void {
  if (typeof value !== 'string' || value.length > 253 || !DNS1123_SUBDOMAIN.test(value)) {
    errors.push(`${path} must be a DNS-1123 subdomain such as "registry-credentials" (got ${show(value)})`);
  }
}
