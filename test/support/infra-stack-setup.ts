// Runs before infra/stack.ts is imported by stack.test.ts (imports execute in order): the stack program
// reads its configuration and registers its resources as soon as it is loaded.
import * as pulumi from '@pulumi/pulumi';
import { installMocks } from './infra-harness';

export const STACK_CONFIG: { [key: string]: string } = {
  'forewarn:name': 'fw',
  'forewarn:namespace': 'policy-tools',
  'forewarn:images': JSON.stringify({ controller: 'registry.example/forewarn:2.0.0', pullPolicy: 'Always' }),
  'forewarn:controller': JSON.stringify({ detailLevel: 'detailed', contact: 'sre@example.com' }),
  'forewarn:admissionWebhook': JSON.stringify({
    certManagement: 'managed',
    certIssuer: { issuerName: 'corp-ca', issuerKind: 'ClusterIssuer' },
    excludedNamespaces: ['istio-system'],
    timeoutSeconds: 3,
  }),
  'forewarn:labels': JSON.stringify({ team: 'platform' }),
  'forewarn:tolerations': JSON.stringify([{ operator: 'Exists' }]),
  'forewarn:imagePullSecrets': JSON.stringify(['registry']),
};

export const registered = installMocks();
pulumi.runtime.setAllConfig(STACK_CONFIG);
