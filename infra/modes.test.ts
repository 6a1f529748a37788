// Each mode and every configurable value: managed certificates, custom values, excluded namespaces,
// the disruption budget switched off, the webhook switched off, an existing namespace.
import {
  CertManagement,
  DetailLevel,
  Forewarn,
  ImagePullPolicy,
  IssuerKind,
  TaintEffect,
  TolerationOperator,
  type ForewarnArgs,
} from './';
import {
  at,
  installMocks,
  ofType,
  one,
  settle,
  valueOf,
  type JsonObject,
  type Registered,
} from '../test/support/infra-harness';

async function render(
  name: string,
  args: ForewarnArgs,
): Promise<{ registered: Registered[]; forewarn: Forewarn }> {
  const registered = installMocks();
  const forewarn = new Forewarn(name, args);
  await valueOf(forewarn.portForwardCommand);
  await settle(registered);
  return { registered, forewarn };
}

const VWC = 'kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration';
const DEPLOYMENT = 'kubernetes:apps/v1:Deployment';

function container(deployment: JsonObject): JsonObject {
  return at(deployment, 'spec', 'template', 'spec', 'containers', 0) as JsonObject;
}

describe('managed certificates (cert-manager)', () => {
  let registered: Registered[];
  let forewarn: Forewarn;
  beforeAll(async () => {
    ({ registered, forewarn } = await render('fw', {
      admissionWebhook: {
        certManagement: CertManagement.Managed,
        certIssuer: { issuerName: 'corp-ca', issuerKind: IssuerKind.ClusterIssuer },
      },
    }));
  });

  it('creates a cert-manager Certificate with the defaults of spec 5 and no self-signed material', () => {
    const certificate = one(registered, 'kubernetes:cert-manager.io/v1:Certificate', 'fw-webhook');
    expect(certificate.apiVersion).toBe('cert-manager.io/v1');
    expect(certificate.kind).toBe('Certificate');
    expect(certificate.spec).toMatchObject({
      secretName: 'fw-webhook-tls',
      duration: '8760h',
      renewBefore: '720h',
      issuerRef: { name: 'corp-ca', kind: 'ClusterIssuer' },
      dnsNames: ['fw-webhook', 'fw-webhook.fw', 'fw-webhook.fw.svc', 'fw-webhook.fw.svc.cluster.local'],
    });
    // No webhook TLS material: the one key and Secret left are the reference key's.
    expect(
      registered.filter((resource) => resource.type.startsWith('tls:')).map((resource) => resource.name),
    ).toEqual(['fw-controller-reference-key']);
    expect(ofType(registered, 'kubernetes:core/v1:Secret').map((resource) => resource.name)).toEqual([
      'fw-controller-reference-key',
    ]);
  });

  it('annotates the registration for CA injection and sets no caBundle', () => {
    const configuration = one(registered, VWC, 'fw-webhook');
    expect(at(configuration, 'metadata', 'annotations', 'cert-manager.io/inject-ca-from')).toBe(
      'fw/fw-webhook',
    );
    expect(at(configuration, 'webhooks', 0, 'clientConfig', 'caBundle')).toBeUndefined();
  });

  it('gives the webhook no API access: no Role, no API token, only the controller audience token', () => {
    const kinds = registered.map((resource) => resource.type);
    expect(kinds).not.toContain('kubernetes:rbac.authorization.k8s.io/v1:Role');
    expect(kinds).not.toContain('kubernetes:rbac.authorization.k8s.io/v1:RoleBinding');
    const spec = at(one(registered, DEPLOYMENT, 'fw-webhook'), 'spec', 'template', 'spec') as JsonObject;
    expect(spec.automountServiceAccountToken).toBe(false);
    expect(spec.volumes).toContainEqual({
      name: 'controller-token',
      projected: {
        sources: [
          {
            serviceAccountToken: { audience: 'forewarn-controller', expirationSeconds: 3600, path: 'token' },
          },
        ],
      },
    });
  });

  it('mounts the Secret at /etc/webhook/certs and passes the file flags', () => {
    const deployment = one(registered, DEPLOYMENT, 'fw-webhook');
    const webhook = container(deployment);
    expect(webhook.args).toEqual([
      '--addr=:8443',
      '--controller-url=http://fw-controller.fw.svc:8080',
      '--namespace=fw',
      '--self-signed=false',
      '--webhook-name=fw-webhook',
      '--service-name=fw-webhook',
      '--secret-name=fw-webhook-tls',
      '--tls-cert-file=/etc/webhook/certs/tls.crt',
      '--tls-key-file=/etc/webhook/certs/tls.key',
      '--controller-token-file=/var/run/secrets/forewarn/token',
    ]);
    expect(webhook.volumeMounts).toContainEqual({
      name: 'certs',
      mountPath: '/etc/webhook/certs',
      readOnly: true,
    });
    expect(at(deployment, 'spec', 'template', 'spec', 'volumes')).toContainEqual({
      name: 'certs',
      secret: { secretName: 'fw-webhook-tls' },
    });
  });

  it('grants the webhook no permission (it only reads mounted files)', () => {
    const webhookRbac = registered.filter(
      (resource) => resource.type.includes('rbac.authorization.k8s.io') && resource.name === 'fw-webhook',
    );
    expect(webhookRbac).toEqual([]);
  });

  it('exports no CA certificate (cert-manager owns it)', async () => {
    expect(await valueOf(forewarn.caCertificate)).toBeUndefined();
    expect(await valueOf(forewarn.tlsSecretName)).toBe('fw-webhook-tls');
  });
});

describe('managed certificates with an issuerRef', () => {
  it('lets issuerRef override issuerName and issuerKind, with custom duration and renewBefore', async () => {
    const { registered } = await render('fw', {
      admissionWebhook: {
        certManagement: CertManagement.Managed,
        certIssuer: {
          issuerName: 'ignored',
          issuerKind: IssuerKind.Issuer,
          issuerRef: { name: 'pca', kind: 'AWSPCAClusterIssuer', group: 'awspca.cert-manager.io' },
          duration: '2160h',
          renewBefore: '360h',
        },
      },
    });
    const certificate = one(registered, 'kubernetes:cert-manager.io/v1:Certificate', 'fw-webhook');
    expect(at(certificate, 'spec', 'issuerRef')).toEqual({
      name: 'pca',
      kind: 'AWSPCAClusterIssuer',
      group: 'awspca.cert-manager.io',
    });
    expect(at(certificate, 'spec', 'duration')).toBe('2160h');
    expect(at(certificate, 'spec', 'renewBefore')).toBe('360h');
  });
});

describe('every value set', () => {
  let registered: Registered[];
  beforeAll(async () => {
    ({ registered } = await render('warn', {
      namespace: { name: 'policy-tools', labels: { team: 'platform' }, annotations: { owner: 'sre' } },
      images: {
        controller: 'registry.example/forewarn:1.2.3',
        webhook: 'registry.example/fw-webhook:1.2.3',
        pullPolicy: ImagePullPolicy.Always,
      },
      controller: {
        replicas: 3,
        detailLevel: DetailLevel.Detailed,
        mcp: false,
        flowobserverAddress: 'hubble-relay.kube-system:4245',
        contact: 'platform@example.com',
        rescanInterval: '10m',
        resources: { requests: { cpu: '200m' }, limits: { memory: '1Gi' } },
        extraArgs: ['--log-level=debug'],
      },
      admissionWebhook: {
        replicas: 4,
        timeoutSeconds: 3,
        pdb: { minAvailable: 2 },
        excludedNamespaces: ['istio-system', 'kube-system', 'cert-manager'],
        resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '1', memory: '512Mi' } },
      },
      labels: { 'cost-center': 'cc-42' },
      annotations: { 'example.com/owner': 'platform' },
      nodeSelector: { 'kubernetes.io/os': 'linux' },
      tolerations: [
        {
          key: 'dedicated',
          operator: TolerationOperator.Equal,
          value: 'infra',
          effect: TaintEffect.NoSchedule,
        },
      ],
      priorityClassName: 'system-cluster-critical',
      imagePullSecrets: ['registry-credentials'],
    }));
  });

  it('passes every controller value to its flags, image, replicas and resources', () => {
    const deployment = one(registered, DEPLOYMENT, 'warn-controller');
    expect(at(deployment, 'spec', 'replicas')).toBe(3);
    const controller = container(deployment);
    expect(controller.image).toBe('registry.example/forewarn:1.2.3');
    expect(controller.imagePullPolicy).toBe('Always');
    expect(controller.args).toEqual([
      '--port=8080',
      '--mcp-port=8090',
      '--mcp=false',
      '--detail-level=detailed',
      '--own-webhook=warn-webhook',
      '--api-auth=tokenreview',
      '--webhook-service-account=policy-tools/warn-webhook',
      '--flowobserver-address=hubble-relay.kube-system:4245',
      '--contact=platform@example.com',
      '--rescan-interval=10m',
      '--reference-key-file=/etc/forewarn/reference-key/key',
      '--log-level=debug',
    ]);
    // Given fields replace their default, the others keep it.
    expect(controller.resources).toEqual({
      requests: { cpu: '200m', memory: '256Mi' },
      limits: { cpu: '500m', memory: '1Gi' },
    });
    // The heap limit follows the memory limit: three quarters of 1Gi.
    expect(controller.env).toEqual([{ name: 'NODE_OPTIONS', value: '--max-old-space-size=768' }]);
    // MCP off: no MCP port anywhere.
    expect(controller.ports).toEqual([{ name: 'http', containerPort: 8080, protocol: 'TCP' }]);
    const service = one(registered, 'kubernetes:core/v1:Service', 'warn-controller');
    expect(at(service, 'spec', 'ports')).toEqual([
      { name: 'http', port: 8080, targetPort: 'http', protocol: 'TCP' },
    ]);
  });

  it('passes every webhook value', () => {
    const deployment = one(registered, DEPLOYMENT, 'warn-webhook');
    expect(at(deployment, 'spec', 'replicas')).toBe(4);
    expect(container(deployment).image).toBe('registry.example/fw-webhook:1.2.3');
    expect(container(deployment).resources).toEqual({
      requests: { cpu: '100m', memory: '64Mi' },
      limits: { cpu: '1', memory: '512Mi' },
    });
    expect(container(deployment).args).toContain(
      '--controller-url=http://warn-controller.policy-tools.svc:8080',
    );
    expect(
      at(one(registered, 'kubernetes:policy/v1:PodDisruptionBudget', 'warn-webhook'), 'spec', 'minAvailable'),
    ).toBe(2);
    const webhook = at(one(registered, VWC, 'warn-webhook'), 'webhooks', 0) as JsonObject;
    expect(webhook.timeoutSeconds).toBe(3);
  });

  it('merges excluded namespaces with kube-system, kube-public, kube-node-lease and its own namespace', () => {
    const values = at(
      one(registered, VWC, 'warn-webhook'),
      'webhooks',
      0,
      'namespaceSelector',
      'matchExpressions',
      0,
    );
    expect(values).toEqual({
      key: 'kubernetes.io/metadata.name',
      operator: 'NotIn',
      values: [
        'kube-system',
        'kube-public',
        'kube-node-lease',
        'policy-tools',
        'istio-system',
        'cert-manager',
      ],
    });
  });

  it('applies scheduling, pull secrets and labels to both pods, and annotations to every object', () => {
    for (const name of ['warn-controller', 'warn-webhook']) {
      const deployment = one(registered, DEPLOYMENT, name);
      const podSpec = at(deployment, 'spec', 'template', 'spec') as JsonObject;
      expect(podSpec.nodeSelector).toEqual({ 'kubernetes.io/os': 'linux' });
      expect(podSpec.tolerations).toEqual([
        { key: 'dedicated', operator: 'Equal', value: 'infra', effect: 'NoSchedule' },
      ]);
      expect(podSpec.priorityClassName).toBe('system-cluster-critical');
      expect(podSpec.imagePullSecrets).toEqual([{ name: 'registry-credentials' }]);
      expect(at(deployment, 'spec', 'template', 'metadata', 'labels', 'cost-center')).toBe('cc-42');
    }
    for (const resource of registered.filter((r) => r.type.startsWith('kubernetes:'))) {
      expect(at(resource.inputs, 'metadata', 'labels', 'cost-center')).toBe('cc-42');
      expect(at(resource.inputs, 'metadata', 'annotations', 'example.com/owner')).toBe('platform');
    }
    const namespace = one(registered, 'kubernetes:core/v1:Namespace', 'policy-tools');
    expect(at(namespace, 'metadata', 'labels', 'team')).toBe('platform');
    expect(at(namespace, 'metadata', 'annotations', 'owner')).toBe('sre');
  });
});

describe('switches', () => {
  it('creates no PodDisruptionBudget when it is disabled', async () => {
    const { registered } = await render('fw', { admissionWebhook: { pdb: { enabled: false } } });
    expect(ofType(registered, 'kubernetes:policy/v1:PodDisruptionBudget')).toEqual([]);
    expect(ofType(registered, DEPLOYMENT)).toHaveLength(2);
  });

  it('deploys only the controller when the webhook is disabled', async () => {
    const { registered, forewarn } = await render('fw', { admissionWebhook: { enabled: false } });
    const names = registered.filter((r) => r.type !== 'forewarn:index:Forewarn').map((r) => r.name);
    expect(names.every((name) => name === 'fw' || name.startsWith('fw-controller'))).toBe(true);
    expect(registered.filter((r) => r.type.startsWith('tls:')).map((r) => r.name)).toEqual([
      'fw-controller-reference-key',
    ]);
    expect(await valueOf(forewarn.webhookServiceName)).toBeUndefined();
    expect(await valueOf(forewarn.webhookConfigurationName)).toBeUndefined();
    expect(await valueOf(forewarn.tlsSecretName)).toBeUndefined();
    expect(await valueOf(forewarn.controllerServiceName)).toBe('fw-controller');
  });

  const NETWORK_POLICY = 'kubernetes:networking.k8s.io/v1:NetworkPolicy';

  it('admits the namespaces listed beside the webhook pods, on the ports the controller serves', async () => {
    const { registered } = await render('fw', {
      controller: { mcp: false, networkPolicy: { allowedNamespaces: ['monitoring', 'agents'] } },
    });
    const [rule] = at(one(registered, NETWORK_POLICY, 'fw-controller'), 'spec', 'ingress') as JsonObject[];
    expect(rule?.from).toEqual([
      {
        podSelector: {
          matchLabels: at(one(registered, DEPLOYMENT, 'fw-webhook'), 'spec', 'selector', 'matchLabels'),
        },
      },
      {
        namespaceSelector: {
          matchExpressions: [
            { key: 'kubernetes.io/metadata.name', operator: 'In', values: ['monitoring', 'agents'] },
          ],
        },
      },
    ]);
    expect(rule?.ports).toEqual([{ port: 8080, protocol: 'TCP' }]);
  });

  it('admits no one over the pod network when the webhook is disabled and no namespace is listed', async () => {
    const { registered } = await render('fw', { admissionWebhook: { enabled: false } });
    expect(at(one(registered, NETWORK_POLICY, 'fw-controller'), 'spec', 'ingress')).toEqual([]);
    expect(at(one(registered, NETWORK_POLICY, 'fw-controller'), 'spec', 'policyTypes')).toEqual(['Ingress']);
  });

  it('creates no NetworkPolicy when it is disabled', async () => {
    const { registered } = await render('fw', { controller: { networkPolicy: { enabled: false } } });
    expect(ofType(registered, NETWORK_POLICY)).toEqual([]);
  });

  it('uses an existing namespace without creating it', async () => {
    const { registered, forewarn } = await render('fw', { namespace: { name: 'platform', create: false } });
    expect(ofType(registered, 'kubernetes:core/v1:Namespace')).toEqual([]);
    expect(at(one(registered, DEPLOYMENT, 'fw-controller'), 'metadata', 'namespace')).toBe('platform');
    expect(await valueOf(forewarn.namespace)).toBe('platform');
    expect(await valueOf(forewarn.portForwardCommand)).toBe(
      'kubectl -n platform port-forward svc/fw-controller 8080:8080',
    );
  });
});
