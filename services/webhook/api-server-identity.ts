import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';

// Who gets warnings in full (issue 32, row 4). The webhook asks the controller with its own token,
// so its answers are unredacted; before, anyone who reached port 8443 with an AdmissionReview got
// them, for any namespace, past the controller's NetworkPolicy and its `--detail-level`. Now only
// the API server does, and it proves who it is with a client certificate (kube-apiserver presents
// one to webhooks when its AdmissionConfiguration names a kubeConfigFile with `client-certificate`
// for the webhook's service): a connection whose certificate chains to `--api-server-client-ca-file`
// (and, if given, names one of `--api-server-client-name`) is the API server. Every other caller
// gets the warnings an anonymous caller of the controller gets (the webhook asks without its token),
// so it learns nothing it could not learn asking the controller itself (docs/webhook.md).

export interface ApiServerIdentityOptions {
  /** The webhook server was given the CA and asks clients for a certificate. */
  verifiesClientCertificates: boolean;
  /** Names one of which the certificate must carry (subject CN or DNS SAN); empty: any of the CA. */
  clientNames: readonly string[];
  /** `--trust-unauthenticated-reviews`: everyone is taken for the API server (the old behaviour). */
  trustUnauthenticated: boolean;
}

/** The subject CN and DNS SANs of a peer certificate as Node reports them. */
function namesOf(certificate: { subject?: { CN?: string | string[] }; subjectaltname?: string }): string[] {
  const commonNames = certificate.subject?.CN;
  const names = Array.isArray(commonNames) ? [...commonNames] : commonNames ? [commonNames] : [];
  for (const entry of (certificate.subjectaltname ?? '').split(',')) {
    const match = /^\s*DNS:(.+)$/.exec(entry);
    if (match) names.push(match[1].trim());
  }
  return names;
}

/** Whether the request came from the API server (see above); false whenever it cannot tell. */
export function apiServerCheck(options: ApiServerIdentityOptions): (request: IncomingMessage) => boolean {
  return (request) => {
    if (options.trustUnauthenticated) return true;
    if (!options.verifiesClientCertificates) return false;
    const socket = request.socket as TLSSocket;
    // `authorized`: the client sent a certificate and it chains to the configured CA.
    if (socket.authorized !== true || typeof socket.getPeerCertificate !== 'function') return false;
    if (options.clientNames.length === 0) return true;
    const names = namesOf(socket.getPeerCertificate());
    return names.some((name) => options.clientNames.includes(name));
  };
}
