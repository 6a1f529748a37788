// Every Kubernetes object the component renders, in every mode, validates against the Kubernetes OpenAPI
// schema (kubernetes-models 4.5) and the cert-manager Certificate against its CRD schema
// (@kubernetes-models/cert-manager). The validators check types and required fields, not names.
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
  installMocks,
  isKubernetes,
  manifest,
  settle,
  validateManifest,
  valueOf,
} from '../test/support/infra-harness';

const MODES: Array<[string, ForewarnArgs]> = [
  ['default (self-signed)', {}],
  [
    'managed with issuerName',
    {
      admissionWebhook: {
        certManagement: CertManagement.Managed,
        certIssuer: { issuerName: 'corp-ca', issuerKind: IssuerKind.ClusterIssuer },
      },
    },
  ],
  [
    'managed with issuerRef',
    {
      admissionWebhook: {
        certManagement: CertManagement.Managed,
        certIssuer: {
          issuerRef: { name: 'pca', kind: 'AWSPCAClusterIssuer', group: 'awspca.cert-manager.io' },
        },
      },
    },
  ],
  [
    'every value set',
    {
      namespace: { name: 'policy-tools', labels: { team: 'platform' } },
      images: { controller: 'registry.example/forewarn:1', pullPolicy: ImagePullPolicy.Always },
      controller: {
        replicas: 2,
        detailLevel: DetailLevel.Full,
        mcp: false,
        flowobserverAddress: 'relay:4245',
        contact: 'sre@example.com',
        rescanInterval: '1m',
      },
      admissionWebhook: {
        replicas: 3,
        timeoutSeconds: 9,
        pdb: { minAvailable: 2 },
        excludedNamespaces: ['istio-system'],
      },
      labels: { 'cost-center': 'cc-42' },
      annotations: { owner: 'sre' },
      nodeSelector: { 'kubernetes.io/os': 'linux' },
      tolerations: [
        {
          key: 'dedicated',
          operator: TolerationOperator.Equal,
          value: 'infra',
          effect: TaintEffect.NoExecute,
          tolerationSeconds: 60,
        },
        { operator: TolerationOperator.Exists },
      ],
      priorityClassName: 'high',
      imagePullSecrets: ['registry'],
    },
  ],
  ['webhook disabled', { admissionWebhook: { enabled: false } }],
  [
    'existing namespace, no PDB',
    { namespace: { name: 'ops', create: false }, admissionWebhook: { pdb: { enabled: false } } },
  ],
];

describe('OpenAPI validation of every rendered object', () => {
  it.each(MODES)('%s', async (_mode, args) => {
    const registered = installMocks();
    const forewarn = new Forewarn('fw', args);
    await valueOf(forewarn.portForwardCommand);
    await settle(registered);
    const objects = registered.filter(isKubernetes).map(manifest);
    expect(objects.length).toBeGreaterThan(5);
    for (const object of objects) {
      expect(() => validateManifest(object)).not.toThrow();
    }
  });

  it('the validators do reject an invalid object (the check is not vacuous)', () => {
    expect(() =>
      validateManifest({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'x' },
        spec: { replicas: '2' },
      }),
    ).toThrow(/apps\/v1\/Deployment x: .*replicas must be integer/);
    expect(() =>
      validateManifest({
        apiVersion: 'cert-manager.io/v1',
        kind: 'Certificate',
        metadata: { name: 'c' },
        spec: { secretName: 's' },
      }),
    ).toThrow(/issuerRef/);
    expect(() => validateManifest({ apiVersion: 'example.com/v1', kind: 'Unknown' })).toThrow(
      /no schema known/,
    );
  });
});
