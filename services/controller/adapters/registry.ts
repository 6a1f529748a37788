import type { AdapterName } from '../../model/api';
import type { Adapter } from '../../model/constraint';
import type { AdapterKind } from '../../model/watched-kinds';
import { networkPolicyAdapter } from './networkpolicy/networkpolicy';
import { resourceQuotaAdapter } from './resourcequota/resourcequota';
import { limitRangeAdapter } from './limitrange/limitrange';
import { webhookConfigurationAdapter } from './webhookconfig/webhookconfig';
import { admissionPolicyAdapter } from './admissionpolicy/admissionpolicy';
import { cniAdapter } from './cni/cni';
import { policyEngineAdapter } from './policyengine/policyengine';
import { meshAdapter } from './mesh/mesh';
import { adminNetworkPolicyAdapter } from './adminnetworkpolicy/adminnetworkpolicy';
import { podSecurityAdapter } from './podsecurity/podsecurity';

// Every adapter, and routing of an object to its adapter by exact API group and kind (never by
// whole group, except for groups an adapter declares dynamic, where every kind is a policy kind).

export const ADAPTERS: readonly Adapter[] = [
  networkPolicyAdapter,
  resourceQuotaAdapter,
  limitRangeAdapter,
  webhookConfigurationAdapter,
  admissionPolicyAdapter,
  cniAdapter,
  policyEngineAdapter,
  meshAdapter,
  adminNetworkPolicyAdapter,
  podSecurityAdapter,
];

export class AdapterRegistry {
  private readonly byGroupKind = new Map<string, Adapter>();
  private readonly byDynamicGroup = new Map<string, Adapter>();

  constructor(readonly adapters: readonly Adapter[] = ADAPTERS) {
    for (const adapter of adapters) {
      for (const kind of adapter.kinds) this.byGroupKind.set(`${kind.group}/${kind.kind}`, adapter);
      for (const group of adapter.dynamicGroups ?? []) this.byDynamicGroup.set(group, adapter);
    }
  }

  adapterFor(group: string, kind: string): Adapter | undefined {
    return this.byGroupKind.get(`${group}/${kind}`) ?? this.byDynamicGroup.get(group);
  }

  byName(name: AdapterName): Adapter | undefined {
    return this.adapters.find((adapter) => adapter.name === name);
  }

  /** Statically known kinds of every adapter (dynamic groups are discovered by the cluster source). */
  allKinds(): Array<{ adapter: Adapter; kind: AdapterKind }> {
    return this.adapters.flatMap((adapter) => adapter.kinds.map((kind) => ({ adapter, kind })));
  }
}
