import path from 'node:path';
import type { KubernetesObject } from '../../../model/kubernetes';
import { loadFixtureObjects } from '../../../../test/support/yaml-fixtures';
import { opaBinary } from '../../../../test/support/opa-binary';
import { indexObjects } from '../../../../test/support/controller-fixtures';
import { buildAdmissionCheck } from '../admission-check';
import { regoEngine } from './rego-engine';

// The second Gatekeeper suite of the fidelity tier (test/fidelity/gatekeeper-selectors/): match by
// the object's own labels and its namespace's labels, OPA built-ins the Wasm SDK leaves to its
// host, and a dryrun constraint. gator's answers for the same suite: test/fidelity/gatekeeper.test.ts.

const suite = path.join(__dirname, '../../../../test/fidelity/gatekeeper-selectors');
const load = (file: string) => [...loadFixtureObjects(path.join(suite, file)).values()];
const policies = [...load('templates.yaml'), ...load('constraints.yaml')];
const workloads = load('workloads.yaml');

function workload(name: string): KubernetesObject {
  const found = workloads.find((object) => object.metadata?.name === name);
  if (!found) throw new Error(`no workload ${name}`);
  return found;
}

/** Constraint name → verdict (with the reason of an unknown one) for one object. */
function verdicts(objects: readonly KubernetesObject[], object: KubernetesObject): Record<string, string> {
  const { index } = indexObjects([...objects]);
  return Object.fromEntries(
    buildAdmissionCheck(index, { object, operation: 'CREATE' })
      .constraints.filter((entry) => entry.sourceApiVersion.startsWith('constraints.gatekeeper.sh/'))
      .map((entry) => [
        entry.name,
        entry.verdict === 'unknown' ? `unknown: ${entry.reason ?? ''}` : entry.verdict,
      ]),
  );
}

const everything = [...policies, ...workloads];

beforeAll(async () => {
  regoEngine.configure(opaBinary());
  for (const object of workloads.filter((entry) => entry.kind !== 'Namespace')) verdicts(everything, object);
  await regoEngine.settled();
}, 900_000);

describe('Gatekeeper match by labels and namespace labels', () => {
  it("selects a Deployment by its own labels, not its pods'", () => {
    // checkout: the Deployment is tier api (its pods tier batch); crawler: the reverse.
    expect(verdicts(everything, workload('checkout'))['no-floating-tags-on-served-tiers']).toBe('violates');
    expect(verdicts(everything, workload('crawler'))['no-floating-tags-on-served-tiers']).toBeUndefined();
  });

  it("reads the namespace's labels from the index for namespaceSelector, In and NotIn", () => {
    expect(verdicts(everything, workload('experiment'))).toEqual({
      'no-floating-tags-on-served-tiers': 'violates',
    });
    expect(verdicts(everything, workload('ledger'))).toEqual({
      'oncall-annotation-outside-sandboxes': 'violates',
    });
    expect(verdicts(everything, workload('catalogue'))).toEqual({
      'no-floating-tags-on-served-tiers': 'passes',
      'oncall-annotation-outside-sandboxes': 'passes',
      'registries-for-prod': 'passes',
    });
  });

  it('is unknown, saying why, where only the namespaceSelector decides and the namespace is not known', () => {
    const withoutNamespaces = [...policies, ...workloads.filter((object) => object.kind !== 'Namespace')];
    const undecided = expect.stringMatching(
      /^unknown: its namespaceSelector decides whether it applies, and namespace "reports" is not known/,
    ) as string;
    expect(verdicts(withoutNamespaces, workload('ledger'))).toEqual({
      'oncall-annotation-outside-sandboxes': undecided,
      'registries-for-prod': undecided,
    });
    // The labelSelector fails on the object itself: not listed, known namespace or not.
    expect(
      verdicts(withoutNamespaces, workload('crawler'))['no-floating-tags-on-served-tiers'],
    ).toBeUndefined();
  });

  it('runs strings.any_prefix_match and any_suffix_match in compiled templates', () => {
    const checkout = verdicts(everything, workload('checkout'));
    expect(checkout['registries-for-prod']).toBe('violates');
    // The exempt prefix keeps the debug image out of the tag rule.
    expect(verdicts(everything, workload('debug-shell'))['no-floating-tags-on-served-tiers']).toBe('passes');
    expect(verdicts(everything, workload('scratch'))['no-floating-tags-on-served-tiers']).toBe('violates');
  });

  it('gives a dryrun constraint its verdict like any other', () => {
    expect(verdicts(everything, workload('debug-shell'))['cost-centre-dry-run']).toBe('violates');
    expect(verdicts(everything, workload('invoice-run'))['cost-centre-dry-run']).toBe('passes');
    expect(verdicts(everything, workload('probe'))['cost-centre-dry-run']).toBeUndefined();
  });
});
