import type { ReportViolation, ResourceValidationArgs, ResourceValidationPolicy } from '@pulumi/policy';
import type { CheckedObject, CheckFinding } from '../controller/check/manifest-check';
import type { KubernetesObject } from '../model/kubernetes';
import { findingLevel, findingText, objectLabel } from '../cli/ci-findings';

// Forewarn's verdicts as Pulumi policies (docs/deploy.md, policy pack). The Kubernetes provider
// drops API-server warnings (`rest.NoWarnings{}` in 4.25.0), so a `pulumi preview` never shows
// Forewarn's admission warnings; a policy pack is Pulumi's own channel for them. Every Kubernetes
// resource of a preview is checked as `forewarn check` checks a manifest, once, and its findings
// are reported with the same text and fix: what the cluster will reject under the `mandatory`
// policy, what it will warn about or audit under the `advisory` one. Each policy's level can be
// changed in the policy pack's config (`enforcementLevel`), as for any Pulumi policy.

export const POLICY_NAMES = { rejected: 'forewarn-rejected', warned: 'forewarn-warned' } as const;

/** Per-policy config (`pulumi preview --policy-pack-config FILE`); the environment fills gaps. */
export interface VerdictPolicyConfig {
  /** Forewarn controller URL (as `forewarn --url`); default FOREWARN_URL, else http://localhost:8080. */
  url?: string;
  /** Check offline against this directory of cluster manifests (as `forewarn check --manifests`). */
  manifests?: string;
  /** Seconds to wait for the controller (default 10). */
  timeoutSeconds?: number;
  /** Also report constraints that apply to the object without a verdict on it (advisory only). */
  includeApplies?: boolean;
}

export const CONFIG_SCHEMA = {
  properties: {
    url: { type: 'string' as const },
    manifests: { type: 'string' as const },
    timeoutSeconds: { type: 'number' as const, minimum: 0.1 },
    includeApplies: { type: 'boolean' as const },
  },
};

/** The check of one object: its findings, or why it could not be checked. */
/**
 * One resource's check: its findings, and the constraints that only apply in its namespace (network,
 * mesh, mutations: listed once per namespace by `check`, reported here only with `includeApplies`).
 */
export type ObjectCheck =
  { checked: CheckedObject; standing: readonly CheckFinding[] } | { unavailable: string };

export type CheckObject = (
  urn: string,
  object: KubernetesObject,
  config: VerdictPolicyConfig,
) => Promise<ObjectCheck>;

/**
 * The object a Kubernetes resource of a program would send: its inputs, with `apiVersion` and
 * `kind` from the resource type (`kubernetes:apps/v1:Deployment`) when the inputs lack them, and
 * the resource's name when the program lets the provider name it. Undefined for other resources.
 */
export function kubernetesObjectOf(
  type: string,
  props: Record<string, unknown>,
  name: string,
): KubernetesObject | undefined {
  const match = /^kubernetes:([^:]+)\/([^:/]+):([^:]+)$/.exec(type);
  if (!match) return undefined;
  const [, group, version, kind] = match;
  // `kubernetes:yaml/v2:ConfigGroup` and the like are components whose objects are resources of their own.
  if (group === 'yaml' || group === 'helm.sh' || group === 'kustomize') return undefined;
  if (kind.endsWith('List') || kind.endsWith('Patch')) return undefined;
  const metadata = typeof props.metadata === 'object' && props.metadata !== null ? { ...props.metadata } : {};
  const named = metadata as { name?: unknown };
  if (typeof named.name !== 'string' || named.name === '') named.name = name;
  return {
    ...props,
    apiVersion:
      typeof props.apiVersion === 'string'
        ? props.apiVersion
        : group === 'core'
          ? version
          : `${group}/${version}`,
    kind: typeof props.kind === 'string' ? props.kind : kind,
    metadata,
  } as KubernetesObject;
}

function report(
  check: ObjectCheck,
  policy: keyof typeof POLICY_NAMES,
  config: VerdictPolicyConfig,
  reportViolation: ReportViolation,
): void {
  if ('unavailable' in check) {
    // Forewarn never blocks: an answer it could not give is advice, never a mandatory failure.
    if (policy === 'warned') reportViolation(`Forewarn could not check this resource: ${check.unavailable}`);
    return;
  }
  const standing = policy === 'warned' && config.includeApplies === true ? check.standing : [];
  for (const finding of [...check.checked.findings, ...standing]) {
    const level = findingLevel(finding);
    const wanted =
      policy === 'rejected'
        ? level === 'error'
        : level === 'warning' || (level === 'note' && config.includeApplies === true);
    if (wanted) reportViolation(`${objectLabel(check.checked)}: ${findingText(finding)}`);
  }
}

/** The two policies, sharing one check per resource (by URN) through `checkObject`. */
export function verdictPolicies(checkObject: CheckObject): ResourceValidationPolicy[] {
  const checks = new Map<string, Promise<ObjectCheck>>();
  const checkOnce = (args: ResourceValidationArgs, config: VerdictPolicyConfig) => {
    const object = kubernetesObjectOf(args.type, args.props as Record<string, unknown>, args.name);
    if (object === undefined) return undefined;
    let pending = checks.get(args.urn);
    if (!pending) {
      pending = checkObject(args.urn, object, config);
      checks.set(args.urn, pending);
    }
    return pending;
  };
  const policy = (
    which: keyof typeof POLICY_NAMES,
    description: string,
    enforcementLevel: 'mandatory' | 'advisory',
  ): ResourceValidationPolicy => ({
    name: POLICY_NAMES[which],
    description,
    enforcementLevel,
    configSchema: CONFIG_SCHEMA,
    validateResource: async (args, reportViolation) => {
      const config = args.getConfig<VerdictPolicyConfig>();
      const pending = checkOnce(args, config);
      if (pending) report(await pending, which, config, reportViolation);
    },
  });
  return [
    policy(
      'rejected',
      'Forewarn: the cluster will reject this object (or its pods); the message says why and how to fix it',
      'mandatory',
    ),
    policy(
      'warned',
      'Forewarn: the cluster will admit this object but warn about or audit it; the message says why and how to fix it',
      'advisory',
    ),
  ];
}
