import path from 'node:path';
import { ConstraintIndex } from '../index/constraint-index';
import { AdapterRegistry } from '../adapters/registry';
import { Ingestor } from '../index/ingest';
import { buildNamespaceReport } from '../views/report';
import { buildConstraintList } from '../views/constraint-list';
import { renderFullText, renderText } from '../../model/text';
import type { KubernetesObject } from '../../model/kubernetes';
import { fixture, loadFixtureObjects } from '../../../test/support/yaml-fixtures';
import { MissingResourceTracker } from './tracker';
import type { MissingRuleName } from './finding';
import { prospectiveFindingsForObject } from './prospective';

const objects = loadFixtureObjects(path.join(__dirname, 'fixtures/companions.yaml'));
const namespaceObject = fixture(objects, 'shop');
const storefront = fixture(objects, 'storefront');
const billing = fixture(objects, 'billing');
const crds = [
  'clusterissuers.cert-manager.io',
  'servicemonitors.monitoring.coreos.com',
  'peerauthentications.security.istio.io',
].map((name) => fixture(objects, name));
const companions = {
  issuer: fixture(objects, 'letsencrypt-prod'),
  service: fixture(objects, 'storefront-svc'),
  serviceMonitor: fixture(objects, 'shop-services'),
  podDisruptionBudget: fixture(objects, 'billing-pdb'),
  peerAuthentication: fixture(objects, 'default'),
};

function setup(options: { debounceMs?: number; disabled?: MissingRuleName[]; now?: () => Date } = {}) {
  const index = new ConstraintIndex();
  const ingestor = new Ingestor(index, new AdapterRegistry(), undefined, undefined, options.now);
  const tracker = new MissingResourceTracker(
    index,
    {
      debounceMs: options.debounceMs ?? 0,
      disabledRules: new Set(options.disabled ?? []),
      meshRootNamespace: 'istio-system',
      defaultContact: 'platform@example.com',
      canSee: () => true,
      evaluationDelayMs: 60_000,
    },
    options.now,
  );
  ingestor.onChange((object, removed) => tracker.observe(object, removed));
  const apply = (...list: KubernetesObject[]) => {
    for (const object of list) ingestor.upsert(object);
    tracker.evaluate();
  };
  const remove = (object: KubernetesObject) => {
    ingestor.delete(object);
    tracker.evaluate();
  };
  const missingNames = () =>
    index
      .constraintsForNamespace('shop')
      .filter((constraint) => constraint.type === 'MissingResource')
      .map((constraint) => constraint.name)
      .sort();
  return { index, tracker, apply, remove, missingNames };
}

afterEach(() => jest.useRealTimers());

describe('missing companion resources', () => {
  it('reports every absent companion with the naming rule, and none once they are present', () => {
    const { apply, missingNames, index } = setup();
    apply(namespaceObject, ...crds, storefront, billing);
    expect(missingNames()).toEqual([
      'missing-clusterissuer-storefront',
      'missing-peerauthentication-shop',
      'missing-poddisruptionbudget-billing',
      'missing-podmonitor-storefront',
    ]);
    const issuer = index
      .constraintsForNamespace('shop')
      .find((constraint) => constraint.name === 'missing-clusterissuer-storefront');
    expect(issuer).toMatchObject({
      severity: 'Critical',
      effect: 'missing',
      type: 'MissingResource',
      source: { kind: 'Deployment', name: 'storefront' },
    });
    expect(renderFullText(issuer?.summary ?? [])).toContain(
      'ClusterIssuer "letsencrypt-prod" (cert-manager.io/v1)',
    );
    const declared = index
      .constraintsForNamespace('shop')
      .find((constraint) => constraint.name === 'missing-poddisruptionbudget-billing');
    expect(declared?.severity).toBe('Warning');
    expect(renderFullText(declared?.summary ?? [])).toContain('billing must survive node drains');
    apply(...Object.values(companions));
    expect(missingNames()).toEqual([]);
  });

  it('gives a manifest template of the missing object as a remediation step', () => {
    const { apply, index } = setup();
    apply(namespaceObject, ...crds, storefront);
    const issuer = index
      .constraintsForNamespace('shop')
      .find((constraint) => constraint.name === 'missing-clusterissuer-storefront');
    const command = renderFullText(issuer?.remediation.steps[0].command ?? []);
    expect(command).toContain('kind: ClusterIssuer');
    expect(command).toContain('name: letsencrypt-prod');
    expect(
      renderText(issuer?.remediation.steps[0].command ?? [], { level: 'summary', namespace: 'shop' }),
    ).not.toContain('kind: ClusterIssuer');
  });

  it('names the CRD when a referenced kind is not installed', () => {
    const { apply, missingNames, index } = setup();
    apply(namespaceObject, storefront);
    expect(missingNames()).toEqual([
      'missing-crd-clusterissuer-storefront',
      'missing-crd-peerauthentication-shop',
    ]);
    const crd = index
      .constraintsForNamespace('shop')
      .find((constraint) => constraint.name === 'missing-crd-clusterissuer-storefront');
    expect(renderFullText(crd?.summary ?? [])).toContain('clusterissuers.cert-manager.io');
  });

  it('skips the monitoring rule entirely when no monitoring CRD is served', () => {
    const { apply, missingNames } = setup();
    apply(namespaceObject, crds[0], storefront, companions.issuer);
    expect(missingNames()).not.toContain('missing-podmonitor-storefront');
  });

  it('clears a finding when the companion appears later, and again when it is deleted', () => {
    const { apply, remove, missingNames } = setup();
    apply(
      namespaceObject,
      ...crds,
      storefront,
      companions.service,
      companions.serviceMonitor,
      companions.peerAuthentication,
    );
    expect(missingNames()).toEqual(['missing-clusterissuer-storefront']);
    apply(companions.issuer);
    expect(missingNames()).toEqual([]);
    remove(companions.issuer);
    expect(missingNames()).toEqual(['missing-clusterissuer-storefront']);
    remove(storefront);
    expect(missingNames()).toEqual([]);
  });

  it('reports only after the debounce, so a rollout creating both in a row is never reported', () => {
    let now = 1_000_000;
    const { apply, missingNames, tracker } = setup({ debounceMs: 60_000, now: () => new Date(now) });
    apply(
      namespaceObject,
      ...crds,
      companions.peerAuthentication,
      companions.service,
      companions.serviceMonitor,
      storefront,
    );
    expect(missingNames()).toEqual([]);
    now += 30_000;
    apply(companions.issuer);
    now += 60_000;
    tracker.evaluate();
    expect(missingNames()).toEqual([]);
    const { remove } = { remove: (object: KubernetesObject) => tracker.observe(object, true) };
    remove(companions.issuer);
    tracker.evaluate();
    expect(missingNames()).toEqual([]);
    now += 60_001;
    tracker.evaluate();
    expect(missingNames()).toEqual(['missing-clusterissuer-storefront']);
  });

  it('turns rules off by flag', () => {
    const { apply, missingNames } = setup({ disabled: ['certificate-issuer', 'mesh-mtls', 'crd'] });
    apply(namespaceObject, storefront, billing);
    expect(missingNames()).toEqual(['missing-poddisruptionbudget-billing']);
  });

  it('surfaces findings in reports and in the webhook list, and for an object not in the cluster yet', () => {
    const { apply, index, tracker } = setup();
    apply(namespaceObject, ...crds, companions.peerAuthentication);
    const report = buildNamespaceReport(index, 'shop', 'summary', new Date());
    expect(report.constraints.filter((entry) => entry.type === 'MissingResource')).toEqual([]);
    const prospective = prospectiveFindingsForObject(tracker, storefront, 'shop');
    const list = buildConstraintList(
      index,
      {
        namespace: 'shop',
        resource: { group: 'apps', resource: 'deployments' },
        labels: { app: 'storefront' },
      },
      prospective,
    );
    const missing = list.constraints.filter((entry) => entry.constraintType === 'MissingResource');
    expect(missing.map((entry) => [entry.name, entry.severity])).toEqual([
      ['missing-clusterissuer-storefront', 'Critical'],
      ['missing-podmonitor-storefront', 'Warning'],
    ]);
    apply(storefront);
    expect(buildNamespaceReport(index, 'shop', 'summary', new Date()).criticalCount).toBe(1);
  });
});
