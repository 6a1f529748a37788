// What the adapters' unit tests share: the constraints of a named object of a YAML fixture file, the
// single constraint an object must yield, and the privacy check of rendered texts.
import type { AdapterContext, ConstraintDraft } from '../../services/model/constraint';
import type { KubernetesObject } from '../../services/model/kubernetes';
import type { Viewer } from '../../services/model/text';
import { renderConstraintTexts, testAdapterContext } from './render-constraint';
import { fixture, loadFixtureObjects } from './yaml-fixtures';

type ToConstraints = (object: KubernetesObject, context: AdapterContext) => ConstraintDraft[];

/** `constraintsOf(name)`: what `toConstraints` makes of the fixture named `name` (of a file or loaded). */
export function fixtureConstraints(
  toConstraints: ToConstraints,
  fixtureFile: string | Map<string, KubernetesObject>,
  context: AdapterContext = testAdapterContext(),
): (name: string) => ConstraintDraft[] {
  const fixtures = typeof fixtureFile === 'string' ? loadFixtureObjects(fixtureFile) : fixtureFile;
  return (name) => toConstraints(fixture(fixtures, name), context);
}

/** The one constraint of `constraints`; the test fails when there is none or more than one. */
export function onlyConstraint(constraints: readonly ConstraintDraft[]): ConstraintDraft {
  expect(constraints).toHaveLength(1);
  return constraints[0];
}

/** No text of any of `constraints`, rendered for `viewer`, contains any of `leaks`. */
export function expectNoLeaks(
  constraints: Iterable<ConstraintDraft>,
  viewer: Viewer,
  leaks: readonly string[],
): void {
  for (const constraint of constraints) {
    const rendered = renderConstraintTexts(constraint, viewer);
    for (const leak of leaks) expect(rendered).not.toContain(leak);
  }
}
