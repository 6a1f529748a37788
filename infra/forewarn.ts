import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import type { ForewarnArgs } from './args';
import { objectLabels, type BuildContext } from './common';
import { CONTROLLER_HTTP_PORT, createController } from './controller';
import { resolveForewarnArgs } from './resolve';
import { createWebhook } from './webhook';

/**
 * Forewarn: explains every policy that constrains a Kubernetes namespace, and turns those constraints into
 * admission warnings that never block. Deploys the controller (read-only index, HTTP API on 8080, MCP on
 * 8090) and, unless disabled, the admission warning webhook with its TLS, disruption budget and
 * registration. Every object name is derived from the component's name, so several instances coexist.
 */
export class Forewarn extends pulumi.ComponentResource {
  /** The namespace Forewarn runs in. */
  public readonly namespace: pulumi.Output<string>;
  /** Name of the controller's Service (HTTP 8080, MCP 8090). */
  public readonly controllerServiceName: pulumi.Output<string>;
  /** Name of the webhook's Service; unset when the webhook is disabled. */
  public readonly webhookServiceName: pulumi.Output<string | undefined>;
  /** Name of the ValidatingWebhookConfiguration; unset when the webhook is disabled. */
  public readonly webhookConfigurationName: pulumi.Output<string | undefined>;
  /** Name of the webhook's TLS Secret; unset when the webhook is disabled. */
  public readonly tlsSecretName: pulumi.Output<string | undefined>;
  /**
   * PEM of the CA created at the first deploy (self-signed mode; secret). After the webhook rotates its
   * certificate, the Secret's `ca.crt` is authoritative. Unset in managed mode and when the webhook is
   * disabled.
   */
  public readonly caCertificate: pulumi.Output<string | undefined>;
  /** A command that makes the controller's API reachable on http://localhost:8080. */
  public readonly portForwardCommand: pulumi.Output<string>;

  constructor(name: string, args: ForewarnArgs = {}, opts?: pulumi.ComponentResourceOptions) {
    super('forewarn:index:Forewarn', name, {}, opts);

    const { config, errors, warnings } = resolveForewarnArgs(name, args);
    if (errors.length > 0) {
      // Thrown before any child exists: a preview fails with every problem listed, nothing half-built.
      throw new pulumi.ResourceError(
        `invalid arguments for Forewarn "${name}":\n${errors.map((error) => `  - ${error}`).join('\n')}`,
        this,
        true,
      );
    }
    for (const warning of warnings) {
      void pulumi.log.warn(warning, this);
    }
    const { names } = config;

    const childOpts: pulumi.CustomResourceOptions = { parent: this };
    const namespace = config.createNamespace
      ? new k8s.core.v1.Namespace(
          names.namespace,
          {
            metadata: {
              name: names.namespace,
              labels: { ...config.namespaceLabels, ...objectLabels(config) },
              annotations: { ...config.annotations, ...config.namespaceAnnotations },
            },
          },
          childOpts,
        ).metadata.name
      : pulumi.output(names.namespace);
    const ctx: BuildContext = { config, namespace, opts: childOpts };

    const controller = createController(ctx);
    const webhook = config.webhook.enabled ? createWebhook(ctx) : undefined;

    this.namespace = namespace;
    this.controllerServiceName = controller.service.metadata.name;
    this.webhookServiceName = webhook ? webhook.service.metadata.name : pulumi.output(undefined);
    this.webhookConfigurationName = webhook ? webhook.configuration.metadata.name : pulumi.output(undefined);
    this.tlsSecretName = pulumi.output(webhook ? names.tlsSecret : undefined);
    this.caCertificate = webhook?.caCertificate
      ? pulumi.secret(webhook.caCertificate)
      : pulumi.secret(pulumi.output<string | undefined>(undefined));
    this.portForwardCommand = pulumi.interpolate`kubectl -n ${namespace} port-forward svc/${this.controllerServiceName} ${CONTROLLER_HTTP_PORT}:${CONTROLLER_HTTP_PORT}`;

    this.registerOutputs({
      namespace: this.namespace,
      controllerServiceName: this.controllerServiceName,
      webhookServiceName: this.webhookServiceName,
      webhookConfigurationName: this.webhookConfigurationName,
      tlsSecretName: this.tlsSecretName,
      caCertificate: this.caCertificate,
      portForwardCommand: this.portForwardCommand,
    });
  }
}
