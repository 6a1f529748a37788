import { readdirSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { AdapterParseError, type Adapter } from '../../model/constraint';
import { ADAPTERS } from './registry';
import { canonicalJson } from './shared/scope-text';
import { pathsOf, renameKeyAt, replaceAt, valueAt } from '../../../test/support/mutate-object';
import { testAdapterContext } from '../../../test/support/render-constraint';
import { loadFixtureObjects } from '../../../test/support/yaml-fixtures';

// Defensive reading and determinism, checked by brute force on every adapter: any field of a
// fixture replaced by any value yields constraints or an AdapterParseError, never another
// exception, and the same object always yields the same constraints. (Values as JSON or YAML
// parsing produces them: null-prototype objects cannot come from a parsed manifest.)

/** Every fixture file of every adapter in the registry: `adapters/<name>/fixtures/*.yaml`. */
const cases: Array<[string, Adapter, string]> = ADAPTERS.flatMap((adapter) => {
  const directory = path.join(__dirname, adapter.name, 'fixtures');
  return readdirSync(directory)
    .filter((file) => file.endsWith('.yaml'))
    .map((file): [string, Adapter, string] => [
      `${adapter.name} (${file})`,
      adapter,
      path.join(directory, file),
    ]);
});

const PROTOTYPE_NAMES = Object.getOwnPropertyNames(Object.prototype);

describe.each(cases)('%s adapter on mutated fixtures', (_name, adapter, file) => {
  const objects = [...loadFixtureObjects(file).values()];
  const context = testAdapterContext(objects);
  const mutated = fc
    .constantFrom(...objects)
    .chain((object) =>
      fc.tuple(
        fc.constant(object),
        fc.constantFrom(...pathsOf(object).filter((at) => at.length > 0)),
        fc.anything(),
      ),
    );

  it('throws nothing but AdapterParseError', () => {
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

  // Tables keyed by text from a manifest (kinds, groups, actions, quota keys) must not answer with
  // Object.prototype's members: every string and every key becomes each of their names in turn.
  it('reads names of Object.prototype members as plain text', () => {
    const failures = new Set<string>();
    for (const object of objects) {
      for (const at of pathsOf(object).filter((at) => at.length > 0)) {
        const value = valueAt(object, at);
        for (const name of PROTOTYPE_NAMES) {
          const candidates = [renameKeyAt(object, at, name)];
          if (typeof value === 'string') candidates.push(replaceAt(object, at, name));
          for (const candidate of candidates) {
            try {
              adapter.toConstraints(candidate, context);
            } catch (error) {
              if (!(error instanceof AdapterParseError))
                failures.add(`${JSON.stringify(at)} as ${name}: ${String(error)}`);
            }
          }
        }
      }
    }
    expect([...failures]).toEqual([]);
  });

  it('yields the same constraints for the same object', () => {
    for (const object of objects) {
      const run = () => {
        try {
          return canonicalJson(adapter.toConstraints(structuredClone(object), context));
        } catch (error) {
          return error instanceof AdapterParseError ? `error: ${error.message}` : 'unexpected';
        }
      };
      expect(run()).toBe(run());
    }
  });
});
