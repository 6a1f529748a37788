// Resource options and identity: children parented to the component, the provider passed through
// `opts`, the webhook's ownership of rotated TLS material (ignoreChanges), ordering, names of two
// instances, and secrets.
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { CertManagement, Forewarn, IssuerKind } from './';
import {
  FAKE_PRIVATE_KEY,
  at,
  installMocks,
  isSecretValue,
  settle,
  valueOf,
  type Json,
  type JsonObject,
  type Registered,
} from '../test/support/infra-harness';

interface Captured {
  type: string;
  name: string;
  opts: pulumi.CustomResourceOptions;
  resource: pulumi.Resource;
}

/** Renders a component and captures every child's final resource options through a transformation. */
async function renderCapturing(
  name: string,
  managed = false,
): Promise<{ registered: Registered[]; captured: Captured[]; forewarn: Forewarn }> {
  const registered = installMocks();
  const captured: Captured[] = [];
  const capture: pulumi.ResourceTransformation = (args) => {
    captured.push({ type: args.type, name: args.name, opts: args.opts, resource: args.resource });
    return undefined;
  };
  const forewarn = new Forewarn(
    name,
    managed
      ? {
          admissionWebhook: {
            certManagement: CertManagement.Managed,
            certIssuer: { issuerName: 'ca', issuerKind: IssuerKind.ClusterIssuer },
          },
        }
      : {},
    { transformations: [capture] },
  );
  await valueOf(forewarn.portForwardCommand);
  await settle(registered);
  return { registered, captured, forewarn };
}

function find(captured: Captured[], type: string, name: string): Captured {
  const match = captured.find((c) => c.type === type && c.name === name);
  if (!match) {
    throw new Error(`no ${type} ${name}`);
  }
  return match;
}

function dependsOnTypes(options: pulumi.CustomResourceOptions): string[] {
  const dependsOn = options.dependsOn;
  const list = Array.isArray(dependsOn) ? dependsOn : dependsOn ? [dependsOn] : [];
  return list.map((dependency) => {
    const resource = dependency as pulumi.Resource & { __pulumiType?: string };
    return resource.__pulumiType ?? 'unknown';
  });
}

describe('resource options', () => {
  it('parents every child to the component', async () => {
    const { captured, forewarn } = await renderCapturing('fw');
    const children = captured.filter((c) => c.type !== 'forewarn:index:Forewarn');
    expect(children.length).toBeGreaterThan(15);
    for (const child of children) {
      expect(child.opts.parent).toBe(forewarn);
    }
  });

  it('hands the Secret data and the caBundle over to the webhook after creation (self-signed)', async () => {
    const { captured } = await renderCapturing('fw');
    expect(find(captured, 'kubernetes:core/v1:Secret', 'fw-webhook-tls').opts.ignoreChanges).toEqual([
      'data',
    ]);
    expect(
      find(
        captured,
        'kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration',
        'fw-webhook',
      ).opts.ignoreChanges,
    ).toEqual(['webhooks[0].clientConfig.caBundle']);
    // Nothing else is ignored: every other field stays under Pulumi's control.
    const others = captured.filter(
      (c) => c.opts.ignoreChanges && !['fw-webhook-tls', 'fw-webhook'].includes(c.name),
    );
    expect(others).toEqual([]);
  });

  it('ignores nothing in managed mode (cert-manager writes the Secret and the bundle, Pulumi neither)', async () => {
    const { captured } = await renderCapturing('fw', true);
    expect(captured.filter((c) => c.opts.ignoreChanges)).toEqual([]);
  });

  it('starts pods after their permissions and certificates, and registers the webhook after its pods', async () => {
    const self = await renderCapturing('fw');
    expect(
      dependsOnTypes(find(self.captured, 'kubernetes:apps/v1:Deployment', 'fw-webhook').opts).sort(),
    ).toEqual([
      'kubernetes:core/v1:Secret',
      'kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding',
      'kubernetes:rbac.authorization.k8s.io/v1:RoleBinding',
    ]);
    expect(
      dependsOnTypes(find(self.captured, 'kubernetes:apps/v1:Deployment', 'fw-controller').opts),
    ).toEqual(['kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding', 'kubernetes:core/v1:Secret']);
    expect(
      dependsOnTypes(
        find(
          self.captured,
          'kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration',
          'fw-webhook',
        ).opts,
      ),
    ).toEqual(['kubernetes:apps/v1:Deployment']);
    const managed = await renderCapturing('fw', true);
    expect(
      dependsOnTypes(find(managed.captured, 'kubernetes:apps/v1:Deployment', 'fw-webhook').opts),
    ).toEqual(['kubernetes:cert-manager.io/v1:Certificate']);
  });
});

describe('provider', () => {
  it('passes the provider given in opts to every Kubernetes child', async () => {
    const registered = installMocks();
    const provider = new k8s.Provider('cluster-a', { context: 'cluster-a' });
    const forewarn = new Forewarn('fw', {}, { provider });
    await valueOf(forewarn.portForwardCommand);
    await settle(registered);
    const kubernetes = registered.filter((r) => r.type.startsWith('kubernetes:'));
    expect(kubernetes.length).toBeGreaterThan(15);
    for (const resource of kubernetes) {
      expect(resource.provider).toContain('pulumi:providers:kubernetes::cluster-a');
    }
  });
});

describe('two instances', () => {
  it('do not collide: Pulumi names and Kubernetes objects (cluster-scoped included) are disjoint', async () => {
    const registered = installMocks();
    const first = new Forewarn('forewarn-a');
    const second = new Forewarn('forewarn-b');
    await Promise.all([valueOf(first.portForwardCommand), valueOf(second.portForwardCommand)]);
    await settle(registered);

    const pulumiIds = registered.map((r) => `${r.type}::${r.name}`);
    expect(new Set(pulumiIds).size).toBe(pulumiIds.length);

    const objects = registered
      .filter((r) => r.type.startsWith('kubernetes:'))
      .map(
        (r) =>
          `${at(r.inputs, 'kind')}/${at(r.inputs, 'metadata', 'namespace') ?? ''}/${at(r.inputs, 'metadata', 'name')}`,
      );
    expect(new Set(objects).size).toBe(objects.length);
    const clusterScoped = objects.filter((o) =>
      /^(ClusterRole|ClusterRoleBinding|ValidatingWebhookConfiguration|Namespace)\//.test(o),
    );
    expect(clusterScoped.sort()).toEqual(
      [
        'ClusterRole//forewarn-a-controller',
        'ClusterRole//forewarn-a-webhook',
        'ClusterRole//forewarn-b-controller',
        'ClusterRole//forewarn-b-webhook',
        'ClusterRoleBinding//forewarn-a-controller',
        'ClusterRoleBinding//forewarn-a-webhook',
        'ClusterRoleBinding//forewarn-b-controller',
        'ClusterRoleBinding//forewarn-b-webhook',
        'Namespace//forewarn-a',
        'Namespace//forewarn-b',
        'ValidatingWebhookConfiguration//forewarn-a-webhook',
        'ValidatingWebhookConfiguration//forewarn-b-webhook',
      ].sort(),
    );
    // Each instance's webhook excludes and names its own objects only.
    const vwcB = registered.find(
      (r) => r.type.endsWith(':ValidatingWebhookConfiguration') && r.name === 'forewarn-b-webhook',
    );
    expect(at(vwcB?.inputs, 'webhooks', 0, 'clientConfig', 'service')).toMatchObject({
      name: 'forewarn-b-webhook',
      namespace: 'forewarn-b',
    });
  });
});

describe('secrets', () => {
  /** Every string in a value that is not inside a secret, with its path. */
  function plainStrings(value: Json | undefined, path = ''): Array<[string, string]> {
    if (isSecretValue(value)) {
      return [];
    }
    if (typeof value === 'string') {
      return [[path, value]];
    }
    if (Array.isArray(value)) {
      return value.flatMap((inner, index) => plainStrings(inner, `${path}[${index}]`));
    }
    if (value && typeof value === 'object') {
      return Object.entries(value as JsonObject).flatMap(([key, inner]) =>
        plainStrings(inner, `${path}.${key}`),
      );
    }
    return [];
  }

  it('never passes private key material outside a secret', async () => {
    const { registered } = await renderCapturing('fw');
    const keyBase64 = Buffer.from(FAKE_PRIVATE_KEY).toString('base64');
    const leaks = registered.flatMap((r) =>
      plainStrings(r.inputs)
        .filter(([, text]) => text.includes('PRIVATE KEY') || text === keyBase64)
        .map(([path]) => `${r.type} ${r.name}${path}`),
    );
    expect(leaks).toEqual([]);
    // ... and the places that carry keys do carry them, wrapped.
    const secrets = registered.filter((r) => r.type === 'kubernetes:core/v1:Secret');
    expect(secrets.map((secret) => secret.name).sort()).toEqual([
      'fw-controller-reference-key',
      'fw-webhook-tls',
    ]);
    for (const secret of secrets) expect(isSecretValue(secret.inputs.data)).toBe(true);
    const request = registered.find((r) => r.type === 'tls:index/certRequest:CertRequest');
    expect(isSecretValue(request?.inputs.privateKeyPem)).toBe(true);
    const signed = registered.find((r) => r.type === 'tls:index/locallySignedCert:LocallySignedCert');
    expect(isSecretValue(signed?.inputs.caPrivateKeyPem)).toBe(true);
  });

  it('marks the CA certificate output secret', async () => {
    const { forewarn } = await renderCapturing('fw');
    expect(await pulumi.isSecret(forewarn.caCertificate)).toBe(true);
  });
});
