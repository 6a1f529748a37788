import path from 'node:path';
import type { KubernetesObject } from '../../../model/kubernetes';
import { renderFullText } from '../../../model/text';
import { fixture, loadFixtureObjects } from '../../../../test/support/yaml-fixtures';
import { ConstraintIndex } from '../../index/constraint-index';
import { Ingestor } from '../../index/ingest';
import { AdapterRegistry } from '../registry';

// The binding/policy pair through the real ingest layer: retention, re-evaluation and removal.

const fixtures = loadFixtureObjects(path.join(__dirname, 'fixtures/admissionpolicies.yaml'));
const policy = () => structuredClone(fixture(fixtures, 'require-labels'));
const binding = () => structuredClone(fixture(fixtures, 'require-labels-deny'));

const namespace = (name: string, labels: Record<string, string>): KubernetesObject => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name, labels },
});

function setUp() {
  const index = new ConstraintIndex();
  const ingestor = new Ingestor(index, new AdapterRegistry());
  ingestor.upsert(namespace('shop-prod', { env: 'prod' }));
  ingestor.upsert(namespace('shop-staging', { env: 'staging' }));
  const namesIn = (name: string) => index.constraintsForNamespace(name).map((constraint) => constraint.name);
  return { index, ingestor, namesIn };
}

describe('admissionpolicy through the ingest layer', () => {
  it('reports a binding that arrived before its policy once the policy arrives', () => {
    const { index, ingestor, namesIn } = setUp();
    expect(ingestor.upsert(binding())).toBe('admissionpolicy');
    expect(index.allConstraints()).toEqual([]);
    expect(ingestor.upsert(policy())).toBe('admissionpolicy');
    const [constraint, ...rest] = index.allConstraints();
    expect(rest).toHaveLength(0);
    expect(constraint).toMatchObject({ name: 'require-labels-deny', severity: 'Critical', effect: 'deny' });
    expect(constraint.id).toBe(
      'admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding//require-labels-deny#binding',
    );
    expect(namesIn('shop-prod')).toEqual(['require-labels-deny']);
    expect(namesIn('shop-staging')).toEqual([]);
    expect(ingestor.errors.totalFor('admissionpolicy')).toBe(0);
  });

  it('changes the binding constraint when its policy changes', () => {
    const { index, ingestor, namesIn } = setUp();
    ingestor.upsert(policy());
    ingestor.upsert(binding());
    const changed = policy();
    const spec = changed.spec as { matchConstraints: { namespaceSelector: unknown }; validations: unknown[] };
    spec.matchConstraints.namespaceSelector = { matchLabels: { env: 'staging' } };
    spec.validations = [{ expression: 'true', message: 'images must come from the internal registry' }];
    ingestor.upsert(changed);
    expect(namesIn('shop-prod')).toEqual([]);
    expect(namesIn('shop-staging')).toEqual(['require-labels-deny']);
    const [constraint] = index.allConstraints();
    expect(renderFullText(constraint.summary)).toMatch(/: images must come from the internal registry$/);
  });

  it('removes the binding constraint when its policy is deleted, and restores it when the policy returns', () => {
    const { index, ingestor } = setUp();
    ingestor.upsert(policy());
    ingestor.upsert(binding());
    expect(index.allConstraints()).toHaveLength(1);
    ingestor.delete(policy());
    expect(index.allConstraints()).toEqual([]);
    ingestor.upsert(policy());
    expect(index.allConstraints().map((constraint) => constraint.name)).toEqual(['require-labels-deny']);
  });

  it('removes the constraint when the binding is deleted', () => {
    const { index, ingestor } = setUp();
    ingestor.upsert(policy());
    ingestor.upsert(binding());
    ingestor.delete(binding());
    expect(index.allConstraints()).toEqual([]);
  });

  it('drops the binding constraint while its policy is malformed, and restores it once fixed', () => {
    const { index, ingestor } = setUp();
    ingestor.upsert(policy());
    ingestor.upsert(binding());
    const broken = policy();
    (broken.spec as { validations: unknown }).validations = 'not a list';
    ingestor.upsert(broken);
    expect(index.allConstraints()).toEqual([]);
    expect(ingestor.errors.totalFor('admissionpolicy')).toBeGreaterThan(0);
    expect(ingestor.errors.failingObjects().map((error) => error.message)).toEqual(
      expect.arrayContaining([
        'spec.validations must be a list',
        'bound ValidatingAdmissionPolicy "require-labels": spec.validations must be a list',
      ]),
    );
    ingestor.upsert(policy());
    expect(index.allConstraints().map((constraint) => constraint.name)).toEqual(['require-labels-deny']);
    expect(ingestor.errors.failingObjects()).toEqual([]);
  });

  it('applies the forewarn.io annotations of the binding', () => {
    const { index, ingestor } = setUp();
    const annotated = binding();
    annotated.metadata = {
      ...annotated.metadata,
      annotations: { 'forewarn.io/severity': 'Info', 'forewarn.io/contact': 'security@example.com' },
    };
    ingestor.upsert(policy());
    ingestor.upsert(annotated);
    const [constraint] = index.allConstraints();
    expect(constraint.severity).toBe('Info');
    expect(constraint.remediation.steps.find((step) => step.type === 'manual')?.contact).toBe(
      'security@example.com',
    );
  });
});
