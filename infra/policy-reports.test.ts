// `controller.policyReports`: the workloads at risk as PolicyReports (issue 35). Off by default: no
// flag and no write verb at all in the controller's ClusterRole; on: `--policy-reports` and exactly
// the verbs the writer uses on wgpolicyk8s.io policyreports and clusterpolicyreports.
import * as pulumi from '@pulumi/pulumi';
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
import { errorMessage } from '../services/model/error-message';

const CLUSTER_ROLE = 'kubernetes:rbac.authorization.k8s.io/v1:ClusterRole';
const DEPLOYMENT = 'kubernetes:apps/v1:Deployment';

type Rule = { apiGroups: string[]; resources: string[]; verbs: string[] };

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

const controllerRules = (registered: Registered[]) =>
  one(registered, CLUSTER_ROLE, 'fw-controller').rules as Rule[];

/** Verbs that change something in the cluster, other than the reviews (which read nothing). */
const writeRules = (rules: Rule[]) =>
  rules.filter(
    (rule) =>
      rule.verbs.some((verb) => !['get', 'list', 'watch'].includes(verb)) &&
      !rule.resources.some((resource) => resource.endsWith('reviews')),
  );

describe('controller.policyReports', () => {
  it('is off by default: no flag, and no write verb in the controller ClusterRole', async () => {
    const registered = await render({});
    expect(controllerFlags(registered)).not.toContain('--policy-reports');
    const rules = controllerRules(registered);
    expect(writeRules(rules)).toEqual([]);
    expect(rules.some((rule) => rule.apiGroups.includes('wgpolicyk8s.io'))).toBe(false);
  });

  it('passes --policy-reports and grants exactly the verbs the writer uses on the two report kinds', async () => {
    const off = controllerRules(await render({ controller: { policyReports: false } }));
    const registered = await render({ controller: { policyReports: true } });
    expect(controllerFlags(registered)).toContain('--policy-reports');
    const on = controllerRules(registered);
    expect(writeRules(on)).toEqual([
      {
        apiGroups: ['wgpolicyk8s.io'],
        resources: ['policyreports', 'clusterpolicyreports'],
        verbs: ['get', 'list', 'create', 'update', 'delete'],
      },
    ]);
    // Nothing else changes: the other rules are the ones of the component without it.
    expect(on.filter((rule) => !rule.apiGroups.includes('wgpolicyk8s.io'))).toEqual(off);
  });

  it('refuses a value that is not a boolean', async () => {
    const registered = installMocks();
    let thrown: unknown;
    try {
      new Forewarn('fw', { controller: { policyReports: 'true' as unknown as boolean } });
    } catch (error) {
      thrown = error;
    }
    expect(pulumi.ResourceError.isInstance(thrown)).toBe(true);
    expect(errorMessage(thrown)).toMatch(/controller\.policyReports must be true or false \(got "true"\)/);
    await settle(registered);
  });
});
