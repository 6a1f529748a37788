// The webhook's knowledge of the API server (admissionWebhook.apiServerClientCa, docs/webhook.md
// "Who gets which warnings"): unset by default; when given, its CA in a ConfigMap mounted read-only
// into the webhook pods and the flags that name it.
import { CertManagement, Forewarn, type ForewarnArgs } from './';
import { resolveForewarnArgs } from './resolve';
import {
  at,
  installMocks,
  one,
  settle,
  valueOf,
  type JsonObject,
  type Registered,
} from '../test/support/infra-harness';

const CA_PEM = '-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n';

async function render(name: string, args: ForewarnArgs = {}): Promise<Registered[]> {
  const registered = installMocks();
  const forewarn = new Forewarn(name, args);
  await valueOf(forewarn.portForwardCommand);
  await settle(registered);
  return registered;
}

function container(deployment: JsonObject): JsonObject {
  return at(deployment, 'spec', 'template', 'spec', 'containers', 0) as JsonObject;
}

const DEPLOYMENT = 'kubernetes:apps/v1:Deployment';
const CONFIG_MAP = 'kubernetes:core/v1:ConfigMap';

describe("the API server's client CA (who gets warnings in full)", () => {
  it('is not configured by default: no flag, no ConfigMap, no mount', async () => {
    const registered = await render('forewarn');
    const webhook = container(one(registered, DEPLOYMENT, 'forewarn-webhook'));
    expect((webhook.args as string[]).filter((arg) => arg.startsWith('--api-server-client'))).toEqual([]);
    expect(registered.filter((resource) => resource.type === CONFIG_MAP)).toEqual([]);
    expect(JSON.stringify(webhook.volumeMounts)).not.toContain('api-server-ca');
  });

  it('keeps the CA in a ConfigMap mounted read-only and passes its file and the names', async () => {
    const registered = await render('fw', {
      admissionWebhook: {
        apiServerClientCa: { caCertificate: CA_PEM, clientNames: ['kube-apiserver', 'apiserver.example'] },
      },
    });
    const configMap = one(registered, CONFIG_MAP, 'fw-webhook-api-server-ca');
    expect(at(configMap, 'metadata', 'namespace')).toBe('fw');
    expect(at(configMap, 'data')).toEqual({ 'ca.crt': CA_PEM });
    const deployment = one(registered, DEPLOYMENT, 'fw-webhook');
    const webhook = container(deployment);
    expect(webhook.args).toEqual(
      expect.arrayContaining([
        '--api-server-client-ca-file=/etc/webhook/api-server-ca/ca.crt',
        '--api-server-client-name=kube-apiserver',
        '--api-server-client-name=apiserver.example',
      ]),
    );
    // Before the extra flags, so an operator's extraArgs still come last.
    expect((webhook.args as string[]).at(-1)).toBe('--api-server-client-name=apiserver.example');
    expect(webhook.volumeMounts).toContainEqual({
      name: 'api-server-ca',
      mountPath: '/etc/webhook/api-server-ca',
      readOnly: true,
    });
    expect(at(deployment, 'spec', 'template', 'spec', 'volumes')).toContainEqual({
      name: 'api-server-ca',
      configMap: { name: 'fw-webhook-api-server-ca' },
    });
  });

  it('works in managed certificate mode too, beside the mounted serving certificate', async () => {
    const registered = await render('fw', {
      admissionWebhook: {
        certManagement: CertManagement.Managed,
        certIssuer: { issuerName: 'ca' },
        apiServerClientCa: { caCertificate: CA_PEM },
      },
    });
    const webhook = container(one(registered, DEPLOYMENT, 'fw-webhook'));
    expect(webhook.args).toContain('--api-server-client-ca-file=/etc/webhook/api-server-ca/ca.crt');
    expect((webhook.args as string[]).filter((arg) => arg.startsWith('--api-server-client-name'))).toEqual(
      [],
    );
    const mounts = (webhook.volumeMounts as Array<{ name: string }>).map((mount) => mount.name);
    expect(mounts).toEqual(expect.arrayContaining(['certs', 'api-server-ca']));
  });

  it('refuses a missing CA and names that are not names', () => {
    const { errors } = resolveForewarnArgs('fw', {
      admissionWebhook: {
        apiServerClientCa: { caCertificate: '', clientNames: ['kube-apiserver', 'two words', ''] },
      },
    });
    expect(errors).toEqual([
      expect.stringMatching(/apiServerClientCa\.caCertificate is required/),
      expect.stringMatching(/apiServerClientCa\.clientNames\[1\] must be a name/),
      expect.stringMatching(/apiServerClientCa\.clientNames\[2\] must be a name/),
    ]);
  });
});
