"""Forewarn from Python: the TypeScript component forewarn:index:Forewarn through the SDK that
`pulumi package add ../../plugin` generates (module pulumi_forewarn)."""

import pulumi
import pulumi_forewarn as forewarn

config = pulumi.Config()
name = config.get("name") or "forewarn-py"

component = forewarn.Forewarn(
    name,
    namespace=forewarn.NamespaceArgsArgs(name=config.get("namespace") or name),
    images=forewarn.ImagesArgsArgs(controller=config.get("image") or "forewarn:0.1.0"),
    controller=forewarn.ControllerArgsArgs(
        detail_level=forewarn.DetailLevel.DETAILED,
        contact="platform@example.com",
    ),
    admission_webhook=forewarn.AdmissionWebhookArgsArgs(
        timeout_seconds=3,
        excluded_namespaces=["istio-system"],
    ),
    # Extra annotations on every object, e.g. {"pulumi.com/skipAwait": "true"} on a cluster without nodes.
    annotations=config.get_object("annotations"),
)

pulumi.export("namespace", component.namespace)
pulumi.export("controllerServiceName", component.controller_service_name)
pulumi.export("webhookConfigurationName", component.webhook_configuration_name)
pulumi.export("portForwardCommand", component.port_forward_command)
