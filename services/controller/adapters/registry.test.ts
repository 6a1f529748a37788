import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { ADAPTER_NAMES } from '../../model/api';
import { POLICY_SOURCE_KINDS, POLICY_SOURCE_NAMES } from '../../model/watched-kinds';
import { ADAPTERS, AdapterRegistry } from './registry';

// Adding a source is one folder, one registry line and its entry in the model's watched kinds; these
// checks fail until the registry, the model's names and the OpenAPI document agree.

const registered = ADAPTERS.map((adapter) => adapter.name);

describe('the adapter registry is the list of sources', () => {
  it('registers one adapter per policy source of the model, and nothing else', () => {
    expect([...registered].sort()).toEqual([...POLICY_SOURCE_NAMES].sort());
    expect(new Set(registered).size).toBe(registered.length);
  });

  it('routes each adapter exactly the kinds and groups the model says it watches', () => {
    for (const adapter of ADAPTERS) {
      const declared = POLICY_SOURCE_KINDS[adapter.name];
      expect(adapter.kinds).toEqual(declared.kinds);
      expect(adapter.dynamicGroups ?? []).toEqual(declared.dynamicGroups ?? []);
    }
    const registry = new AdapterRegistry(ADAPTERS);
    for (const { adapter, kind } of registry.allKinds())
      expect(registry.adapterFor(kind.group, kind.kind)).toBe(adapter);
  });

  it('names every registered adapter, and missingresource, in the model and in docs/openapi.yaml', () => {
    expect([...ADAPTER_NAMES].sort()).toEqual([...registered, 'missingresource'].sort());
    const openapi = parse(readFileSync(path.join(__dirname, '../../../docs/openapi.yaml'), 'utf8')) as {
      components: { schemas: { AdapterName: { enum: string[] } } };
    };
    expect(openapi.components.schemas.AdapterName.enum).toEqual([...ADAPTER_NAMES]);
  });
});
