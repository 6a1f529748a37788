import type { AdapterContext } from '../../model/constraint';
import type { KubernetesObject } from '../../model/kubernetes';
import { LINKERD_DEFAULT_INBOUND_POLICY_ANNOTATION } from '../../model/linkerd';
import { renderFullText } from '../../model/text';
import { linkerdNamespaceConstraints } from '../adapters/mesh/linkerd-namespace';
import { evaluateVerdicts } from './evaluate';
import type { VerdictContext } from './types';
import { unlimitedGuard } from './guard/evaluation-guard';

// The namespace's Linkerd default inbound policy against the admitted pods' own annotation, which
// Linkerd uses instead when it is set.

const adapterContext: AdapterContext = {
  defaultContact: 'platform team',
  ownWebhookName: 'forewarn',
  meshRootNamespace: 'linkerd',
  lookup: () => undefined,
  lookupAll: () => [],
};

const [namespaceDefault] = linkerdNamespaceConstraints(
  {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'mesh', annotations: { [LINKERD_DEFAULT_INBOUND_POLICY_ANNOTATION]: 'deny' } },
  },
  adapterContext,
);

function deployment(podAnnotations?: Record<string, string>): KubernetesObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'mesh' },
    spec: {
      template: {
        metadata: { labels: { app: 'web' }, ...(podAnnotations ? { annotations: podAnnotations } : {}) },
        spec: { containers: [{ name: 'web' }] },
      },
    },
  };
}

function context(object: KubernetesObject): VerdictContext {
  return {
    admitted: { object, operation: 'CREATE', namespace: 'mesh', namespaceLabels: {} },
    index: {
      sourceOf: () => undefined,
      find: () => undefined,
      listInNamespace: () => [],
      paramsOfKind: () => undefined,
    },
    guard: unlimitedGuard(),
  };
}

describe("Linkerd's namespace default inbound policy", () => {
  it('applies to pods that set no policy of their own', () => {
    expect(namespaceDefault.name).toBe('linkerd/default-inbound-policy');
    const [result] = evaluateVerdicts([namespaceDefault], context(deployment()));
    expect(result.verdict).toEqual({ verdict: 'applies', evidence: [] });
  });

  it("is not reported for pods that use Linkerd's permissive default themselves", () => {
    const own = { [LINKERD_DEFAULT_INBOUND_POLICY_ANNOTATION]: 'all-unauthenticated' };
    expect(evaluateVerdicts([namespaceDefault], context(deployment(own)))).toEqual([]);
  });

  it("names the pods' own policy when it is another restrictive one", () => {
    const own = { [LINKERD_DEFAULT_INBOUND_POLICY_ANNOTATION]: 'cluster-authenticated' };
    const [result] = evaluateVerdicts([namespaceDefault], context(deployment(own)));
    expect(result.verdict.verdict).toBe('applies');
    expect(renderFullText(result.verdict.reason ?? [])).toBe(
      'its pods set their own default inbound policy "cluster-authenticated", which Linkerd uses instead of the namespace\'s',
    );
  });
});
