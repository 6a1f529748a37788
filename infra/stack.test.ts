// The stack program of Pulumi.yaml: `forewarn:*` config keys become component arguments, and the stack
// exports the component's outputs.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as pulumi from '@pulumi/pulumi';
import { parse } from 'yaml';
// Must stay first: it installs the mocks and the stack configuration before the program runs.
import { registered } from '../test/support/infra-stack-setup';
import * as stack from './stack';
import { resolveForewarnArgs } from './resolve';
import { at, one, settle, valueOf } from '../test/support/infra-harness';

describe('stack program (infra/stack.ts)', () => {
  beforeAll(async () => {
    await valueOf(stack.portForwardCommand);
    await settle(registered);
  });

  it('builds the component from the forewarn:* config keys', () => {
    const controller = one(registered, 'kubernetes:apps/v1:Deployment', 'fw-controller');
    expect(at(controller, 'metadata', 'namespace')).toBe('policy-tools');
    expect(at(controller, 'metadata', 'labels', 'team')).toBe('platform');
    const container = at(controller, 'spec', 'template', 'spec', 'containers', 0);
    expect(at(container, 'image')).toBe('registry.example/forewarn:2.0.0');
    expect(at(container, 'imagePullPolicy')).toBe('Always');
    expect(at(container, 'args')).toEqual(
      expect.arrayContaining(['--detail-level=detailed', '--contact=sre@example.com']),
    );
    expect(at(controller, 'spec', 'template', 'spec', 'tolerations')).toEqual([{ operator: 'Exists' }]);
    expect(at(controller, 'spec', 'template', 'spec', 'imagePullSecrets')).toEqual([{ name: 'registry' }]);

    const certificate = one(registered, 'kubernetes:cert-manager.io/v1:Certificate', 'fw-webhook');
    expect(at(certificate, 'spec', 'issuerRef')).toEqual({ name: 'corp-ca', kind: 'ClusterIssuer' });
    const configuration = one(
      registered,
      'kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration',
      'fw-webhook',
    );
    expect(at(configuration, 'webhooks', 0, 'timeoutSeconds')).toBe(3);
    expect(at(configuration, 'webhooks', 0, 'namespaceSelector', 'matchExpressions', 0, 'values')).toEqual([
      'kube-system',
      'kube-public',
      'kube-node-lease',
      'policy-tools',
      'istio-system',
    ]);
  });

  it('exports the outputs', async () => {
    expect(await valueOf(stack.namespace)).toBe('policy-tools');
    expect(await valueOf(stack.controllerServiceName)).toBe('fw-controller');
    expect(await valueOf(stack.webhookServiceName)).toBe('fw-webhook');
    expect(await valueOf(stack.webhookConfigurationName)).toBe('fw-webhook');
    expect(await valueOf(stack.tlsSecretName)).toBe('fw-webhook-tls');
    expect(await valueOf(stack.caCertificate)).toBeUndefined();
    expect(await valueOf(stack.portForwardCommand)).toBe(
      'kubectl -n policy-tools port-forward svc/fw-controller 8080:8080',
    );
  });

  it('maps an empty configuration to the component defaults, in the forewarn-system namespace', () => {
    pulumi.runtime.setAllConfig({});
    const args = stack.argsFromConfig(new pulumi.Config('forewarn'));
    expect(args).toEqual({
      namespace: { name: 'forewarn-system', create: undefined, labels: undefined, annotations: undefined },
      images: undefined,
      controller: undefined,
      admissionWebhook: undefined,
      labels: undefined,
      annotations: undefined,
      nodeSelector: undefined,
      tolerations: undefined,
      priorityClassName: undefined,
      imagePullSecrets: undefined,
    });
  });

  it('accepts the documented example configuration (Pulumi.dev.yaml.example)', () => {
    const file = path.resolve(__dirname, '../Pulumi.dev.yaml.example');
    const example = parse(fs.readFileSync(file, 'utf8')) as { config: { [key: string]: unknown } };
    const values: { [key: string]: string } = {};
    for (const [key, value] of Object.entries(example.config)) {
      values[key] = typeof value === 'string' ? value : JSON.stringify(value);
    }
    pulumi.runtime.setAllConfig(values);
    const config = new pulumi.Config('forewarn');
    const args = stack.argsFromConfig(config);
    expect(args.admissionWebhook?.excludedNamespaces).toEqual(['istio-system']);
    expect(resolveForewarnArgs(config.require('name'), args).errors).toEqual([]);
  });
});
