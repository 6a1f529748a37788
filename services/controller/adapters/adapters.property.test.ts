import path from 'node:path';
import fc from 'fast-check';
import { AdapterParseError, type Adapter } from '../../model/constraint';
import { canonicalJson } from './scope-text';
import { pathsOf, replaceAt } from '../../../test/support/mutate-object';
import { testAdapterContext } from '../../../test/support/render-constraint';
import { loadFixtureObjects } from '../../../test/support/yaml-fixtures';
import { admissionPolicyAdapter } from './admissionpolicy';
import { cniAdapter } from './cni';
import { limitRangeAdapter } from './limitrange';
import { meshAdapter } from './mesh';
import { networkPolicyAdapter } from './networkpolicy';
import { policyEngineAdapter } from './policyengine';
import { resourceQuotaAdapter } from './resourcequota';
import { webhookConfigurationAdapter } from './webhookconfig';

// Defensive reading and determinism, checked by brute force on every adapter: any field of a
// fixture replaced by any value yields constraints or an AdapterParseError, never another
// exception, and the same object always yields the same constraints. (Values as JSON or YAML
// parsing produces them: null-prototype objects cannot come from a parsed manifest.)

const cases: Array<[string, Adapter, string]> = [
  ['networkpolicy', networkPolicyAdapter, 'networkpolicy/networkpolicies.yaml'],
  ['resourcequota', resourceQuotaAdapter, 'resourcequota/resourcequotas.yaml'],
  ['limitrange', limitRangeAdapter, 'limitrange/limitranges.yaml'],
  ['webhookconfig', webhookConfigurationAdapter, 'webhookconfig/webhookconfigurations.yaml'],
  ['admissionpolicy', admissionPolicyAdapter, 'admissionpolicy/admissionpolicies.yaml'],
  ['cni', cniAdapter, 'cni/cilium-policies.yaml'],
  ['policyengine (Gatekeeper)', policyEngineAdapter, 'policyengine/gatekeeper.yaml'],
  ['policyengine (Kyverno)', policyEngineAdapter, 'policyengine/kyverno.yaml'],
  ['mesh', meshAdapter, 'mesh/istio-policies.yaml'],
];

describe.each(cases)('%s adapter on mutated fixtures', (_name, adapter, file) => {
  const objects = [...loadFixtureObjects(path.join(__dirname, 'fixtures', file)).values()];
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
