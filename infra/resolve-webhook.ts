// The webhook's settings that have a file of their own to keep resolve.ts short: the API server's
// client CA (admissionWebhook.apiServerClientCa, docs/webhook.md "Who gets which warnings").
import type * as pulumi from '@pulumi/pulumi';
import type { ApiServerClientCaArgs } from './args';
import { show } from './checks';

/** The resolved client CA: unset, the webhook knows no API server. */
export interface ResolvedApiServerClientCa {
  caCertificate: pulumi.Input<string>;
  clientNames: string[];
}

/** The API server's client CA, checked: a CA is required, names must be non-empty strings. */
export function resolveApiServerClientCa(
  ca: ApiServerClientCaArgs | undefined,
  errors: string[],
): ResolvedApiServerClientCa | undefined {
  if (ca === undefined) return undefined;
  if (ca.caCertificate === undefined || ca.caCertificate === '') {
    errors.push(
      "admissionWebhook.apiServerClientCa.caCertificate is required: the PEM of the CA that signed the API server's client certificate",
    );
  }
  const clientNames = ca.clientNames ?? [];
  clientNames.forEach((clientName, index) => {
    if (typeof clientName !== 'string' || clientName.trim() === '' || /[\s,]/.test(clientName)) {
      errors.push(
        `admissionWebhook.apiServerClientCa.clientNames[${index}] must be a name without spaces or commas (got ${show(clientName)})`,
      );
    }
  });
  return { caCertificate: ca.caCertificate, clientNames };
}
