import { BASELINE_CHECKS, type PodSecurityFailure, type PodSecurityLevel } from './checks';
import { podView } from './pod-fields';
import { RESTRICTED_CHECKS } from './restricted-checks';
import type { EvaluationGuard } from '../guard/evaluation-guard';

// Pod Security Standards, one implementation for every user: Pod Security Admission verdicts, and
// Kyverno's `validate.podSecurity`. Levels and versions as pod-security-admission reads them from
// namespace labels (`latest` or `v1.N`). Not covered: exemptions from the API server's admission
// configuration (users, runtime classes, namespaces), and checks newer than the latest listed here.

export type { PodSecurityFailure, PodSecurityLevel } from './checks';

/** The newest minor version whose checks are all implemented here; `latest` means this one. */
export const LATEST_MINOR = 33;

/** `latest`, `v1.29`, `1.29` → 29; unreadable versions are read as latest, as the API server does. */
export function minorOfVersion(version: string | undefined): number {
  const match = /^v?1\.(\d+)$/.exec(version ?? '');
  return match ? Number(match[1]) : LATEST_MINOR;
}

export function isPodSecurityLevel(value: unknown): value is PodSecurityLevel {
  return value === 'privileged' || value === 'baseline' || value === 'restricted';
}

export interface PodSecurityOptions {
  /** Prefix for every path: `spec.template` for a Deployment's pod template. */
  pathPrefix?: string;
  /** Checked once per container read and before each check (each check is linear in the containers). */
  guard?: EvaluationGuard;
}

/**
 * The checks a pod (or pod template: `{metadata, spec}`) fails at a level and version, with paths
 * (relative to the pod, or under `pathPrefix`) and messages. Empty: the pod meets the level.
 */
export function evaluatePodSecurity(
  pod: { metadata?: unknown; spec?: unknown },
  level: PodSecurityLevel,
  version = 'latest',
  options: PodSecurityOptions = {},
): PodSecurityFailure[] {
  if (level === 'privileged') return [];
  const minor = minorOfVersion(version);
  const view = podView(pod, options.guard);
  const checks = level === 'restricted' ? [...BASELINE_CHECKS, ...RESTRICTED_CHECKS] : BASELINE_CHECKS;
  const failures = checks
    .filter((check) => check.sinceMinor <= minor)
    // Windows pods are exempt from the Linux-only restricted checks from 1.25.
    .filter((check) => !(check.skipWindows && view.isWindows && minor >= 25))
    .flatMap((check) => {
      options.guard?.checkDeadline();
      return check.run(view, minor);
    });
  const prefix = options.pathPrefix ? `${options.pathPrefix}.` : '';
  return prefix ? failures.map((failure) => ({ ...failure, path: `${prefix}${failure.path}` })) : failures;
}
