import type { KubernetesObject } from '../../../model/kubernetes';
import { ConstraintIndex } from '../../index/constraint-index';
import { Ingestor } from '../../index/ingest';
import { AdapterRegistry } from '../registry';

// Templates and the Config through the real ingest layer: kept as sources, parse errors counted,
// and the Config's webhook exemptions taken out of every constraint's scope, now and on change.

const template = (rego: unknown = 'package k8srequiredlabels\nviolation[{"msg": "x"}] { true }') => ({
  apiVersion: 'templates.gatekeeper.sh/v1',
  kind: 'ConstraintTemplate',
  metadata: { name: 'k8srequiredlabels' },
  spec: {
    crd: { spec: { names: { kind: 'K8sRequiredLabels' } } },
    targets: [{ target: 'admission.k8s.gatekeeper.sh', rego }],
  },
});

const constraint: KubernetesObject = {
  apiVersion: 'constraints.gatekeeper.sh/v1beta1',
  kind: 'K8sRequiredLabels',
  metadata: { name: 'must-have-owner' },
  spec: { match: { excludedNamespaces: ['kube-system'] }, parameters: { labels: ['owner'] } },
};

const config = (processes: string[], excludedNamespaces: string[]) => ({
  apiVersion: 'config.gatekeeper.sh/v1alpha1',
  kind: 'Config',
  metadata: { name: 'config', namespace: 'gatekeeper-system' },
  spec: { match: [{ excludedNamespaces, processes }] },
});

function setUp() {
  const index = new ConstraintIndex();
  const ingestor = new Ingestor(index, new AdapterRegistry());
  for (const name of ['shop', 'legacy-apps', 'kube-system'])
    ingestor.upsert({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  const namespacesOf = () =>
    ['shop', 'legacy-apps', 'kube-system'].filter((name) => index.constraintsForNamespace(name).length > 0);
  return { index, ingestor, namespacesOf };
}

describe('Gatekeeper templates and Config', () => {
  it('keeps a template as a source the verdict engine finds, with no constraint of its own', () => {
    const { index, ingestor } = setUp();
    expect(ingestor.upsert(template())).toBe('policyengine');
    expect(index.allConstraints()).toEqual([]);
    expect(
      index.findSource('templates.gatekeeper.sh', 'ConstraintTemplate', null, 'k8srequiredlabels'),
    ).toBeDefined();
    expect(ingestor.errors.totalFor('policyengine')).toBe(0);
  });

  it('counts a template without code for the admission target as a parse error', () => {
    const { ingestor } = setUp();
    ingestor.upsert(template(''));
    expect(ingestor.errors.failingObjects()[0]?.message).toMatch(/no Rego or K8sNativeValidation/);
    ingestor.upsert(template(42));
    expect(ingestor.errors.failingObjects()[0]?.message).toMatch(/rego must be a string/);
  });

  it("takes the Config's webhook exemptions out of every constraint's scope, whatever the order", () => {
    const { ingestor, namespacesOf } = setUp();
    ingestor.upsert(constraint);
    expect(namespacesOf()).toEqual(['shop', 'legacy-apps']);
    ingestor.upsert(config(['webhook'], ['legacy-*']));
    expect(namespacesOf()).toEqual(['shop']);
    // Exemptions from audit only do not keep the webhook away.
    ingestor.upsert(config(['audit', 'sync'], ['legacy-*']));
    expect(namespacesOf()).toEqual(['shop', 'legacy-apps']);
    ingestor.upsert(config(['*'], ['shop']));
    expect(namespacesOf()).toEqual(['legacy-apps']);
    ingestor.delete(config(['*'], ['shop']));
    expect(namespacesOf()).toEqual(['shop', 'legacy-apps']);
  });

  it('ignores a Config not named config, and counts a malformed one as a parse error', () => {
    const { ingestor, namespacesOf } = setUp();
    ingestor.upsert({
      ...config(['*'], ['shop']),
      metadata: { name: 'other', namespace: 'gatekeeper-system' },
    });
    ingestor.upsert(constraint);
    expect(namespacesOf()).toEqual(['shop', 'legacy-apps']);
    ingestor.upsert({ ...config(['*'], ['shop']), spec: { match: [{ processes: 'webhook' }] } });
    expect(ingestor.errors.failingFor('policyengine')).toBe(1);
  });
});
