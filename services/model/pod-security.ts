// Pod Security Admission (built into kube-apiserver since 1.25): levels, modes and versions as the
// namespace labels `pod-security.kubernetes.io/<mode>[-version]` write them, and the defaults an
// AdmissionConfiguration may set for namespaces without labels (`--pod-security-default`).

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
