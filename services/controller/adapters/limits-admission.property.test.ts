import path from 'node:path';
import fc from 'fast-check';
import { AdapterParseError, type Adapter } from '../../model/constraint';
import type { KubernetesObject } from '../../model/kubernetes';
import { loadFixtureObjects } from '../../../test/support/yaml-fixtures';
import { testAdapterContext } from '../../../test/support/render-constraint';
import { admissionPolicyAdapter } from './admissionpolicy';
import { limitRangeAdapter } from './limitrange';
import { resourceQuotaAdapter } from './resourcequota';
import { webhookConfigurationAdapter } from './webhookconfig';

// Defensive reading, checked by brute force: any field of a valid fixture replaced by any value
// yields constraints or an AdapterParseError, never another exception. (Values as JSON or YAML
// parsing produces them: null-prototype objects cannot come from a parsed manifest.)

type Path = Array<string | number>;

function pathsOf(value: unknown, prefix: Path = []): Path[] {
  if (Array.isArray(value))
    return [prefix, ...value.flatMap((entry, index) => pathsOf(entry, [...prefix, index]))];
  if (typeof value === 'object' && value !== null)
    return [prefix, ...Object.entries(value).flatMap(([key, entry]) => pathsOf(entry, [...prefix, key]))];
  return [prefix];
}

function replaceAt(object: KubernetesObject, at: Path, replacement: unknown): KubernetesObject {
  if (at.length === 0) return replacement as KubernetesObject;
  const copy = structuredClone(object);
  let parent: Record<string | number, unknown> = copy;
  for (const key of at.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  parent[at[at.length - 1]] = replacement;
  return copy;
}

const cases: Array<[string, Adapter, string]> = [
  ['resourcequota', resourceQuotaAdapter, 'resourcequota/resourcequotas.yaml'],
  ['limitrange', limitRangeAdapter, 'limitrange/limitranges.yaml'],
  ['webhookconfig', webhookConfigurationAdapter, 'webhookconfig/webhookconfigurations.yaml'],
  ['admissionpolicy', admissionPolicyAdapter, 'admissionpolicy/admissionpolicies.yaml'],
];

describe.each(cases)('%s adapter on mutated fixtures', (_name, adapter, file) => {
  const objects = [...loadFixtureObjects(path.join(__dirname, 'fixtures', file)).values()];
  const context = testAdapterContext(objects);

  it('throws nothing but AdapterParseError', () => {
    const mutated = fc
      .constantFrom(...objects)
      .chain((object) =>
        fc.tuple(
          fc.constant(object),
          fc.constantFrom(...pathsOf(object).filter((at) => at.length > 0)),
          fc.anything(),
        ),
      );
    fc.assert(
      fc.property(mutated, ([object, at, replacement]) => {
        try {
          adapter.toConstraints(replaceAt(object, at, replacement), context);
        } catch (error) {
          if (!(error instanceof AdapterParseError)) throw error;
        }
      }),
      { numRuns: 2000 },
    );
  });
});
