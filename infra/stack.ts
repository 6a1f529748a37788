// The stack program of Pulumi.yaml (compiled to dist/infra/stack.js). It reads the `forewarn:*` stack
// configuration, deploys one Forewarn component, and exports its outputs. The Kubernetes cluster is the
// default provider's: `kubernetes:context` / `kubernetes:kubeconfig` config, else KUBECONFIG.
// The config keys are documented in docs/deploy.md; every one is optional.
import * as pulumi from '@pulumi/pulumi';
import type { AdmissionWebhookArgs, ControllerArgs, ForewarnArgs, ImagesArgs, Toleration } from './args';
import { Forewarn } from './forewarn';

type StringMap = { [key: string]: string };

export const DEFAULT_STACK_NAMESPACE = 'forewarn-system';

/** The component arguments described by the stack configuration. */
export function argsFromConfig(config: pulumi.Config): ForewarnArgs {
  return {
    namespace: {
      // The stack deploys into the conventional system namespace (spec 8: "the service's system
      // namespace"), which every doc and port-forward hint uses; the component alone defaults to its name.
      name: config.get('namespace') ?? DEFAULT_STACK_NAMESPACE,
      create: config.getBoolean('createNamespace'),
      labels: config.getObject<StringMap>('namespaceLabels'),
      annotations: config.getObject<StringMap>('namespaceAnnotations'),
    },
    images: config.getObject<ImagesArgs>('images'),
    controller: config.getObject<ControllerArgs>('controller'),
    admissionWebhook: config.getObject<AdmissionWebhookArgs>('admissionWebhook'),
    labels: config.getObject<StringMap>('labels'),
    annotations: config.getObject<StringMap>('annotations'),
    nodeSelector: config.getObject<StringMap>('nodeSelector'),
    tolerations: config.getObject<Toleration[]>('tolerations'),
    priorityClassName: config.get('priorityClassName'),
    imagePullSecrets: config.getObject<string[]>('imagePullSecrets'),
  };
}

const config = new pulumi.Config('forewarn');
const forewarn = new Forewarn(config.get('name') ?? 'forewarn', argsFromConfig(config));

export const namespace = forewarn.namespace;
export const controllerServiceName = forewarn.controllerServiceName;
export const webhookServiceName = forewarn.webhookServiceName;
export const webhookConfigurationName = forewarn.webhookConfigurationName;
export const tlsSecretName = forewarn.tlsSecretName;
export const caCertificate = forewarn.caCertificate;
export const portForwardCommand = forewarn.portForwardCommand;
