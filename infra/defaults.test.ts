// The component with default arguments (self-signed mode): which objects exist, and every value the
// issue lists (ports, probes, resources, replicas, hardening, RBAC, registration).
import * as pulumi from '@pulumi/pulumi';
import { Forewarn } from './';
import {
  at,
  installMocks,
  manifest,
  ofType,
  one,
  settle,
  valueOf,
  type Json,
  type JsonObject,
  type Registered,
} from '../test/support/infra-harness';

let registered: Registered[];
let forewarn: Forewarn;

beforeAll(async () => {
  registered = installMocks();
  forewarn = new Forewarn('forewarn');
  await valueOf(forewarn.portForwardCommand);
  await settle(registered);
});

function container(deployment: JsonObject): JsonObject {
  return at(deployment, 'spec', 'template', 'spec', 'containers', 0) as JsonObject;
}

describe('Forewarn with default arguments', () => {
  it('creates exactly the expected resources', () => {
    const kinds = registered.map((resource) => `${resource.type} ${resource.name}`).sort();
    expect(kinds).toEqual(
      [
        'forewarn:index:Forewarn forewarn',
        'kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration forewarn-webhook',
        'kubernetes:apps/v1:Deployment forewarn-controller',
        'kubernetes:apps/v1:Deployment forewarn-webhook',
        'kubernetes:core/v1:Namespace forewarn',
        'kubernetes:core/v1:Secret forewarn-controller-reference-key',
        'kubernetes:core/v1:Secret forewarn-webhook-tls',
        'kubernetes:core/v1:Service forewarn-controller',
        'kubernetes:core/v1:Service forewarn-webhook',
        'kubernetes:core/v1:ServiceAccount forewarn-controller',
        'kubernetes:core/v1:ServiceAccount forewarn-webhook',
        'kubernetes:policy/v1:PodDisruptionBudget forewarn-webhook',
        'kubernetes:networking.k8s.io/v1:NetworkPolicy forewarn-controller',
        'kubernetes:rbac.authorization.k8s.io/v1:ClusterRole forewarn-controller',
        'kubernetes:rbac.authorization.k8s.io/v1:ClusterRole forewarn-webhook',
        'kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding forewarn-controller',
        'kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding forewarn-webhook',
        'kubernetes:rbac.authorization.k8s.io/v1:Role forewarn-webhook',
        'kubernetes:rbac.authorization.k8s.io/v1:RoleBinding forewarn-webhook',
        'tls:index/certRequest:CertRequest forewarn-webhook',
        'tls:index/locallySignedCert:LocallySignedCert forewarn-webhook',
        'tls:index/privateKey:PrivateKey forewarn-controller-reference-key',
        'tls:index/privateKey:PrivateKey forewarn-webhook',
        'tls:index/privateKey:PrivateKey forewarn-webhook-ca',
        'tls:index/selfSignedCert:SelfSignedCert forewarn-webhook-ca',
      ].sort(),
    );
  });

  it('names every object explicitly and puts namespaced ones in the namespace named after the component', () => {
    for (const resource of registered.filter((r) => r.type.startsWith('kubernetes:'))) {
      const object = manifest(resource);
      expect(at(object, 'metadata', 'name')).toBe(resource.name);
      if (!/Namespace$|:Cluster|ValidatingWebhookConfiguration/.test(resource.type)) {
        expect(at(object, 'metadata', 'namespace')).toBe('forewarn');
      }
    }
  });

  it('runs the controller with its command, flags, ports, probes and resources', () => {
    const deployment = one(registered, 'kubernetes:apps/v1:Deployment', 'forewarn-controller');
    expect(at(deployment, 'spec', 'replicas')).toBe(1);
    const controller = container(deployment);
    expect(controller.command).toEqual([
      'node',
      '--min-semi-space-size=16',
      '/app/dist/services/controller/main.js',
    ]);
    expect(controller.args).toEqual([
      '--port=8080',
      '--mcp-port=8090',
      '--mcp=true',
      '--detail-level=summary',
      '--own-webhook=forewarn-webhook',
      '--api-auth=tokenreview',
      '--webhook-service-account=forewarn/forewarn-webhook',
      '--reference-key-file=/etc/forewarn/reference-key/key',
    ]);
    expect(controller.image).toBe('forewarn:0.1.0');
    expect(controller.ports).toEqual([
      { name: 'http', containerPort: 8080, protocol: 'TCP' },
      { name: 'mcp', containerPort: 8090, protocol: 'TCP' },
    ]);
    expect(at(controller, 'livenessProbe', 'httpGet')).toEqual({ path: '/healthz', port: 'http' });
    expect(at(controller, 'readinessProbe', 'httpGet')).toEqual({ path: '/readyz', port: 'http' });
    expect(controller.resources).toEqual({
      requests: { cpu: '100m', memory: '256Mi' },
      limits: { cpu: '500m', memory: '512Mi' },
    });
    // V8 collects before the container's limit: three quarters of it for the heap.
    expect(controller.env).toEqual([{ name: 'NODE_OPTIONS', value: '--max-old-space-size=384' }]);
    expect(at(deployment, 'spec', 'template', 'spec', 'serviceAccountName')).toBe('forewarn-controller');
  });

  it('exposes the controller on 8080 (HTTP) and 8090 (MCP)', () => {
    const service = one(registered, 'kubernetes:core/v1:Service', 'forewarn-controller');
    expect(at(service, 'spec', 'type')).toBe('ClusterIP');
    expect(at(service, 'spec', 'ports')).toEqual([
      { name: 'http', port: 8080, targetPort: 'http', protocol: 'TCP' },
      { name: 'mcp', port: 8090, targetPort: 'mcp', protocol: 'TCP' },
    ]);
    expect(at(service, 'spec', 'selector')).toEqual({
      'app.kubernetes.io/name': 'forewarn',
      'app.kubernetes.io/instance': 'forewarn',
      'app.kubernetes.io/component': 'controller',
    });
  });

  it('runs the webhook as /webhook with the exact flags, port, probes, resources and 2 replicas', () => {
    const deployment = one(registered, 'kubernetes:apps/v1:Deployment', 'forewarn-webhook');
    expect(at(deployment, 'spec', 'replicas')).toBe(2);
    const webhook = container(deployment);
    expect(webhook.command).toEqual(['/webhook']);
    expect(webhook.args).toEqual([
      '--addr=:8443',
      '--controller-url=http://forewarn-controller.forewarn.svc:8080',
      '--namespace=forewarn',
      '--self-signed=true',
      '--webhook-name=forewarn-webhook',
      '--service-name=forewarn-webhook',
      '--secret-name=forewarn-webhook-tls',
      '--controller-token-file=/var/run/secrets/forewarn/token',
    ]);
    expect(webhook.ports).toEqual([{ name: 'https', containerPort: 8443, protocol: 'TCP' }]);
    expect(webhook.livenessProbe).toEqual({
      httpGet: { path: '/healthz', port: 'https', scheme: 'HTTPS' },
      initialDelaySeconds: 10,
      periodSeconds: 10,
    });
    expect(webhook.readinessProbe).toEqual({
      httpGet: { path: '/readyz', port: 'https', scheme: 'HTTPS' },
      initialDelaySeconds: 5,
      periodSeconds: 5,
    });
    expect(webhook.resources).toEqual({
      requests: { cpu: '50m', memory: '192Mi' },
      limits: { cpu: '200m', memory: '256Mi' },
    });
    // Self-signed mode: certificates come from the Secret through the API, nothing is mounted.
    expect(webhook.volumeMounts).toEqual([
      { name: 'tmp', mountPath: '/tmp' },
      { name: 'controller-token', mountPath: '/var/run/secrets/forewarn', readOnly: true },
    ]);
  });

  it('spreads webhook pods across nodes by anti-affinity on the hostname', () => {
    const deployment = one(registered, 'kubernetes:apps/v1:Deployment', 'forewarn-webhook');
    const term = at(
      deployment,
      'spec',
      'template',
      'spec',
      'affinity',
      'podAntiAffinity',
      'preferredDuringSchedulingIgnoredDuringExecution',
      0,
    );
    expect(at(term, 'podAffinityTerm', 'topologyKey')).toBe('kubernetes.io/hostname');
    expect(at(term, 'podAffinityTerm', 'labelSelector', 'matchLabels')).toEqual(
      at(deployment, 'spec', 'selector', 'matchLabels'),
    );
  });

  it.each(['forewarn-controller', 'forewarn-webhook'])('hardens the %s pods', (name) => {
    const deployment = one(registered, 'kubernetes:apps/v1:Deployment', name);
    const podSpec = at(deployment, 'spec', 'template', 'spec') as JsonObject;
    expect(at(podSpec, 'securityContext', 'runAsNonRoot')).toBe(true);
    expect(at(podSpec, 'securityContext', 'seccompProfile')).toEqual({ type: 'RuntimeDefault' });
    const securityContext = container(deployment).securityContext as JsonObject;
    expect(securityContext).toMatchObject({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(podSpec.volumes).toContainEqual({ name: 'tmp', emptyDir: { sizeLimit: '64Mi' } });
    expect(container(deployment).volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
  });

  it("limits the webhook's Secret access to its own TLS Secret (resourceNames on every read)", () => {
    const role = one(registered, 'kubernetes:rbac.authorization.k8s.io/v1:Role', 'forewarn-webhook');
    const rules = role.rules as JsonObject[];
    for (const rule of rules.filter((entry) => (entry.verbs as string[]).some((verb) => verb !== 'create')))
      expect(rule.resourceNames).toEqual(['forewarn-webhook-tls']);
    expect(rules).toContainEqual({
      apiGroups: [''],
      resources: ['secrets'],
      resourceNames: ['forewarn-webhook-tls'],
      verbs: ['get', 'list', 'watch'],
    });
  });

  it('lets the controller create TokenReviews and mounts the audience token in the webhook pod', () => {
    const role = one(
      registered,
      'kubernetes:rbac.authorization.k8s.io/v1:ClusterRole',
      'forewarn-controller',
    );
    expect(role.rules).toContainEqual({
      apiGroups: ['authentication.k8s.io'],
      resources: ['tokenreviews'],
      verbs: ['create'],
    });
    expect(role.rules).toContainEqual({
      apiGroups: ['authorization.k8s.io'],
      resources: ['subjectaccessreviews'],
      verbs: ['create'],
    });
    const deployment = one(registered, 'kubernetes:apps/v1:Deployment', 'forewarn-webhook');
    expect(container(deployment).volumeMounts).toContainEqual({
      name: 'controller-token',
      mountPath: '/var/run/secrets/forewarn',
      readOnly: true,
    });
    // Self-signed mode writes its Secret and registration: it keeps its API token.
    expect(at(deployment, 'spec', 'template', 'spec', 'automountServiceAccountToken')).toBe(true);
  });

  it('serves the webhook on a ClusterIP Service 443 -> 8443', () => {
    const service = one(registered, 'kubernetes:core/v1:Service', 'forewarn-webhook');
    expect(at(service, 'spec', 'type')).toBe('ClusterIP');
    expect(at(service, 'spec', 'ports')).toEqual([
      { name: 'https', port: 443, targetPort: 'https', protocol: 'TCP' },
    ]);
  });

  it("admits to the controller's ports the webhook pods alone (no namespace listed)", () => {
    const policy = one(registered, 'kubernetes:networking.k8s.io/v1:NetworkPolicy', 'forewarn-controller');
    expect(at(policy, 'spec')).toEqual({
      podSelector: {
        matchLabels: at(
          one(registered, 'kubernetes:apps/v1:Deployment', 'forewarn-controller'),
          'spec',
          'selector',
          'matchLabels',
        ),
      },
      policyTypes: ['Ingress'],
      ingress: [
        {
          from: [
            {
              podSelector: {
                matchLabels: at(
                  one(registered, 'kubernetes:apps/v1:Deployment', 'forewarn-webhook'),
                  'spec',
                  'selector',
                  'matchLabels',
                ),
              },
            },
          ],
          ports: [
            { port: 8080, protocol: 'TCP' },
            { port: 8090, protocol: 'TCP' },
          ],
        },
      ],
    });
    // The webhook pods are not selected: the API server (not a pod) still reaches them.
    expect(at(policy, 'spec', 'podSelector', 'matchLabels', 'app.kubernetes.io/component')).toBe(
      'controller',
    );
  });

  it('keeps one webhook pod available with a policy/v1 PodDisruptionBudget', () => {
    const pdb = one(registered, 'kubernetes:policy/v1:PodDisruptionBudget', 'forewarn-webhook');
    expect(pdb.apiVersion).toBe('policy/v1');
    expect(at(pdb, 'spec', 'minAvailable')).toBe(1);
    expect(at(pdb, 'spec', 'selector', 'matchLabels')).toEqual({
      'app.kubernetes.io/name': 'forewarn',
      'app.kubernetes.io/instance': 'forewarn',
      'app.kubernetes.io/component': 'webhook',
    });
  });

  it('registers the webhook with the scope of spec 4.4, failurePolicy Ignore and the CA bundle', () => {
    const configuration = one(
      registered,
      'kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration',
      'forewarn-webhook',
    );
    const webhooks = configuration.webhooks as JsonObject[];
    expect(webhooks).toHaveLength(1);
    const [webhook] = webhooks;
    expect(webhook).toMatchObject({
      name: 'warnings.forewarn.io',
      admissionReviewVersions: ['v1'],
      sideEffects: 'None',
      failurePolicy: 'Ignore',
      timeoutSeconds: 5,
      clientConfig: {
        service: { name: 'forewarn-webhook', namespace: 'forewarn', path: '/validate', port: 443 },
      },
    });
    const pem = Buffer.from(String(at(webhook, 'clientConfig', 'caBundle')), 'base64').toString('utf8');
    expect(pem).toContain('BEGIN CERTIFICATE');
    expect(webhook.rules).toEqual([
      {
        apiGroups: [''],
        apiVersions: ['v1'],
        resources: ['pods', 'services', 'configmaps'],
        operations: ['CREATE', 'UPDATE'],
        scope: 'Namespaced',
      },
      {
        apiGroups: ['apps'],
        apiVersions: ['v1'],
        resources: ['deployments', 'statefulsets', 'daemonsets', 'replicasets'],
        operations: ['CREATE', 'UPDATE'],
        scope: 'Namespaced',
      },
      {
        apiGroups: ['batch'],
        apiVersions: ['v1'],
        resources: ['jobs', 'cronjobs'],
        operations: ['CREATE', 'UPDATE'],
        scope: 'Namespaced',
      },
    ]);
    expect(webhook.namespaceSelector).toEqual({
      matchExpressions: [
        {
          key: 'kubernetes.io/metadata.name',
          operator: 'NotIn',
          values: ['kube-system', 'kube-public', 'kube-node-lease', 'forewarn'],
        },
      ],
    });
  });

  it('creates the self-signed CA and server certificate: RSA 2048, 8760 h, the four DNS names', () => {
    const webhookKeys = ofType(registered, 'tls:index/privateKey:PrivateKey').filter(
      (key) => key.name !== 'forewarn-controller-reference-key',
    );
    expect(webhookKeys).toHaveLength(2);
    for (const key of webhookKeys) {
      expect(manifest(key)).toMatchObject({ algorithm: 'RSA', rsaBits: 2048 });
    }
    const ca = one(registered, 'tls:index/selfSignedCert:SelfSignedCert', 'forewarn-webhook-ca');
    expect(ca).toMatchObject({ isCaCertificate: true, validityPeriodHours: 8760 });
    const request = one(registered, 'tls:index/certRequest:CertRequest', 'forewarn-webhook');
    expect(request.dnsNames).toEqual([
      'forewarn-webhook',
      'forewarn-webhook.forewarn',
      'forewarn-webhook.forewarn.svc',
      'forewarn-webhook.forewarn.svc.cluster.local',
    ]);
    const cert = one(registered, 'tls:index/locallySignedCert:LocallySignedCert', 'forewarn-webhook');
    expect(cert).toMatchObject({ validityPeriodHours: 8760 });
    expect(cert.allowedUses).toContain('server_auth');
  });

  it('writes the TLS Secret in the layout the webhook reuses', () => {
    const secret = one(registered, 'kubernetes:core/v1:Secret', 'forewarn-webhook-tls');
    expect(secret.type).toBe('kubernetes.io/tls');
    const data = secret.data as { [key: string]: Json };
    expect(Object.keys(data).sort()).toEqual(['ca.crt', 'tls.crt', 'tls.key']);
    const decoded = (key: string): string => Buffer.from(String(data[key]), 'base64').toString('utf8');
    expect(decoded('tls.crt')).toContain('BEGIN CERTIFICATE');
    expect(decoded('tls.key')).toContain('PRIVATE KEY');
    expect(decoded('ca.crt')).toContain('BEGIN CERTIFICATE');
  });

  it('exports the outputs', async () => {
    expect(await valueOf(forewarn.namespace)).toBe('forewarn');
    expect(await valueOf(forewarn.controllerServiceName)).toBe('forewarn-controller');
    expect(await valueOf(forewarn.webhookServiceName)).toBe('forewarn-webhook');
    expect(await valueOf(forewarn.webhookConfigurationName)).toBe('forewarn-webhook');
    expect(await valueOf(forewarn.tlsSecretName)).toBe('forewarn-webhook-tls');
    expect(await valueOf(forewarn.caCertificate)).toContain('BEGIN CERTIFICATE');
    expect(await valueOf(forewarn.portForwardCommand)).toBe(
      'kubectl -n forewarn port-forward svc/forewarn-controller 8080:8080',
    );
    expect(await pulumi.isSecret(forewarn.caCertificate)).toBe(true);
  });
});
