// Small, pure checks of Kubernetes and Go value formats used by the argument resolver.

// The longest suffix appended to the component name in a DNS-1035 label (Service names) is
// "-controller" (11 characters); labels are at most 63 characters.
export const MAX_COMPONENT_NAME_LENGTH = 63 - '-controller'.length;
export const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
// Kubernetes quantity: a signed decimal number with an optional binary/decimal suffix or exponent.
export const QUANTITY = /^[+-]?(\d+(\.\d*)?|\.\d+)(([KMGTPE]i)|[numkMGTPE]|[eE][+-]?\d+)?$/;
// Go time.Duration syntax as cert-manager parses it, e.g. `8760h`, `1h30m`.
const GO_DURATION = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/;
const GO_DURATION_UNIT_MS: { [unit: string]: number } = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** Milliseconds of a Go duration string, or undefined when it is not one. */
export function parseGoDuration(text: string): number | undefined {
  if (!GO_DURATION.test(text)) {
    return undefined;
  }
  let total = 0;
  for (const match of text.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) {
    total += Number(match[1]) * GO_DURATION_UNIT_MS[match[2]];
  }
  return total;
}

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
