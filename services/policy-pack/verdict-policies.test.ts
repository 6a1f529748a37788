import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ResourceValidationArgs, ResourceValidationPolicy } from '@pulumi/policy';
import { parse } from 'yaml';
import { createObjectCheck } from './object-check';
import {
  kubernetesObjectOf,
  POLICY_NAMES,
  verdictPolicies,
  type CheckObject,
  type VerdictPolicyConfig,
} from './verdict-policies';

// The policy pack's policies on the demo cluster (examples/manifests, offline as `forewarn check
// --manifests`): what each policy reports for the README's Deployment, with check's text and fix,
// one check per resource, and Forewarn's failures as advice only. The deploy tier runs the pack
// under `pulumi preview` (test/deploy/policy-pack.test.ts).

const REPOSITORY = path.join(__dirname, '../..');
const demoManifests = path.join(REPOSITORY, 'examples/manifests');
const deployment = parse(readFileSync(path.join(REPOSITORY, 'examples/deployment.yaml'), 'utf8')) as Record<
  string,
  unknown
>;

function argsFor(
  type: string,
  props: Record<string, unknown>,
  config: VerdictPolicyConfig,
): ResourceValidationArgs {
  const name = 'web';
  return {
    type,
    props,
    urn: `urn:pulumi:dev::shop::${type}::${name}`,
    name,
    getConfig: <T extends object>() => config as T,
  } as unknown as ResourceValidationArgs;
}

async function violations(policy: ResourceValidationPolicy, args: ResourceValidationArgs): Promise<string[]> {
  const messages: string[] = [];
  const validate = policy.validateResource;
  if (typeof validate !== 'function') throw new Error('expected one validateResource function');
  await validate(args, (message) => messages.push(message));
  return messages;
}

describe('Kubernetes objects of Pulumi resources', () => {
  it('takes apiVersion and kind from the type when inputs lack them, and names unnamed objects', () => {
    expect(kubernetesObjectOf('kubernetes:apps/v1:Deployment', { spec: {} }, 'web')).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {},
    });
    expect(
      kubernetesObjectOf('kubernetes:core/v1:Pod', { metadata: { name: 'p', namespace: 'n' } }, 'x'),
    ).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'n' },
    });
    expect(kubernetesObjectOf('aws:s3/bucket:Bucket', {}, 'b')).toBeUndefined();
    expect(kubernetesObjectOf('kubernetes:yaml/v2:ConfigGroup', {}, 'g')).toBeUndefined();
    expect(kubernetesObjectOf('kubernetes:apps/v1:DeploymentPatch', {}, 'g')).toBeUndefined();
  });
});

describe('the verdict policies', () => {
  const config: VerdictPolicyConfig = { manifests: demoManifests };

  // The README's Deployment without its readiness probe: a Kyverno Audit policy then warns too.
  const withoutProbe = structuredClone(deployment);
  const containers = (
    withoutProbe as { spec: { template: { spec: { containers: Array<Record<string, unknown>> } } } }
  ).spec.template.spec.containers;
  delete containers[0].readinessProbe;

  it('reports rejections under the mandatory policy and warnings under the advisory one, with the fix', async () => {
    expect(JSON.stringify(withoutProbe)).not.toContain('readinessProbe');
    const [rejected, warned] = verdictPolicies(createObjectCheck({}));
    expect([rejected.name, rejected.enforcementLevel]).toEqual([POLICY_NAMES.rejected, 'mandatory']);
    expect([warned.name, warned.enforcementLevel]).toEqual([POLICY_NAMES.warned, 'advisory']);
    const args = argsFor('kubernetes:apps/v1:Deployment', withoutProbe, config);
    const mandatory = await violations(rejected, args);
    expect(mandatory).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^Deployment shop\/web: will be rejected: container "web": every container must set resource limits[\s\S]*\nfix: /,
        ),
        expect.stringMatching(/you must provide labels: owner[\s\S]*\nfix: /),
      ]),
    );
    const advisory = await violations(warned, args);
    expect(advisory).toEqual([expect.stringMatching(/Readiness probes are required\.[\s\S]*\nfix: /)]);
    for (const message of advisory) expect(message).toMatch(/^Deployment shop\/web: [\s\S]*\nfix: /);
    // Each finding under one policy only.
    expect(advisory.filter((message) => mandatory.includes(message))).toEqual([]);
    // Constraints without a verdict on the object only when asked for.
    const withApplies = await violations(
      verdictPolicies(createObjectCheck({}))[1],
      argsFor('kubernetes:apps/v1:Deployment', withoutProbe, { ...config, includeApplies: true }),
    );
    expect(withApplies.length).toBeGreaterThan(advisory.length);
    expect(withApplies.join('\n')).toContain('CiliumClusterwideNetworkPolicy "block-cloud-metadata"');
  });

  it('checks each resource once for both policies, and skips resources that are not Kubernetes objects', async () => {
    const calls: string[] = [];
    const check: CheckObject = async (urn) => {
      calls.push(urn);
      return { unavailable: 'controller down' };
    };
    const [rejected, warned] = verdictPolicies(check);
    const args = argsFor('kubernetes:apps/v1:Deployment', deployment, config);
    // Forewarn never blocks: a check it could not make is advice, never mandatory.
    expect(await violations(rejected, args)).toEqual([]);
    expect(await violations(warned, args)).toEqual([
      'Forewarn could not check this resource: controller down',
    ]);
    expect(calls).toHaveLength(1);
    expect(await violations(warned, argsFor('random:index/randomId:RandomId', {}, config))).toEqual([]);
    expect(calls).toHaveLength(1);
  });

  it('says when the controller cannot be reached, as check does', async () => {
    const [, warned] = verdictPolicies(createObjectCheck({}));
    const messages = await violations(
      warned,
      argsFor('kubernetes:apps/v1:Deployment', deployment, { url: 'http://127.0.0.1:1', timeoutSeconds: 2 }),
    );
    expect(messages).toEqual([
      expect.stringMatching(
        /^Forewarn could not check this resource: cannot reach the Forewarn controller at http:\/\/127\.0\.0\.1:1/,
      ),
    ]);
  });

  it('ships as policy-pack/ with the package version, a nodejs PulumiPolicy.yaml and an entry in files', () => {
    const manifest = JSON.parse(readFileSync(path.join(REPOSITORY, 'package.json'), 'utf8')) as {
      version: string;
      files: string[];
    };
    const pack = JSON.parse(readFileSync(path.join(REPOSITORY, 'policy-pack/package.json'), 'utf8')) as {
      version: string;
    };
    expect(pack.version).toBe(manifest.version);
    expect(manifest.files).toContain('policy-pack/');
    expect(parse(readFileSync(path.join(REPOSITORY, 'policy-pack/PulumiPolicy.yaml'), 'utf8'))).toMatchObject(
      { runtime: 'nodejs' },
    );
    expect(readFileSync(path.join(REPOSITORY, 'policy-pack/index.js'), 'utf8')).toContain(
      "require('../dist/services/policy-pack/pack')",
    );
  });
});
