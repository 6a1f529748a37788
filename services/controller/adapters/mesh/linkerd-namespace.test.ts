import { AdapterParseError } from '../../../model/constraint';
import type { KubernetesObject } from '../../../model/kubernetes';
import { renderFullText, renderText } from '../../../model/text';
import { ConstraintIndex } from '../../index/constraint-index';
import { Ingestor } from '../../index/ingest';
import { testAdapterContext } from '../../../../test/support/render-constraint';
import { AdapterRegistry } from '../registry';
import { linkerdNamespaceConstraints } from './linkerd-namespace';

const namespace = (
  annotations: Record<string, string>,
  labels: Record<string, string> = {},
): KubernetesObject => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name: 'shop', uid: 'ns-shop', annotations, labels },
});
const POLICY = 'config.linkerd.io/default-inbound-policy';

describe("Linkerd's default inbound policy annotation on namespaces", () => {
  it.each([
    ['deny', 'Critical', 'deny'],
    ['all-authenticated', 'Warning', 'require'],
    ['cluster-authenticated', 'Warning', 'require'],
    ['cluster-unauthenticated', 'Warning', 'restrict'],
    ['audit', 'Info', 'audit'],
  ])('reads %s as %s %s', (policy, severity, effect) => {
    const [constraint, ...rest] = linkerdNamespaceConstraints(
      namespace({ [POLICY]: policy }),
      testAdapterContext(),
    );
    expect(rest).toHaveLength(0);
    expect(constraint).toMatchObject({
      name: 'linkerd/default-inbound-policy',
      type: 'MeshPolicy',
      severity,
      effect,
      adapter: 'mesh',
      source: { kind: 'Namespace', name: 'shop', namespace: 'shop' },
    });
  });

  it("yields nothing for Linkerd's own default or no annotation, and rejects unknown values", () => {
    expect(
      linkerdNamespaceConstraints(namespace({ [POLICY]: 'all-unauthenticated' }), testAdapterContext()),
    ).toEqual([]);
    expect(linkerdNamespaceConstraints(namespace({}), testAdapterContext())).toEqual([]);
    expect(() =>
      linkerdNamespaceConstraints(namespace({ [POLICY]: 'nobody' }), testAdapterContext()),
    ).toThrow(AdapterParseError);
  });

  it('says what happens, naming the namespace only to its own viewer', () => {
    const [constraint] = linkerdNamespaceConstraints(namespace({ [POLICY]: 'deny' }), testAdapterContext());
    expect(renderFullText(constraint.summary)).toBe(
      `Linkerd's default inbound policy "deny" in shop: the proxies of meshed pods deny all traffic to ports that no Linkerd Server and authorization open`,
    );
    expect(renderText(constraint.summary, { level: 'summary', namespace: 'other' })).not.toContain('shop');
  });

  it('sits beside Pod Security Admission on the same Namespace, and both leave with it', () => {
    const index = new ConstraintIndex();
    const ingestor = new Ingestor(index, new AdapterRegistry());
    const object = namespace({ [POLICY]: 'deny' }, { 'pod-security.kubernetes.io/enforce': 'baseline' });
    ingestor.upsert(object);
    const names = () =>
      index
        .constraintsForNamespace('shop')
        .map((constraint) => constraint.name)
        .sort();
    expect(names()).toEqual(['linkerd/default-inbound-policy', 'pod-security/enforce']);
    ingestor.upsert(
      namespace({ [POLICY]: 'bad value' }, { 'pod-security.kubernetes.io/enforce': 'baseline' }),
    );
    expect(names()).toEqual(['pod-security/enforce']);
    expect(ingestor.errors.failingFor('mesh')).toBe(1);
    ingestor.delete(object);
    expect(names()).toEqual([]);
    expect(ingestor.errors.failingFor('mesh')).toBe(0);
  });
});
