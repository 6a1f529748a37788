import type { Effect } from '../../../model/api';
import { detail, text, type Text } from '../../../model/text';
import { joinLimited } from '../../../model/summary-rules';
import { readRecord, readRecordList } from '../shared/object-fields';
import { readChoice, readRequiredString, scopeText } from '../shared/scope-text';
import { describeAuthorizationRule, matchesEveryRequest } from './istio-rules';
import type { MeshOutcome, MeshTarget } from './mesh-target';

// Istio AuthorizationPolicy outcomes: what DENY, ALLOW, CUSTOM and AUDIT policies mean for the pods
// they select, with and without rules.

const AUTHORIZATION_ACTIONS = ['ALLOW', 'DENY', 'AUDIT', 'CUSTOM'] as const;

/** What every outcome of one AuthorizationPolicy is phrased from. */
interface AuthorizationFacts {
  target: MeshTarget;
  policy: Text;
  pods: Text;
  ruleCount: number;
  described: Text;
  everyRequest: boolean;
  tags: string[];
}

function infoOutcome(facts: AuthorizationFacts, effect: Effect, summary: Text, hint: Text): MeshOutcome {
  return { severity: 'Info', effect, summary, remediationHint: hint, tags: facts.tags };
}

function denyOutcome(facts: AuthorizationFacts): MeshOutcome {
  const { policy, pods, everyRequest, tags } = facts;
  // A DENY policy denies what its rules match: without rules it matches nothing.
  if (facts.ruleCount === 0)
    return infoOutcome(
      facts,
      'deny',
      text`Istio ${policy} denies no request to ${pods}: it has no rules`,
      text`no action needed; ${policy} has no rules and denies nothing`,
    );
  return {
    severity: 'Critical',
    effect: 'deny',
    summary: everyRequest
      ? text`Istio ${policy} denies all requests to ${pods}`
      : text`Istio ${policy} denies requests to ${pods} that match: ${facts.described}`,
    remediationHint: text`make sure your requests to these pods do not match the denied sources and operations, or ask the owner of ${policy} to narrow it`,
    tags: everyRequest ? [...tags, 'deny-all'] : tags,
  };
}

function allowOutcome(facts: AuthorizationFacts): MeshOutcome {
  const { policy, pods, target, tags } = facts;
  // An ALLOW policy without rules allows nothing: Istio's documented "allow-nothing" policy.
  // It rejects every request as a DENY would, so it is Critical like a DENY.
  if (facts.ruleCount === 0)
    return {
      severity: 'Critical',
      effect: 'deny',
      summary: text`Istio ${policy} denies all requests to ${pods}: an ALLOW policy without rules allows nothing`,
      remediationHint: target.meshWide
        ? text`ask the mesh admins for an ALLOW AuthorizationPolicy covering the requests your workload must accept`
        : text`add an ALLOW AuthorizationPolicy ${scopeText(target.scope)} for the requests your workload must accept`,
      tags: [...tags, 'deny-all'],
    };
  // A rule matching every request (`rules: [{}]`) allows everything.
  if (facts.everyRequest)
    return infoOutcome(
      facts,
      'restrict',
      text`Istio ${policy} allows all requests to ${pods}`,
      text`no action needed; ${policy} allows every request`,
    );
  return {
    severity: 'Warning',
    effect: 'restrict',
    summary: text`Istio ${policy} allows only these requests to ${pods}, denying all others: ${facts.described}`,
    remediationHint: text`call these pods only as an allowed source with an allowed operation, or ask the owner of ${policy} to add a rule for your workload`,
    tags,
  };
}

function customOutcome(spec: Record<string, unknown>, facts: AuthorizationFacts): MeshOutcome {
  const { policy, pods } = facts;
  const provider = readRequiredString(readRecord(spec.provider, 'spec.provider').name, 'spec.provider.name');
  const authorizer = detail(provider, 'an external authorizer');
  if (facts.ruleCount === 0)
    return infoOutcome(
      facts,
      'restrict',
      text`Istio ${policy} sends no request to ${pods} to ${authorizer}: it has no rules`,
      text`no action needed; ${policy} has no rules`,
    );
  return {
    severity: 'Warning',
    effect: 'restrict',
    summary: text`Istio ${policy} lets external authorizer ${authorizer} decide requests to ${pods} that match: ${facts.described}`,
    remediationHint: text`make sure your requests pass external authorizer ${authorizer} called by ${policy}, or ask its owner`,
    tags: facts.tags,
  };
}

export function authorizationOutcome(spec: Record<string, unknown>, target: MeshTarget): MeshOutcome {
  const action = readChoice(spec.action, 'spec.action', AUTHORIZATION_ACTIONS, 'ALLOW');
  const rules = readRecordList(spec.rules, 'spec.rules');
  const facts: AuthorizationFacts = {
    target,
    policy: text`AuthorizationPolicy "${target.name}"`,
    pods: target.appliesTo,
    ruleCount: rules.length,
    described: joinLimited(
      rules.map((rule, index) => describeAuthorizationRule(rule, `spec.rules[${index}]`)),
      '; or ',
      2,
      'rule',
    ),
    everyRequest: rules.some(matchesEveryRequest),
    tags: ['mesh', 'istio', 'authorization', action.toLowerCase()],
  };
  switch (action) {
    case 'DENY':
      return denyOutcome(facts);
    case 'ALLOW':
      return allowOutcome(facts);
    case 'CUSTOM':
      return customOutcome(spec, facts);
    case 'AUDIT':
      return infoOutcome(
        facts,
        'audit',
        text`Istio ${facts.policy} audits (logs, never blocks) requests to ${facts.pods} that match: ${rules.length === 0 ? text`nothing` : facts.described}`,
        text`no action needed; ${facts.policy} only logs matching requests`,
      );
  }
}
