// The controller's and the webhook's own identities in the e2e cluster: ServiceAccounts bound to
// exactly the rules the Pulumi component grants (read from infra/rbac.ts, the one source of both), so
// every request of the processes under test goes through the component's RBAC; and the reader that
// finds authorization errors (403) in their logs.
import {
  CONTROLLER_POLICY_REPORT_RULES,
  CONTROLLER_TOKEN_REVIEW_RULES,
  controllerRules,
  webhookConfigurationRules,
  webhookSecretRules,
} from '../../infra/rbac';
import type { ParamKindResource } from '../../services/model/param-kinds';

export const controllerServiceAccount = 'forewarn-controller';
export const webhookServiceAccount = 'forewarn-webhook';

interface PlainPolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

function plainStrings(value: unknown, what: string): string[] {
  if (!Array.isArray(value) || !value.every((item): item is string => typeof item === 'string')) {
    throw new Error(`${what} is not a plain list of strings: ${JSON.stringify(value)}`);
  }
  return value;
}

/** The component's rules as plain JSON (they are plain values; an Output would be a test setup error). */
function plainRules(rules: readonly unknown[]): PlainPolicyRule[] {
  return rules.map((rule, index) => {
    const { apiGroups, resources, verbs, resourceNames } = rule as Record<string, unknown>;
    return {
      apiGroups: plainStrings(apiGroups, `rule ${index} apiGroups`),
      resources: plainStrings(resources, `rule ${index} resources`),
      verbs: plainStrings(verbs, `rule ${index} verbs`),
      ...(resourceNames === undefined
        ? {}
        : { resourceNames: plainStrings(resourceNames, `rule ${index} resourceNames`) }),
    };
  });
}

function binding(
  kind: 'RoleBinding' | 'ClusterRoleBinding',
  name: string,
  namespace: string | undefined,
  serviceAccount: string,
  serviceAccountNamespace: string,
): Record<string, unknown> {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind,
    metadata: namespace ? { name, namespace } : { name },
    roleRef: {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: kind === 'RoleBinding' ? 'Role' : 'ClusterRole',
      name,
    },
    subjects: [{ kind: 'ServiceAccount', name: serviceAccount, namespace: serviceAccountNamespace }],
  };
}

export interface IdentityNames {
  namespace: string;
  tlsSecretName: string;
  webhookConfigurationName: string;
  /** The component's `controller.paramKinds`: the controller's role reads them too. */
  paramKinds?: readonly ParamKindResource[];
  /** The component's `controller.policyReports`: the controller's role writes its PolicyReports too. */
  policyReports?: boolean;
}

/**
 * ServiceAccounts, roles and bindings as the component creates them (infra/rbac.ts): the controller's
 * ClusterRole; the webhook's Role on its TLS Secret and ClusterRole on its registration. A JSON List.
 */
export function identitiesManifest(names: IdentityNames): string {
  const { namespace } = names;
  const controllerRole = 'forewarn-e2e-controller';
  const webhookRole = 'forewarn-e2e-webhook';
  const items = [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: controllerServiceAccount, namespace } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: webhookServiceAccount, namespace } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: controllerRole },
      // As the component's ClusterRole: read what it watches, and create TokenReviews (--api-auth).
      rules: plainRules([
        ...controllerRules(names.paramKinds),
        ...CONTROLLER_TOKEN_REVIEW_RULES,
        ...(names.policyReports ? CONTROLLER_POLICY_REPORT_RULES : []),
      ]),
    },
    binding('ClusterRoleBinding', controllerRole, undefined, controllerServiceAccount, namespace),
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: webhookRole, namespace },
      rules: plainRules(webhookSecretRules(names.tlsSecretName)),
    },
    binding('RoleBinding', webhookRole, namespace, webhookServiceAccount, namespace),
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: webhookRole },
      rules: plainRules(webhookConfigurationRules(names.webhookConfigurationName)),
    },
    binding('ClusterRoleBinding', webhookRole, undefined, webhookServiceAccount, namespace),
  ];
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items });
}

/** An API server's denial: its "... is forbidden: User ..." message, or a 403 status named as such. */
const AUTHORIZATION_ERROR = /forbidden|\b(?:HTTP|status|statusCode|code|answered)\W{0,3}403\b/i;
/** Authorization failures are logged at warn or above (services/logging writes the level's label). */
const WARN_OR_ABOVE = new Set<unknown>(['warn', 'error', 'fatal', 40, 50, 60]);

/** A time span (epoch milliseconds, inclusive) whose log lines are not counted. */
export interface IgnoredWindow {
  from: number;
  to: number;
}

/**
 * Log lines reporting an authorization error: JSON lines at warn level or above, and any other
 * (non-JSON) line, that name a denial. JSON lines whose `time` falls in an ignored window are skipped
 * (a restarting API server denies requests until its RBAC cache is filled, before /readyz).
 */
export function authorizationErrors(logText: string, ignored: readonly IgnoredWindow[] = []): string[] {
  return logText.split('\n').filter((line) => {
    if (!AUTHORIZATION_ERROR.test(line)) return false;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      return true;
    }
    if (typeof parsed !== 'object' || parsed === null) return true;
    const { level, time } = parsed as Record<string, unknown>;
    const at = typeof time === 'string' ? Date.parse(time) : Number.NaN;
    if (ignored.some((window) => at >= window.from && at <= window.to)) return false;
    return WARN_OR_ABOVE.has(level);
  });
}
