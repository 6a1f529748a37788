import { InvalidArgumentError, type Command } from 'commander';
import { DETAIL_LEVELS, isDetailLevel, type DetailLevel } from '../model/api';
import { flag, flagCommand, LOG_LEVEL_FLAG, parseFlags, type FlagValues } from '../flags/command-line';
import { API_AUTH_MODES, type ApiAuthMode } from './http/api-auth';
import { parseBoolean, parseDuration } from '../flags/values';
import { MISSING_RULES, type MissingRuleName } from './missing/finding';
import { parseRescanInterval } from '../flags/rescan-interval';
import {
  parseExemptNamespaces,
  parseExemptRuntimeClasses,
  parsePodSecurityDefaults,
  PodSecurityValueError,
} from '../model/pod-security';
import { ParamKindError, parseParamKinds, type ParamKindResource } from '../model/param-kinds';

// Controller flags (DESIGN.md 2), each also settable as a FOREWARN_* environment variable, declared
// once in CONTROLLER_FLAGS (services/flags/command-line.ts). Parsing is a pure function of argv and
// env so it is tested without a process.

/** A Pod Security value parser whose errors are usage errors naming the flag. */
function podSecurityFlag<T>(parse: (value: string) => T): (value: string) => T {
  return (value) => {
    try {
      return parse(value);
    } catch (error) {
      if (error instanceof PodSecurityValueError) throw new InvalidArgumentError(error.message);
      throw error;
    }
  };
}

export function parsePort(value: string): number {
  // Digits only: Number() would read "" (an empty FOREWARN_PORT) as 0, a random port, and "0x50" as 80.
  const port = /^\d{1,5}$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new InvalidArgumentError(`expected a port number 0-65535, got ${JSON.stringify(value)}`);
  return port;
}

function parseDetailLevel(value: string): DetailLevel {
  if (!isDetailLevel(value)) throw new InvalidArgumentError(`expected one of ${DETAIL_LEVELS.join(', ')}`);
  return value;
}

function parseEmail(value: string): string {
  if (!/^[^\s@]+@[^\s@]+$/.test(value))
    throw new InvalidArgumentError(`expected an e-mail address, got ${JSON.stringify(value)}`);
  return value;
}

function parseHostPort(value: string): string {
  if (!/^[^\s:]+:\d{1,5}$/.test(value))
    throw new InvalidArgumentError(`expected host:port, got ${JSON.stringify(value)}`);
  return value;
}

function collectMissingRule(value: string, previous: MissingRuleName[] = []): MissingRuleName[] {
  const rules = value
    .split(',')
    .map((rule) => rule.trim())
    .filter((rule) => rule !== '');
  for (const rule of rules)
    if (!(MISSING_RULES as readonly string[]).includes(rule))
      throw new InvalidArgumentError(
        `unknown rule ${JSON.stringify(rule)}; expected ${MISSING_RULES.join(', ')}`,
      );
  return [...previous, ...(rules as MissingRuleName[])];
}

/** Every controller flag (DESIGN.md 2): each key is the field of ControllerConfig it sets. */
export const CONTROLLER_FLAGS = {
  manifests: flag({
    flags: '--manifests <dir>',
    help: 'read objects from YAML/JSON files under DIR instead of a cluster',
    env: 'FOREWARN_MANIFESTS',
  }),
  kubeconfig: flag({
    flags: '--kubeconfig <file>',
    help: 'kubeconfig file (default: in-cluster, then KUBECONFIG, then ~/.kube/config)',
    env: 'FOREWARN_KUBECONFIG',
  }),
  address: flag({
    flags: '--address <ip>',
    help: 'address to listen on',
    env: 'FOREWARN_ADDRESS',
    default: '0.0.0.0',
  }),
  port: flag({
    flags: '--port <port>',
    help: 'HTTP port',
    env: 'FOREWARN_PORT',
    parse: parsePort,
    default: 8080,
  }),
  mcpPort: flag({
    flags: '--mcp-port <port>',
    help: 'agent protocol (MCP) port',
    env: 'FOREWARN_MCP_PORT',
    parse: parsePort,
    default: 8090,
  }),
  mcp: flag({
    flags: '--mcp [enabled]',
    help: 'serve the agent protocol (MCP)',
    env: 'FOREWARN_MCP',
    parse: parseBoolean,
    default: true,
    preset: 'true',
  }),
  detailLevel: flag({
    flags: '--detail-level <level>',
    help: 'most detailed privacy level served: summary, detailed, full',
    env: 'FOREWARN_DETAIL_LEVEL',
    parse: parseDetailLevel,
    default: 'summary' as DetailLevel,
  }),
  rescanIntervalMs: flag({
    flags: '--rescan-interval <duration>',
    help: 'interval of API discovery / CRD rescans',
    env: 'FOREWARN_RESCAN_INTERVAL',
    parse: parseRescanInterval,
    default: 300_000,
    defaultText: '5m',
  }),
  contact: flag({
    flags: '--contact <email>',
    help: 'default contact on manual remediation steps',
    env: 'FOREWARN_CONTACT',
    parse: parseEmail,
    default: 'platform-team@example.com',
  }),
  flowobserverAddress: flag({
    flags: '--flowobserver-address <host:port>',
    help: 'flow observer to check reachability of',
    env: 'FOREWARN_FLOWOBSERVER_ADDRESS',
    parse: parseHostPort,
  }),
  ownWebhook: flag({
    flags: '--own-webhook <name>',
    help: "Forewarn's own webhook configuration, never reported",
    env: 'FOREWARN_OWN_WEBHOOK',
    default: 'forewarn-webhook',
  }),
  meshRootNamespace: flag({
    flags: '--mesh-root-namespace <namespace>',
    help: 'mesh root namespace whose policies apply mesh-wide',
    env: 'FOREWARN_MESH_ROOT_NAMESPACE',
    default: 'istio-system',
  }),
  /** Pod Security Admission defaults of the cluster's AdmissionConfiguration, when the operator knows them. */
  podSecurityDefaults: flag({
    flags: '--pod-security-default <level>',
    help: "the cluster's Pod Security Admission default for unlabelled namespaces (AdmissionConfiguration): LEVEL[:VERSION] for enforce, or mode=LEVEL[:VERSION],... ; unknown to Forewarn otherwise",
    env: 'FOREWARN_POD_SECURITY_DEFAULT',
    parse: podSecurityFlag(parsePodSecurityDefaults),
  }),
  podSecurityExemptNamespaces: flag({
    flags: '--pod-security-exempt-namespaces <names>',
    help: "namespaces the cluster's Pod Security Admission exempts (AdmissionConfiguration exemptions.namespaces), comma-separated: no Pod Security constraint is reported there",
    env: 'FOREWARN_POD_SECURITY_EXEMPT_NAMESPACES',
    parse: podSecurityFlag(parseExemptNamespaces),
    default: [] as string[],
    defaultText: 'none',
  }),
  podSecurityExemptRuntimeClasses: flag({
    flags: '--pod-security-exempt-runtime-classes <names>',
    help: "RuntimeClasses the cluster's Pod Security Admission exempts (exemptions.runtimeClasses), comma-separated: pods using them pass",
    env: 'FOREWARN_POD_SECURITY_EXEMPT_RUNTIME_CLASSES',
    parse: podSecurityFlag(parseExemptRuntimeClasses),
    default: [] as string[],
    defaultText: 'none',
  }),
  /** Open Policy Agent, which compiles Gatekeeper templates' Rego (docs/decisions.md). */
  opaPath: flag({
    flags: '--opa-path <file>',
    help: "Open Policy Agent's opa binary, which compiles Gatekeeper templates' Rego; unset: the image's /usr/local/bin/opa, then opa on PATH; none: Rego templates are unknown",
    env: 'FOREWARN_OPA_PATH',
  }),
  missingDebounceMs: flag({
    flags: '--missing-debounce <duration>',
    help: 'how long a companion resource must be missing before it is reported',
    env: 'FOREWARN_MISSING_DEBOUNCE',
    parse: parseDuration,
    default: 60_000,
    defaultText: '60s',
  }),
  disabledMissingRules: flag({
    flags: '--disable-missing-rule <rule>',
    help: `companion-resource rule to turn off (repeatable or comma-separated): ${MISSING_RULES.join(', ')}`,
    env: 'FOREWARN_DISABLE_MISSING_RULE',
    parse: collectMissingRule,
    default: [] as MissingRuleName[],
  }),
  /** Custom kinds whose objects ValidatingAdmissionPolicies use as params: watched, and granted by RBAC. */
  paramKinds: flag({
    flags: '--param-kinds <resources>',
    help: 'custom resources whose objects ValidatingAdmissionPolicies use as params (spec.paramKind), comma-separated group/version/plural: watched so their verdicts are decided; the ClusterRole must grant get/list/watch on them. ConfigMap params are never read',
    env: 'FOREWARN_PARAM_KINDS',
    parse: parseParamKindsFlag,
    default: [] as ParamKindResource[],
    defaultText: 'none',
  }),
  /** PolicyReports of the workloads at risk (issue 35; risks/policy-report.ts, docs/decisions.md). */
  policyReports: flag({
    flags: '--policy-reports [enabled]',
    help: 'write the workloads at risk as wgpolicyk8s.io/v1alpha2 PolicyReports (one per namespace) and a ClusterPolicyReport, all named forewarn, for Policy Reporter and kubectl get polr; needs the PolicyReport CRDs and write access to them',
    env: 'FOREWARN_POLICY_REPORTS',
    parse: parseBoolean,
    default: false,
    preset: 'true',
  }),
  logLevel: LOG_LEVEL_FLAG,
  /** Issue 33: synthetic admission checks once ready (http/admission-warm-up.ts). */
  warmUp: flag({
    flags: '--warm-up [enabled]',
    help: 'once ready, answer synthetic admission checks in the namespaces with constraints so that real ones find the code compiled',
    env: 'FOREWARN_WARM_UP',
    parse: parseBoolean,
    default: true,
    preset: 'true',
  }),
  /** The per-installation secret of the opaque references of redacted constraints (model/opaque-reference.ts). */
  referenceKeyFile: flag({
    flags: '--reference-key-file <file>',
    help: 'file holding the secret key (at least 16 bytes) of the opaque references shown for redacted constraint names, e.g. a mounted Secret; unset: a random key, so references change when the controller restarts',
    env: 'FOREWARN_REFERENCE_KEY_FILE',
  }),
  /** Who reads `/api/v1/constraints` unredacted (DESIGN.md 5); unset: see `effectiveApiAuth`. */
  apiAuth: flag({
    flags: '--api-auth <mode>',
    help: 'who reads /api/v1/constraints unredacted: tokenreview (the webhook, by its ServiceAccount token; the default in a cluster) or none (every caller; the default with --manifests, for local runs)',
    env: 'FOREWARN_API_AUTH',
    parse: parseApiAuth,
  }),
  /** The webhook's ServiceAccount, `namespace/name`, whose token unlocks the unredacted answer. */
  webhookServiceAccount: flag({
    flags: '--webhook-service-account <namespace/name>',
    help: "the webhook's ServiceAccount, whose token --api-auth=tokenreview accepts",
    env: 'FOREWARN_WEBHOOK_SERVICE_ACCOUNT',
    parse: parseServiceAccount,
    default: 'forewarn-system/forewarn-webhook',
  }),
  /** Detail levels that follow the caller's RBAC (issue 24; http/caller-read-access.ts). */
  callerRbac: flag({
    flags: '--caller-rbac [enabled]',
    help: 'with --api-auth=tokenreview: a caller sending its own bearer token sees each constraint whose source object it may get (SubjectAccessReview) at full',
    env: 'FOREWARN_CALLER_RBAC',
    parse: parseBoolean,
    default: true,
    preset: 'true',
  }),
  callerRbacTtlMs: flag({
    flags: '--caller-rbac-ttl <duration>',
    help: "how long a caller's access review is trusted: a revoked binding stops counting within it",
    env: 'FOREWARN_CALLER_RBAC_TTL',
    parse: parseDuration,
    default: 30_000,
    defaultText: '30s',
  }),
  callerRbacTimeoutMs: flag({
    flags: '--caller-rbac-timeout <duration>',
    help: "the longest an answer waits for the caller's reviews; what is unknown then is shown at --detail-level",
    env: 'FOREWARN_CALLER_RBAC_TIMEOUT',
    parse: parseDuration,
    default: 2000,
    defaultText: '2s',
  }),
};

function parseParamKindsFlag(value: string): ParamKindResource[] {
  try {
    return parseParamKinds(value);
  } catch (error) {
    if (error instanceof ParamKindError) throw new InvalidArgumentError(error.message);
    throw error;
  }
}

function parseApiAuth(value: string): ApiAuthMode {
  if (!(API_AUTH_MODES as readonly string[]).includes(value))
    throw new InvalidArgumentError(`expected one of ${API_AUTH_MODES.join(', ')}`);
  return value as ApiAuthMode;
}

function parseServiceAccount(value: string): string {
  if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\/[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(value))
    throw new InvalidArgumentError(`expected namespace/name, got ${JSON.stringify(value)}`);
  return value;
}

/**
 * `tokenreview` needs an API server, so it cannot go with `--manifests`; unset, the controller asks
 * for the webhook's token in a cluster and trusts every caller on files.
 */
export function effectiveApiAuth(config: Pick<ControllerConfig, 'apiAuth' | 'manifests'>): ApiAuthMode {
  return config.apiAuth ?? (config.manifests === undefined ? 'tokenreview' : 'none');
}

export type ControllerConfig = FlagValues<typeof CONTROLLER_FLAGS>;

export function buildControllerCommand(): Command {
  return flagCommand(
    'forewarn-controller',
    'Indexes the policies that constrain each namespace and serves them read-only over HTTP and MCP.',
    CONTROLLER_FLAGS,
  );
}

/** Parses argv (without node and script) and env; throws UsageError for help and invalid flags. */
export function parseControllerConfig(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): ControllerConfig {
  return parseFlags(buildControllerCommand(), CONTROLLER_FLAGS, argv, env, (config) => {
    if (config.apiAuth === 'tokenreview' && config.manifests !== undefined)
      return '--api-auth=tokenreview needs a cluster to ask; with --manifests use --api-auth=none';
    if (config.policyReports && config.manifests !== undefined)
      return '--policy-reports writes PolicyReports into a cluster; it cannot go with --manifests';
    return undefined;
  });
}
