// The controller's ClusterRole must let it list and watch every kind it may watch: the adapters' kinds,
// the inventory (namespaces, workloads, CRDs) and the companion kinds of the missing-resource rules.
// A kind it watches without permission gets 403 on every list in a real cluster (PodDisruptionBudgets
// and HorizontalPodAutoscalers were watched by the companion rules but not granted).
import { CONTROLLER_RULES } from '../../../infra/rbac';
import { AdapterRegistry } from '../../../services/controller/adapters/registry';
import {
  COMPANION_CANDIDATES,
  INVENTORY_CANDIDATES,
  candidatesOf,
} from '../../../services/controller/sources/cluster/discovery';

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
}

/** The plural Kubernetes derives for a kind (lower case; -s, -es after s, -ies after y). */
function defaultPlural(kind: string): string {
  const lower = kind.toLowerCase();
  if (lower.endsWith('s')) return `${lower}es`;
  if (lower.endsWith('y')) return `${lower.slice(0, -1)}ies`;
  return `${lower}s`;
}

function allows(rules: readonly Rule[], group: string, resource: string, verb: string): boolean {
  return rules.some(
    (rule) =>
      (rule.apiGroups ?? []).some((g) => g === group || g === '*') &&
      (rule.resources ?? []).some((r) => r === resource || r === '*') &&
      rule.verbs.some((v) => v === verb || v === '*'),
  );
}

const registry = new AdapterRegistry();
const pluralOf = new Map(registry.allKinds().map(({ kind }) => [`${kind.group}/${kind.kind}`, kind.plural]));
const watched = [...candidatesOf(registry, INVENTORY_CANDIDATES), ...COMPANION_CANDIDATES].map(
  (candidate) => ({
    group: candidate.group,
    kind: candidate.kind,
    plural: pluralOf.get(`${candidate.group}/${candidate.kind}`) ?? defaultPlural(candidate.kind),
  }),
);
const rules = CONTROLLER_RULES as Rule[];

describe('controller ClusterRole covers every watched kind', () => {
  it.each(watched.map((target) => [`${target.group || 'core'}/${target.plural}`, target]))(
    '%s can be listed and watched',
    (_name, target) => {
      for (const verb of ['list', 'watch']) {
        expect({ ...target, verb, allowed: allows(rules, target.group, target.plural, verb) }).toEqual({
          ...target,
          verb,
          allowed: true,
        });
      }
    },
  );

  it('covers every kind of the dynamic groups (Gatekeeper creates one kind per template)', () => {
    const dynamicGroups = registry.adapters.flatMap((adapter) => adapter.dynamicGroups ?? []);
    expect(dynamicGroups.length).toBeGreaterThan(0);
    for (const group of dynamicGroups) expect(allows(rules, group, 'anykind', 'watch')).toBe(true);
  });

  it('grants no write verb', () => {
    const verbs = new Set(rules.flatMap((rule) => rule.verbs));
    expect([...verbs].sort()).toEqual(['get', 'list', 'watch']);
  });
});
