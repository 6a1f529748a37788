// Pod Security Admission (built into kube-apiserver since 1.25): levels, modes and versions as the
// namespace labels `pod-security.kubernetes.io/<mode>[-version]` write them, and the defaults an
// AdmissionConfiguration may set for namespaces without labels (`--pod-security-default`) and the
// exemptions it may grant (`--pod-security-exempt-namespaces`, `--pod-security-exempt-runtime-classes`).

export const POD_SECURITY_LEVELS = ['privileged', 'baseline', 'restricted'] as const;
export type PodSecurityLevel = (typeof POD_SECURITY_LEVELS)[number];

export const POD_SECURITY_MODES = ['enforce', 'warn', 'audit'] as const;
export type PodSecurityMode = (typeof POD_SECURITY_MODES)[number];

/** A level at a version of the Pod Security Standards: `latest` or `v1.<minor>`. */
export interface PodSecurityPolicy {
  level: PodSecurityLevel;
  version: string;
}

/** What the cluster's AdmissionConfiguration sets for unlabelled namespaces; unknown modes are absent. */
export type PodSecurityDefaults = Partial<Record<PodSecurityMode, PodSecurityPolicy>>;

/**
 * What the cluster's AdmissionConfiguration exempts (`exemptions`): Pod Security Admission evaluates
 * no pod in these namespaces and no pod with one of these runtime classes. Exempt usernames depend on
 * who makes the request, which Forewarn does not know.
 */
export interface PodSecurityExemptions {
  namespaces: readonly string[];
  runtimeClasses: readonly string[];
}

/** The tag a `pod-security/<mode>` constraint carries for each exempt runtime class. */
export const EXEMPT_RUNTIME_CLASS_TAG_PREFIX = 'exempt-runtime-class:';

export class PodSecurityValueError extends Error {}

export function isPodSecurityLevel(value: unknown): value is PodSecurityLevel {
  return POD_SECURITY_LEVELS.some((level) => level === value);
}

/** `latest` or `v1.<minor>` as Pod Security Admission accepts them. */
export function isPodSecurityVersion(value: unknown): value is string {
  return typeof value === 'string' && (value === 'latest' || /^v1\.(0|[1-9][0-9]{0,3})$/.test(value));
}

function parsePolicy(value: string, where: string): PodSecurityPolicy {
  const [level, version = 'latest', ...rest] = value.split(':');
  if (!isPodSecurityLevel(level) || rest.length > 0)
    throw new PodSecurityValueError(
      `${where}: expected privileged, baseline or restricted, got ${JSON.stringify(value)}`,
    );
  if (!isPodSecurityVersion(version))
    throw new PodSecurityValueError(
      `${where}: expected a version latest or v1.<minor>, got ${JSON.stringify(version)}`,
    );
  return { level, version };
}

/**
 * `--pod-security-default`: `LEVEL[:VERSION]` sets the enforce default; `mode=LEVEL[:VERSION],...`
 * sets modes one by one (`enforce=baseline,warn=restricted,audit=restricted`).
 */
export function parsePodSecurityDefaults(value: string): PodSecurityDefaults {
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length === 0) throw new PodSecurityValueError('expected a level, e.g. baseline');
  const defaults: PodSecurityDefaults = {};
  for (const entry of entries) {
    const equals = entry.indexOf('=');
    if (equals === -1) {
      if (entries.length > 1)
        throw new PodSecurityValueError(`write every entry as mode=LEVEL, got ${JSON.stringify(entry)}`);
      defaults.enforce = parsePolicy(entry, 'enforce');
      continue;
    }
    const mode = entry.slice(0, equals);
    if (!POD_SECURITY_MODES.some((known) => known === mode))
      throw new PodSecurityValueError(
        `unknown mode ${JSON.stringify(mode)}, expected enforce, warn or audit`,
      );
    defaults[mode as PodSecurityMode] = parsePolicy(entry.slice(equals + 1), mode);
  }
  return defaults;
}

/**
 * The level and version a Pod Security Admission constraint (`pod-security/<mode>`) applies, from its
 * tags: what the namespace's labels say, or the cluster default, or `restricted` for an invalid level.
 */
export function podSecurityPolicyOfTags(tags: readonly string[]): PodSecurityPolicy | undefined {
  const level = tags.find(isPodSecurityLevel);
  const version = tags.find(isPodSecurityVersion);
  return level === undefined ? undefined : { level, version: version ?? 'latest' };
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

function parseNameList(value: string, what: string, valid: RegExp, maxLength: number): string[] {
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  for (const name of names)
    if (name.length > maxLength || !valid.test(name))
      throw new PodSecurityValueError(`${JSON.stringify(name)} is not a valid ${what} name`);
  return [...new Set(names)];
}

/** `--pod-security-exempt-namespaces`: comma-separated namespace names. */
export function parseExemptNamespaces(value: string): string[] {
  return parseNameList(value, 'namespace', DNS_LABEL, 63);
}

/** `--pod-security-exempt-runtime-classes`: comma-separated RuntimeClass names. */
export function parseExemptRuntimeClasses(value: string): string[] {
  return parseNameList(value, 'RuntimeClass', DNS_SUBDOMAIN, 253);
}

/** Exempt runtime classes named by a constraint's tags (see EXEMPT_RUNTIME_CLASS_TAG_PREFIX). */
export function exemptRuntimeClassesOfTags(tags: readonly string[]): string[] {
  return tags
    .filter((tag) => tag.startsWith(EXEMPT_RUNTIME_CLASS_TAG_PREFIX))
    .map((tag) => tag.slice(EXEMPT_RUNTIME_CLASS_TAG_PREFIX.length));
}
