// Small, pure checks of Kubernetes and Go value formats used by the argument resolver.
import { TaintEffect, TolerationOperator, type Toleration } from './args';
import { parseGoDuration } from '../services/model/duration';

// The longest suffix appended to the component name in a DNS-1035 label (Service names) is
// "-controller" (11 characters); labels are at most 63 characters.
export const MAX_COMPONENT_NAME_LENGTH = 63 - '-controller'.length;
export const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
// Kubernetes quantity: a signed decimal number with an optional binary/decimal suffix or exponent.
export const QUANTITY = /^[+-]?(\d+(\.\d*)?|\.\d+)(([KMGTPE]i)|[numkMGTPE]|[eE][+-]?\d+)?$/;
export { parseGoDuration };

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

/** cert-manager's `duration` and `renewBefore`: Go durations, renewal before expiry. */
export function checkDurations(duration: string, renewBefore: string, errors: string[]): void {
  const durationMs = parseGoDuration(duration);
  const renewBeforeMs = parseGoDuration(renewBefore);
  if (durationMs === undefined) {
    errors.push(
      `admissionWebhook.certIssuer.duration must be a Go duration such as "8760h" (got ${show(duration)})`,
    );
  }
  if (renewBeforeMs === undefined) {
    errors.push(
      `admissionWebhook.certIssuer.renewBefore must be a Go duration such as "720h" (got ${show(renewBefore)})`,
    );
  }
  if (durationMs !== undefined && renewBeforeMs !== undefined && renewBeforeMs >= durationMs) {
    errors.push(
      `admissionWebhook.certIssuer.renewBefore (${renewBefore}) must be shorter than duration (${duration}), ` +
        'or cert-manager would renew the certificate continuously',
    );
  }
}

export function checkTolerations(tolerations: Toleration[], errors: string[]): void {
  tolerations.forEach((toleration, index) => {
    if (toleration.operator !== undefined && !isOneOf(TolerationOperator, toleration.operator)) {
      errors.push(
        `tolerations[${index}].operator must be one of ${quoted(TolerationOperator)} (got ${show(toleration.operator)})`,
      );
    }
    if (toleration.effect !== undefined && !isOneOf(TaintEffect, toleration.effect)) {
      errors.push(
        `tolerations[${index}].effect must be one of ${quoted(TaintEffect)} (got ${show(toleration.effect)})`,
      );
    }
  });
}
