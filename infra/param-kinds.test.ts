// `controller.paramKinds`: the custom resources ValidatingAdmissionPolicies use as params become the
// controller's `--param-kinds` flag and a get/list/watch rule on exactly those resources.
import { Forewarn, type ForewarnArgs } from './';
import {
  at,
  installMocks,
  one,
  settle,
  valueOf,
  type JsonObject,
  type Registered,
} from '../test/support/infra-harness';
import { controllerRules } from './rbac';
import { parseParamKinds } from '../services/model/param-kinds';

const CLUSTER_ROLE = 'kubernetes:rbac.authorization.k8s.io/v1:ClusterRole';
const DEPLOYMENT = 'kubernetes:apps/v1:Deployment';

async function render(args: ForewarnArgs): Promise<Registered[]> {
  const registered = installMocks();
  const forewarn = new Forewarn('fw', args);
  await valueOf(forewarn.portForwardCommand);
  await settle(registered);
  return registered;
}

function controllerFlags(registered: Registered[]): string[] {
  const deployment = one(registered, DEPLOYMENT, 'fw-controller');
  return (at(deployment, 'spec', 'template', 'spec', 'containers', 0) as JsonObject).args as string[];
}

type Rule = { apiGroups: string[]; resources: string[]; verbs: string[] };

describe('controller.paramKinds', () => {
  it('passes the kinds to the controller and lets it read exactly those resources', async () => {
    const registered = await render({
      controller: { paramKinds: ['rules.example.com/v1/replicalimits', 'limits.example.org/v1beta1/quotas'] },
    });
    expect(controllerFlags(registered)).toContain(
      '--param-kinds=rules.example.com/v1/replicalimits,limits.example.org/v1beta1/quotas',
    );
    const rules = one(registered, CLUSTER_ROLE, 'fw-controller').rules as Rule[];
    expect(rules).toContainEqual({
      apiGroups: ['rules.example.com'],
      resources: ['replicalimits'],
      verbs: ['get', 'list', 'watch'],
    });
    expect(rules).toContainEqual({
      apiGroups: ['limits.example.org'],
      resources: ['quotas'],
      verbs: ['get', 'list', 'watch'],
    });
  });

  it('adds neither a flag nor a rule by default, and nothing beyond the configured resources', async () => {
    const registered = await render({});
    expect(controllerFlags(registered).some((flag) => flag.startsWith('--param-kinds'))).toBe(false);
    const byDefault = one(registered, CLUSTER_ROLE, 'fw-controller').rules as Rule[];
    expect(byDefault.some((rule) => rule.apiGroups.includes('rules.example.com'))).toBe(false);
    // The configured kinds add their own rules and change no other rule.
    const withKinds = controllerRules(parseParamKinds('rules.example.com/v1/replicalimits'));
    expect(withKinds.slice(0, -1)).toEqual(controllerRules());
    expect(withKinds[withKinds.length - 1]).toEqual({
      apiGroups: ['rules.example.com'],
      resources: ['replicalimits'],
      verbs: ['get', 'list', 'watch'],
    });
  });
});
