import type { AdapterContext, ConstraintDraft } from '../../model/constraint';
import type { KubernetesObject } from '../../model/kubernetes';
import type { PodSecurityDefaults } from '../../model/pod-security';
import { linkerdNamespaceConstraints } from '../adapters/mesh/linkerd-namespace';
import { podSecurityToConstraints } from '../adapters/podsecurity/podsecurity';
import { renderFullText } from '../../model/text';
import { evaluateVerdicts } from './evaluate';
import type { VerdictContext } from './types';
import { unlimitedGuard } from './guard/evaluation-guard';

// Pod Security Admission verdicts for the `pod-security/<mode>` constraints of a Namespace.

const adapterContext: AdapterContext = {
  defaultContact: 'platform team',
  ownWebhookName: 'forewarn',
  meshRootNamespace: 'linkerd',
  lookup: () => undefined,
  lookupAll: () => [],
};

/** The namespace's constraints as the podsecurity adapter (and Linkerd's namespace reader) build them. */
function namespaceConstraints(
  metadata: NonNullable<KubernetesObject['metadata']>,
  podSecurityDefaults?: PodSecurityDefaults,
): ConstraintDraft[] {
  const namespace: KubernetesObject = {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'team', ...metadata },
  };
  return [
    ...podSecurityToConstraints(namespace, { ...adapterContext, podSecurityDefaults }),
    ...linkerdNamespaceConstraints(namespace, adapterContext),
  ];
}

function constraint(mode: string, labels: Record<string, string>): ConstraintDraft {
  const found = namespaceConstraints({ labels }).find((each) => each.name === `pod-security/${mode}`);
  if (!found) throw new Error(`no pod-security/${mode} constraint for ${JSON.stringify(labels)}`);
  return found;
}

function context(object: KubernetesObject, labels: Record<string, string>): VerdictContext {
  return {
    admitted: { object, operation: 'CREATE', namespace: 'team', namespaceLabels: labels },
    index: {
      sourceOf: () => undefined,
      find: () => undefined,
      listInNamespace: () => [],
      paramsOfKind: () => undefined,
    },
    guard: unlimitedGuard(),
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
    const labels = {
      'pod-security.kubernetes.io/enforce': 'baseline',
      'pod-security.kubernetes.io/enforce-version': 'v1.29',
    };
    const [result] = evaluateVerdicts([constraint('enforce', labels)], context(deployment, labels));
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
    const warn = constraint('warn', labels);
    expect(evaluateVerdicts([warn], context(pod, labels))[0].verdict.verdict).toBe('passes');
    const service: KubernetesObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' } };
    expect(evaluateVerdicts([warn], context(service, labels))).toEqual([]);
  });

  it("keeps the cluster default, an invalid level and Linkerd's constraint of the same Namespace", () => {
    // The namespace sets no enforce label (the cluster default baseline:v1.30 applies), an invalid
    // warn level (Pod Security Admission applies restricted) and Linkerd's default inbound policy.
    const metadata = {
      labels: { 'pod-security.kubernetes.io/warn': 'strict' },
      annotations: { 'config.linkerd.io/default-inbound-policy': 'deny' },
    };
    const constraints = namespaceConstraints(metadata, { enforce: { level: 'baseline', version: 'v1.30' } });
    const privileged: KubernetesObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'team' },
      spec: { containers: [{ name: 'a', securityContext: { privileged: true } }] },
    };
    const results = evaluateVerdicts(constraints, context(privileged, metadata.labels));
    const byName = Object.fromEntries(results.map((result) => [result.constraint.name, result.verdict]));
    expect(Object.keys(byName).sort()).toEqual([
      'linkerd/default-inbound-policy',
      'pod-security/enforce',
      'pod-security/warn',
    ]);
    expect(byName['linkerd/default-inbound-policy']).toEqual({ verdict: 'applies', evidence: [] });
    expect(byName['pod-security/enforce']).toMatchObject({
      verdict: 'violates',
      rejects: 'object',
      evidence: [{ path: 'spec.containers[0].securityContext.privileged' }],
    });
    expect(renderFullText(byName['pod-security/enforce'].rule ?? [])).toBe('PodSecurity "baseline:v1.30"');
    // restricted also asks for runAsNonRoot, seccomp, dropped capabilities and no privilege escalation.
    expect(byName['pod-security/warn'].verdict).toBe('violates');
    expect(byName['pod-security/warn'].evidence.length).toBeGreaterThan(1);
    expect(renderFullText(byName['pod-security/warn'].rule ?? [])).toBe('PodSecurity "restricted:latest"');
  });

  it('reports nothing for an exempt namespace and lets pods of an exempt runtime class pass', () => {
    const labels = { 'pod-security.kubernetes.io/enforce': 'baseline' };
    const namespace: KubernetesObject = {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'team', labels },
    };
    const exemptions = { namespaces: ['team'], runtimeClasses: [] };
    expect(
      podSecurityToConstraints(namespace, { ...adapterContext, podSecurityExemptions: exemptions }),
    ).toEqual([]);
    const [enforce] = podSecurityToConstraints(namespace, {
      ...adapterContext,
      podSecurityExemptions: { namespaces: ['other'], runtimeClasses: ['gvisor'] },
    });
    const sandboxed: KubernetesObject = {
      ...deployment,
      spec: {
        template: { spec: { runtimeClassName: 'gvisor', hostNetwork: true, containers: [{ name: 'web' }] } },
      },
    };
    const [exempt] = evaluateVerdicts([enforce], context(sandboxed, labels));
    expect(exempt.verdict.verdict).toBe('passes');
    expect(renderFullText(exempt.verdict.reason ?? [])).toBe(
      'its runtime class gvisor is exempt from Pod Security Admission',
    );
    // Another runtime class is not exempt: the same template is checked.
    const otherTemplate: KubernetesObject = {
      ...deployment,
      spec: {
        template: { spec: { runtimeClassName: 'kata', hostNetwork: true, containers: [{ name: 'web' }] } },
      },
    };
    expect(evaluateVerdicts([enforce], context(otherTemplate, labels))[0].verdict.verdict).toBe('violates');
  });
});
