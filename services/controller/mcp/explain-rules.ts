import type { Constraint } from '../../model/constraint';
import { messageNames, type MessageFacts } from './explain-facts';

// The rule table of the `explain` tool: which kinds of error message point at which constraints,
// and how strongly. Each rule recognises a message by patterns and scores every constraint of the
// namespace (0 or undefined: not a candidate); explain.ts ranks the scores. Reasons use only the
// caller's own text and what the viewer may see: rule details (ports, usage) only when visible.

export type ExplainCategory =
  | 'mesh-authorization'
  | 'mesh-connection'
  | 'dns'
  | 'network'
  | 'quota'
  | 'limit-range'
  | 'out-of-memory'
  | 'admission'
  | 'pod-security'
  | 'rbac';

export interface AssessContext {
  /** Ports, addresses and usage figures may be read and shown: `detailed` and `full`. */
  detailsVisible: boolean;
  /**
   * The viewer may see this constraint's name. Hidden names are never matched against the message:
   * ranking a redacted constraint first because the caller typed its name would confirm a guessed
   * name, which lookups refuse to do as well (constraint-view.ts).
   */
  nameVisible: boolean;
  /** The constraint's summary with every part shown; used for matching only, never returned. */
  fullSummary: string;
}

export interface Assessment {
  score: number;
  reasons: string[];
}

export interface ExplainRule {
  category: ExplainCategory;
  patterns: readonly RegExp[];
  /** Generic words ("forbidden"): the rule applies only when no other rule recognised the message. */
  fallbackOnly?: boolean;
  /** Forewarn cannot know this cause: say so instead of listing constraints. */
  outsideForewarn?: boolean;
  /** What this kind of message means, in one or two sentences. */
  meaning(facts: MessageFacts): string;
  assess?(constraint: Constraint, facts: MessageFacts, context: AssessContext): Assessment | undefined;
}

const isQuota = (constraint: Constraint) =>
  constraint.type === 'ResourceLimit' && constraint.source.kind === 'ResourceQuota';
const isLimitRange = (constraint: Constraint) =>
  constraint.type === 'ResourceLimit' && constraint.source.kind === 'LimitRange';
const isNetwork = (constraint: Constraint) =>
  constraint.type === 'NetworkEgress' || constraint.type === 'NetworkIngress';

function assessment(score: number, ...reasons: Array<string | undefined>): Assessment {
  return { score, reasons: reasons.filter((reason): reason is string => reason !== undefined) };
}

function mentionsPort(context: AssessContext, port: string): boolean {
  return new RegExp(`(^|[^0-9])${port}($|[^0-9])`).test(context.fullSummary);
}

/** Egress/ingress/mesh constraints for connection failures; the port refines it when visible. */
function assessConnection(constraint: Constraint, facts: MessageFacts, context: AssessContext) {
  const denies = constraint.effect === 'deny';
  let result: Assessment | undefined;
  if (constraint.type === 'NetworkEgress')
    result = assessment(
      3 + (denies ? 1 : 0),
      denies
        ? 'it denies egress from the pods it selects: their outgoing connections time out'
        : 'it allows egress only to listed destinations: connections to anything else time out',
    );
  else if (constraint.type === 'NetworkIngress')
    result = assessment(
      2 + (denies ? 1 : 0),
      'if the destination runs in this namespace, its ingress rules decide whether the connection is accepted',
    );
  else if (constraint.type === 'MeshPolicy')
    result = assessment(
      1 + (denies || constraint.effect === 'restrict' ? 1 : 0),
      'the service mesh can refuse or reset connections that its policies do not allow',
    );
  if (!result) return undefined;
  if (isNetwork(constraint) && context.detailsVisible && facts.port !== undefined) {
    if (mentionsPort(context, facts.port)) result.reasons.push(`its rules mention port ${facts.port}`);
    else if (constraint.effect === 'restrict') {
      result.score += 1;
      result.reasons.push(
        `its rules do not mention port ${facts.port}, so this connection is likely not allowed`,
      );
    }
  }
  if (facts.connectionRefused) result.score /= 2;
  return result;
}

function assessQuota(constraint: Constraint, facts: MessageFacts, context: AssessContext) {
  if (isLimitRange(constraint) && /must specify/i.test(facts.text))
    return assessment(
      1.5,
      'a LimitRange default would give the containers the requests and limits the quota demands',
    );
  if (!isQuota(constraint)) return undefined;
  const result = assessment(3, 'it is a ResourceQuota of the namespace');
  if (facts.quotaName !== undefined && context.nameVisible && constraint.source.name === facts.quotaName) {
    result.score += 3;
    result.reasons[0] = `the message names quota "${facts.quotaName}"`;
  }
  const limited = Object.keys(constraint.metrics ?? {});
  const named = facts.resourceNames.filter((resource) => limited.includes(resource));
  if (named.length > 0) {
    result.score += 1;
    result.reasons.push(`it limits ${named.join(', ')}, which the message names`);
    if (context.detailsVisible)
      for (const resource of named) {
        const metric = constraint.metrics?.[resource];
        if (metric)
          result.reasons.push(`${resource}: ${metric.used} of ${metric.hard} used (${metric.percent_used}%)`);
      }
  }
  if (constraint.severity === 'Critical') result.score += 0.5;
  return result;
}

function assessLimitRange(constraint: Constraint, facts: MessageFacts) {
  if (isLimitRange(constraint) && /must be less than or equal to \S+ limit/i.test(facts.text))
    return assessment(
      4,
      'it is a LimitRange of the namespace: its default limit is filled in for a container that sets none, and a request above it is invalid',
    );
  if (isLimitRange(constraint))
    return assessment(
      3,
      'it is a LimitRange of the namespace: it sets minimum, maximum and default requests and limits',
    );
  if (isQuota(constraint) && /must specify/i.test(facts.text))
    return assessment(2, 'a ResourceQuota that covers limits or requests makes every container specify them');
  return undefined;
}

/** Names in the message (webhook, policy, rule, Gatekeeper constraint) single out one constraint. */
function assessAdmission(constraint: Constraint, facts: MessageFacts, context: AssessContext) {
  if (constraint.type !== 'Admission') return undefined;
  const identifiers = [...new Set([constraint.name, ...constraint.name.split('/'), constraint.source.name])];
  const named = context.nameVisible
    ? identifiers.filter((identifier) => messageNames(facts, identifier))
    : [];
  const result = assessment(
    constraint.effect === 'deny' ? 2 : 1,
    constraint.effect === 'deny' ? 'it can reject requests at admission' : undefined,
  );
  if (named.length > 0) {
    result.score += 4 + (named.length - 1);
    // Segments of the name only: the full `policy/rule` rarely appears as such.
    const segments = named.filter((identifier) => !identifier.includes('/'));
    const shown = segments.length > 0 ? segments : named;
    result.reasons.unshift(`the message names ${shown.map((identifier) => `"${identifier}"`).join(' and ')}`);
  }
  for (const engine of ['gatekeeper', 'kyverno'])
    if (constraint.tags.includes(engine) && new RegExp(engine, 'i').test(facts.text)) {
      result.score += 1;
      result.reasons.push(`the message comes from ${engine === 'gatekeeper' ? 'Gatekeeper' : 'Kyverno'}`);
    }
  return result;
}

export const EXPLAIN_RULES: readonly ExplainRule[] = [
  {
    category: 'mesh-authorization',
    patterns: [/RBAC: access denied/i],
    meaning: () =>
      'The Istio proxy answered "RBAC: access denied": an AuthorizationPolicy rejected the request (this is the mesh, not Kubernetes RBAC).',
    assess: (constraint) => {
      if (constraint.type !== 'MeshPolicy') return undefined;
      if (constraint.source.kind !== 'AuthorizationPolicy')
        return assessment(0.5, 'a mesh policy of the namespace');
      return assessment(
        4 + (constraint.effect === 'deny' ? 1 : 0),
        constraint.effect === 'deny'
          ? 'it is an AuthorizationPolicy that denies matching requests'
          : 'it is an AuthorizationPolicy that allows only listed requests and denies the rest',
      );
    },
  },
  {
    category: 'mesh-connection',
    patterns: [/upstream connect error/i, /disconnect\/reset before headers/i, /connection termination/i],
    meaning: () =>
      'The Envoy proxy could not complete the connection upstream; in a mesh this is often mutual-TLS mode or a Sidecar egress restriction.',
    assess: (constraint) => {
      if (constraint.type === 'MeshPolicy') {
        const score =
          constraint.source.kind === 'PeerAuthentication'
            ? 3
            : constraint.source.kind === 'Sidecar'
              ? 2.5
              : 1.5;
        return assessment(score, `${constraint.source.kind} policies decide whether the proxies can connect`);
      }
      if (isNetwork(constraint)) return assessment(1, 'a network policy can also drop the connection');
      return undefined;
    },
  },
  {
    category: 'dns',
    patterns: [
      /no such host/i,
      /server misbehaving/i,
      /NXDOMAIN/,
      /temporary failure in name resolution/i,
      /\bENOTFOUND\b|\bEAI_AGAIN\b/,
      /lookup \S+ on \S+:53/i,
    ],
    meaning: () =>
      'A DNS lookup failed. Pods need egress to the cluster DNS (kube-dns, UDP and TCP port 53); an egress policy that does not allow it makes every lookup fail.',
    assess: (constraint, _facts, context) => {
      if (constraint.type !== 'NetworkEgress') return undefined;
      const result = assessment(
        3 + (constraint.effect === 'deny' ? 1 : 0),
        'it restricts egress, which DNS lookups need',
      );
      if (context.detailsVisible) {
        if (mentionsPort(context, '53')) {
          result.score -= 1;
          result.reasons.push('its rules mention port 53, so DNS may be allowed');
        } else if (constraint.effect === 'restrict') {
          result.score += 1;
          result.reasons.push('its rules do not mention port 53');
        }
      }
      return result;
    },
  },
  {
    category: 'network',
    patterns: [
      /i\/o timeout/i,
      /connection timed out|\bETIMEDOUT\b/i,
      /connection refused|\bECONNREFUSED\b/i,
      /no route to host|\bEHOSTUNREACH\b/i,
      /network is unreachable|\bENETUNREACH\b/i,
      /connection reset by peer|\bECONNRESET\b/i,
      /dial tcp|dial udp/i,
      /context deadline exceeded/i,
    ],
    meaning: (facts) =>
      facts.connectionRefused
        ? 'The connection was refused. That usually means nothing listens on that address and port (a Service without ready endpoints, a wrong port); network policies usually drop packets, which shows as a timeout, but some CNIs reject them.'
        : 'The connection did not get through. Network policies (and CNI or mesh policies) drop packets they do not allow, which shows as a timeout.',
    assess: assessConnection,
  },
  {
    category: 'quota',
    patterns: [/exceeded quota/i, /failed quota/i],
    meaning: (facts) =>
      `ResourceQuota admission rejected the object: creating it would exceed ${facts.quotaName ? `quota "${facts.quotaName}"` : 'a quota of the namespace'}${facts.resourceNames.length > 0 ? ` (${facts.resourceNames.join(', ')})` : ''}.`,
    assess: assessQuota,
  },
  {
    category: 'limit-range',
    patterns: [
      /must specify (?:limits|requests)/i,
      /(?:maximum|minimum) \S+ usage per (?:Container|Pod|PersistentVolumeClaim)/i,
      /(?:limit|request) to (?:request|limit) ratio/i,
      /must be less than or equal to \S+ limit/i,
    ],
    meaning: (facts) =>
      /must be less than or equal to \S+ limit/i.test(facts.text)
        ? 'The API server rejected a container whose request is above its limit. A container that sets a request but no limit gets the default limit of the namespace LimitRange first; a request above that default is then invalid: set a limit, or lower the request.'
        : 'The API server rejected the requests or limits of a container: a LimitRange bounds them (minimum, maximum, ratio), and a quota on limits or requests makes them mandatory.',
    assess: assessLimitRange,
  },
  {
    category: 'out-of-memory',
    patterns: [/OOMKilled/i, /out of memory/i, /exit code:? 137/i],
    meaning: () =>
      'The container was killed for exceeding its memory limit. A container that sets no limit gets the default of the namespace LimitRange, if there is one.',
    assess: (constraint) =>
      isLimitRange(constraint)
        ? assessment(2, 'its default memory limit applies to containers that set none')
        : undefined,
  },
  {
    category: 'pod-security',
    patterns: [/violates PodSecurity/i],
    meaning: (facts) =>
      `Pod Security admission, built into the API server, enforces the level in the namespace label pod-security.kubernetes.io/enforce${facts.quotedNames.length > 0 ? ` ("${facts.quotedNames[0]}")` : ''}. Forewarn does not index that label; change the pod to meet the level the message names. Admission policies that intercept pods are listed in case one of them enforces the same rules.`,
    assess: (constraint, facts, context) => {
      const result = assessAdmission(constraint, facts, context);
      if (result) result.score = Math.max(0.5, result.score - 1.5);
      return result;
    },
  },
  {
    category: 'admission',
    patterns: [
      /admission webhook/i,
      /failed calling webhook/i,
      /denied the request|denied request/i,
      /ValidatingAdmissionPolicy/i,
      /gatekeeper|kyverno/i,
      /validation error/i,
    ],
    meaning: (facts) => {
      const unreachable = /failed calling webhook "([^"]+)"/i.exec(facts.text)?.[1];
      if (unreachable)
        return `The API server could not call admission webhook "${unreachable}"; a webhook with failurePolicy Fail (or unset) rejects every request it intercepts while it is unreachable.`;
      const webhook = /admission webhook "([^"]+)"/i.exec(facts.text)?.[1];
      return webhook
        ? `Admission webhook "${webhook}" rejected the request; the policy behind it is the likely cause.`
        : 'An admission policy (webhook, ValidatingAdmissionPolicy or policy engine) rejected the request.';
    },
    assess: assessAdmission,
  },
  {
    category: 'rbac',
    patterns: [/\bRBAC\b/, /\bforbidden\b/i, /cannot \w+ resource/i, /\bUnauthorized\b/],
    fallbackOnly: true,
    outsideForewarn: true,
    meaning: () =>
      'This is an authorization (RBAC) denial by the API server: the user or service account lacks a permission. Forewarn indexes the policies that constrain workloads, not who may call the API. Check with `kubectl auth can-i <verb> <resource> -n <namespace>` and ask the namespace admin for a Role and RoleBinding.',
  },
];

/** The rules that recognise the message: specific ones first; generic ones only when none did. */
export function matchingRules(
  facts: MessageFacts,
  rules: readonly ExplainRule[] = EXPLAIN_RULES,
): ExplainRule[] {
  const matches = (rule: ExplainRule) => rule.patterns.some((pattern) => pattern.test(facts.text));
  const specific = rules.filter((rule) => !rule.fallbackOnly && matches(rule));
  return specific.length > 0 ? specific : rules.filter((rule) => rule.fallbackOnly && matches(rule));
}
