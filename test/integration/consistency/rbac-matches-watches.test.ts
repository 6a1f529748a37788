// The controller's ClusterRole (infra) against what the controller really watches (its adapter
// registry, inventory and companion candidates, resolved through discovery as at run time): every
// watched resource is readable, and the role grants nothing the controller does not watch.
import { controllerRules } from '../../../infra/rbac';
import { ADAPTERS, AdapterRegistry } from '../../../services/controller/adapters/registry';
import {
  candidatesOf,
  COMPANION_CANDIDATES,
  resolveWatchTargets,
  type DiscoveryDocument,
  type ServedResource,
} from '../../../services/controller/sources/cluster/discovery';
import type { AdapterName } from '../../../services/model/api';
import { pluralOfKind } from '../../../services/model/resources';

const registry = new AdapterRegistry(ADAPTERS);
// As runtime.ts builds the cluster source: the registry's candidates plus the companion kinds.
const candidates = [...candidatesOf(registry), ...COMPANION_CANDIDATES];
const dynamicGroups = new Map<string, AdapterName>(
  ADAPTERS.flatMap((adapter) => (adapter.dynamicGroups ?? []).map((group) => [group, adapter.name] as const)),
);

/** A cluster that serves every candidate at its first version, and one kind in each dynamic group. */
function servingEverything(): DiscoveryDocument {
  const groups: DiscoveryDocument['groups'] = new Map();
  const serve = (group: string, version: string, resource: ServedResource) => {
    const entry = groups.get(group) ?? { preferredVersion: version, versions: new Map() };
    entry.versions.set(version, [...(entry.versions.get(version) ?? []), resource]);
    groups.set(group, entry);
  };
  for (const candidate of candidates)
    serve(candidate.group, candidate.versions[0], {
      name: pluralOfKind(candidate.kind),
      kind: candidate.kind,
      namespaced: true,
    });
  for (const group of dynamicGroups.keys())
    serve(group, 'v1', { name: 'k8srequiredlabels', kind: 'K8sRequiredLabels', namespaced: false });
  return { groups };
}

const rules = controllerRules();
const grants = (group: string, resource: string, verb: string) =>
  rules.some(
    (rule) =>
      (rule.apiGroups as string[]).includes(group) &&
      ((rule.resources as string[]).includes(resource) || (rule.resources as string[]).includes('*')) &&
      (rule.verbs as string[]).includes(verb),
  );

describe('the controller ClusterRole follows from what the controller watches', () => {
  const targets = resolveWatchTargets(servingEverything(), candidates, dynamicGroups);

  it('lets the controller get, list and watch every resource it watches', () => {
    expect(targets.length).toBe(candidates.length + dynamicGroups.size);
    for (const target of targets)
      for (const verb of ['get', 'list', 'watch'])
        expect({ ...target, verb, granted: grants(target.group, target.plural, verb) }).toMatchObject({
          granted: true,
        });
  });

  it('includes the companion kinds PodDisruptionBudget and HorizontalPodAutoscaler', () => {
    expect(grants('policy', 'poddisruptionbudgets', 'watch')).toBe(true);
    expect(grants('autoscaling', 'horizontalpodautoscalers', 'watch')).toBe(true);
  });

  it('grants nothing the controller does not watch, and only read verbs', () => {
    for (const rule of rules) {
      expect(rule.verbs).toEqual(['get', 'list', 'watch']);
      for (const group of rule.apiGroups as string[])
        for (const resource of rule.resources as string[])
          expect({
            group,
            resource,
            watched: targets.some(
              (target) =>
                target.group === group &&
                (resource === '*' ? dynamicGroups.has(group) : target.plural === resource),
            ),
          }).toMatchObject({ watched: true });
    }
  });
});
