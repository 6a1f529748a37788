import type { ConstraintDraft } from '../../model/constraint';
import type { KubernetesObject } from '../../model/kubernetes';
import { renderFullText } from '../../model/text';
import { evaluateVerdicts } from './evaluate';
import type { VerdictContext } from './types';

// Pod Security Admission verdicts for the `pod-security/<mode>` constraints of a Namespace.

function constraint(mode: string): ConstraintDraft {
  return {
    id: `pod-security-${mode}`,
    name: `pod-security/${mode}`,
    type: 'Admission',
    severity: mode === 'enforce' ? 'Critical' : 'Warning',
    effect: mode === 'enforce' ? 'deny' : 'warn',
    adapter: 'policyengine',
    source: { kind: 'Namespace', apiVersion: 'v1', name: 'team', namespace: null },
    scope: { kind: 'namespace', namespace: 'team' },
    tags: [],
    displayName: [`pod-security/${mode}`],
    summary: ['s'],
    remediationHint: ['h'],
    remediation: { summary: ['h'], steps: [] },
  };
}

function context(object: KubernetesObject, labels: Record<string, string>): VerdictContext {
  return {
    admitted: { object, operation: 'CREATE', namespace: 'team', namespaceLabels: labels },
    index: { sourceOf: () => undefined, find: () => undefined, listInNamespace: () => [] },
  };
}

const deployment: KubernetesObject = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'team' },
  spec: { template: { spec: { hostNetwork: true, containers: [{ name: 'web' }] } } },
};

describe('Pod Security Admission verdicts', () => {
  it('checks a controller through its pod template at the namespace level and version', () => {
    const [result] = evaluateVerdicts(
      [constraint('enforce')],
      context(deployment, {
        'pod-security.kubernetes.io/enforce': 'baseline',
        'pod-security.kubernetes.io/enforce-version': 'v1.29',
      }),
    );
    expect(result.verdict).toMatchObject({
      verdict: 'violates',
      rejects: 'pods',
      evidence: [{ path: 'spec.template.spec.hostNetwork', message: ['the pod sets hostNetwork: true'] }],
    });
    expect(renderFullText(result.verdict.rule ?? [])).toBe('PodSecurity "baseline:v1.29"');
  });

  it('passes a compliant pod and skips objects that create no pods', () => {
    const pod: KubernetesObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'a' }] },
    };
    const labels = { 'pod-security.kubernetes.io/warn': 'baseline' };
    expect(evaluateVerdicts([constraint('warn')], context(pod, labels))[0].verdict.verdict).toBe('passes');
    const service: KubernetesObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' } };
    expect(evaluateVerdicts([constraint('warn')], context(service, labels))).toEqual([]);
  });
});
