// Invalid arguments fail at construction (so at preview) with a ResourceError naming the field, the value
// and the reason; nothing is registered below the component. Also covers the pure resolver's rules.
import * as pulumi from '@pulumi/pulumi';
import { CertManagement, FailurePolicy, Forewarn, type ForewarnArgs } from './';
import { parseGoDuration, resolveForewarnArgs } from './resolve';
import { installMocks, settle } from '../test/support/infra-harness';
import { errorMessage } from '../services/model/error-message';

/** Bypasses the enum types, as a stack config or another language would. */
function loose(args: unknown): ForewarnArgs {
  return args as ForewarnArgs;
}

const CASES: Array<[string, string, ForewarnArgs, RegExp]> = [
  [
    'failurePolicy Fail',
    'fw',
    { admissionWebhook: { failurePolicy: FailurePolicy.Fail } },
    /admissionWebhook\.failurePolicy must be "Ignore" \(got "Fail"\).*block deployments/,
  ],
  [
    'an unknown failurePolicy',
    'fw',
    loose({ admissionWebhook: { failurePolicy: 'Warn' } }),
    /admissionWebhook\.failurePolicy must be "Ignore" \(got "Warn"\)/,
  ],
  [
    'timeoutSeconds 10',
    'fw',
    { admissionWebhook: { timeoutSeconds: 10 } },
    /admissionWebhook\.timeoutSeconds must be an integer from 1 to 9 \(got 10\)/,
  ],
  [
    'timeoutSeconds 0',
    'fw',
    { admissionWebhook: { timeoutSeconds: 0 } },
    /admissionWebhook\.timeoutSeconds must be an integer from 1 to 9 \(got 0\)/,
  ],
  [
    'a fractional timeoutSeconds',
    'fw',
    { admissionWebhook: { timeoutSeconds: 2.5 } },
    /timeoutSeconds must be an integer from 1 to 9 \(got 2.5\)/,
  ],
  [
    'an unknown certManagement',
    'fw',
    loose({ admissionWebhook: { certManagement: 'vault' } }),
    /admissionWebhook\.certManagement must be one of "self-signed", "managed" \(got "vault"\)/,
  ],
  [
    'managed without an issuer',
    'fw',
    { admissionWebhook: { certManagement: CertManagement.Managed } },
    /certManagement is "managed" but no issuer is set/,
  ],
  [
    'an issuerRef without a name',
    'fw',
    {
      admissionWebhook: {
        certManagement: CertManagement.Managed,
        certIssuer: { issuerRef: { kind: 'Issuer' } },
      },
    },
    /certIssuer\.issuerRef must have a name/,
  ],
  [
    'an unknown issuerKind',
    'fw',
    loose({
      admissionWebhook: { certManagement: 'managed', certIssuer: { issuerName: 'ca', issuerKind: 'Vault' } },
    }),
    /certIssuer\.issuerKind must be one of "ClusterIssuer", "Issuer" \(got "Vault"\)/,
  ],
  [
    'renewBefore not shorter than duration',
    'fw',
    loose({
      admissionWebhook: {
        certManagement: 'managed',
        certIssuer: { issuerName: 'ca', duration: '720h', renewBefore: '720h' },
      },
    }),
    /renewBefore \(720h\) must be shorter than duration \(720h\)/,
  ],
  [
    'a duration that is not a Go duration',
    'fw',
    loose({
      admissionWebhook: { certManagement: 'managed', certIssuer: { issuerName: 'ca', duration: '1y' } },
    }),
    /certIssuer\.duration must be a Go duration/,
  ],
  [
    'webhook replicas 0',
    'fw',
    { admissionWebhook: { replicas: 0 } },
    /admissionWebhook\.replicas must be an integer of at least 1 \(got 0\)/,
  ],
  [
    'controller replicas 0',
    'fw',
    { controller: { replicas: 0 } },
    /controller\.replicas must be an integer of at least 1/,
  ],
  [
    'an unknown detailLevel',
    'fw',
    loose({ controller: { detailLevel: 'everything' } }),
    /controller\.detailLevel must be one of "summary", "detailed", "full" \(got "everything"\)/,
  ],
  [
    // Least privilege: ConfigMap params are never read, so the component grants no read on them.
    'a built-in paramKind (ConfigMaps)',
    'fw',
    { controller: { paramKinds: ['v1/configmaps'] } },
    /controller\.paramKinds\[0\]: expected group\/version\/plural/,
  ],
  [
    'a paramKind of a built-in API group',
    'fw',
    {
      controller: {
        paramKinds: ['rules.example.com/v1/replicalimits', 'rbac.authorization.k8s.io/v1/roles'],
      },
    },
    /controller\.paramKinds\[1\]: .*ConfigMap and other built-in params are not read/,
  ],
  [
    'a rescanInterval that is not a duration',
    'fw',
    { controller: { rescanInterval: 'often' } },
    /controller\.rescanInterval must be a duration/,
  ],
  [
    // The controller refuses it at start (exit 2): the component must refuse it first.
    'a rescanInterval under one second',
    'fw',
    { controller: { rescanInterval: '500ms' } },
    /controller\.rescanInterval must be a duration of at least 1s .*must be at least 1s/,
  ],
  [
    'a rescanInterval that is not a Go duration',
    'fw',
    { controller: { rescanInterval: '5 minutes' } },
    /controller\.rescanInterval must be a duration/,
  ],
  [
    'a negative pdb.minAvailable',
    'fw',
    { admissionWebhook: { pdb: { minAvailable: -1 } } },
    /pdb\.minAvailable must be an integer of at least 0/,
  ],
  [
    'an invalid namespace admitted to the controller',
    'fw',
    { controller: { networkPolicy: { allowedNamespaces: ['monitoring', 'Agents!'] } } },
    /controller\.networkPolicy\.allowedNamespaces\[1\] must be a DNS-1123 label/,
  ],
  [
    'an invalid excluded namespace',
    'fw',
    { admissionWebhook: { excludedNamespaces: ['Team_A'] } },
    /admissionWebhook\.excludedNamespaces\[0\] must be a DNS-1123 label/,
  ],
  [
    'an invalid namespace name',
    'fw',
    { namespace: { name: 'My Namespace' } },
    /namespace\.name must be a DNS-1123 label/,
  ],
  [
    'an invalid component name',
    'Forewarn_Prod',
    {},
    /the component name "Forewarn_Prod" must be a DNS-1035 label/,
  ],
  [
    'a component name too long for its Service names',
    `f${'x'.repeat(52)}`,
    {},
    /must be a DNS-1035 label .* of at most 52 characters/,
  ],
  [
    'a resource that is not a quantity',
    'fw',
    { admissionWebhook: { resources: { limits: { memory: '256 MB' } } } },
    /admissionWebhook\.resources\.limits\.memory must be a Kubernetes quantity/,
  ],
  [
    'an unknown pull policy',
    'fw',
    loose({ images: { pullPolicy: 'Sometimes' } }),
    /images\.pullPolicy must be one of "Always", "IfNotPresent", "Never"/,
  ],
  [
    'an unknown toleration operator',
    'fw',
    loose({ tolerations: [{ key: 'a', operator: 'In' }] }),
    /tolerations\[0\]\.operator must be one of "Equal", "Exists"/,
  ],
  [
    'an invalid image pull secret name',
    'fw',
    { imagePullSecrets: ['Registry Credentials'] },
    /imagePullSecrets\[0\] must be a DNS-1123 subdomain/,
  ],
  [
    'an invalid reference-key Secret name',
    'fw',
    { controller: { referenceKeySecret: 'Reference Key' } },
    /controller\.referenceKeySecret must be a DNS-1123 subdomain/,
  ],
];

describe('invalid arguments', () => {
  it.each(CASES)('rejects %s with a ResourceError and its message', async (_label, name, args, message) => {
    const registered = installMocks();
    let thrown: unknown;
    try {
      new Forewarn(name, args);
    } catch (error) {
      thrown = error;
    }
    expect(pulumi.ResourceError.isInstance(thrown)).toBe(true);
    expect(errorMessage(thrown)).toMatch(message);
    expect(errorMessage(thrown)).toContain(`invalid arguments for Forewarn "${name}"`);
    await settle(registered);
    // Only the component itself got registered: no half-built deployment.
    expect(registered.map((resource) => resource.type)).toEqual(['forewarn:index:Forewarn']);
  });

  it('reports every problem at once', () => {
    const { errors } = resolveForewarnArgs('fw', {
      admissionWebhook: { failurePolicy: FailurePolicy.Fail, timeoutSeconds: 30, replicas: 0 },
    });
    expect(errors).toHaveLength(3);
  });

  it('accepts the boundaries 1 and 9 for timeoutSeconds', () => {
    for (const timeoutSeconds of [1, 9]) {
      expect(resolveForewarnArgs('fw', { admissionWebhook: { timeoutSeconds } }).errors).toEqual([]);
    }
  });

  it('accepts a PDB as large as the replicas, with a warning that drains would block', () => {
    const risky = resolveForewarnArgs('fw', { admissionWebhook: { replicas: 1 } });
    expect(risky.errors).toEqual([]);
    expect(risky.warnings).toEqual([expect.stringMatching(/node drains will wait forever/)]);
    expect(resolveForewarnArgs('fw', {}).warnings).toEqual([]);
    expect(
      resolveForewarnArgs('fw', { admissionWebhook: { replicas: 1, pdb: { enabled: false } } }).warnings,
    ).toEqual([]);
  });

  it('ignores the issuer fields in self-signed mode, except an unknown issuerKind', () => {
    expect(resolveForewarnArgs('fw', { admissionWebhook: { certIssuer: { duration: 'x' } } }).errors).toEqual(
      [],
    );
  });
});

describe('parseGoDuration', () => {
  it.each([
    ['8760h', 8760 * 3_600_000],
    ['720h', 720 * 3_600_000],
    ['1h30m', 5_400_000],
    ['5m', 300_000],
    ['1.5s', 1500],
    ['250ms', 250],
  ])('parses %s', (text, milliseconds) => {
    expect(parseGoDuration(text)).toBe(milliseconds);
  });

  it.each(['', '1y', '5', 'h', '1h 30m', '-1h'])('rejects %j', (text) => {
    expect(parseGoDuration(text)).toBeUndefined();
  });
});
