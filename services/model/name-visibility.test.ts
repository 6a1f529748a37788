import type { Effect } from './api';
import type { SourceObject } from './constraint';
import { isConstraintNameVisible, namesItselfToCaller, viewerForConstraint } from './name-visibility';
import { objectName, renderText, text, type Viewer } from './text';

// The one naming rule (docs/decisions.md): a name is shown at full, in its own namespace, or when
// the policy prints it itself to the caller it rejects or warns.

const source = (
  apiVersion: string,
  kind: string,
  name: string,
  namespace: string | null = null,
): SourceObject => ({
  apiVersion,
  kind,
  name,
  namespace,
});
const summaryInShop: Viewer = { level: 'summary', namespace: 'shop' };

describe('namesItselfToCaller', () => {
  it.each([
    ['admissionregistration.k8s.io/v1', 'ValidatingAdmissionPolicyBinding', 'deny', true],
    ['admissionregistration.k8s.io/v1', 'ValidatingAdmissionPolicyBinding', 'warn', true],
    ['admissionregistration.k8s.io/v1', 'ValidatingAdmissionPolicyBinding', 'audit', false],
    ['kyverno.io/v1', 'ClusterPolicy', 'deny', true],
    ['kyverno.io/v1', 'ClusterPolicy', 'mutate', false],
    ['policies.kyverno.io/v1', 'ValidatingPolicy', 'deny', true],
    ['constraints.gatekeeper.sh/v1beta1', 'K8sRequiredLabels', 'deny', true],
    ['constraints.gatekeeper.sh/v1beta1', 'K8sRequiredLabels', 'audit', false],
    ['admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', 'deny', false],
    ['cilium.io/v2', 'CiliumClusterwideNetworkPolicy', 'deny', false],
    ['networking.k8s.io/v1', 'NetworkPolicy', 'deny', false],
  ] as const)('%s %s with effect %s: %s', (apiVersion, kind, effect, expected) => {
    expect(namesItselfToCaller({ source: source(apiVersion, kind, 'p'), effect: effect as Effect })).toBe(
      expected,
    );
  });
});

describe('viewerForConstraint', () => {
  const binding = {
    name: 'limits-prod',
    source: source('admissionregistration.k8s.io/v1', 'ValidatingAdmissionPolicyBinding', 'limits-prod'),
    effect: 'deny' as Effect,
    relatedSources: [source('admissionregistration.k8s.io/v1', 'ValidatingAdmissionPolicy', 'limits')],
  };
  const message = text`${objectName('limits', null)} bound by ${objectName('limits-prod', null)} reads params ${objectName('secret-params', 'platform')}`;

  it('shows the names the policy prints itself, and keeps every other foreign name hidden', () => {
    expect(isConstraintNameVisible(binding, summaryInShop)).toBe(true);
    expect(renderText(message, viewerForConstraint(binding, summaryInShop))).toBe(
      'limits bound by limits-prod reads params redacted',
    );
  });

  it('changes nothing for a policy that prints nothing to the caller', () => {
    const network = {
      name: 'block',
      source: source('cilium.io/v2', 'CiliumClusterwideNetworkPolicy', 'block'),
      effect: 'deny' as Effect,
    };
    expect(isConstraintNameVisible(network, summaryInShop)).toBe(false);
    expect(viewerForConstraint(network, summaryInShop)).toBe(summaryInShop);
    expect(
      isConstraintNameVisible(
        { ...network, source: { ...network.source, namespace: 'shop' } },
        summaryInShop,
      ),
    ).toBe(true);
  });
});
