import { isIP } from 'node:net';
import { InvalidArgumentError } from 'commander';
import { flag, flagCommand, LOG_LEVEL_FLAG, parseFlags, type FlagValues } from '../flags/command-line';
import { parseBoolean, parseDuration } from '../flags/values';
import { isDns1123Label } from '../model/kubernetes';
import { MAX_TIMER_MS } from './certs/rotation';
import type { ListenAddress } from './server';

// Command line of the webhook (spec 8 plus the names self-signed mode needs). Every flag can also
// be set as FOREWARN_<FLAG> (e.g. FOREWARN_CONTROLLER_URL); a flag on the command line wins. An
// invalid value exits with status 2 and a message naming the flag (or variable).

/** `:8443` (every interface), `127.0.0.1:8443`, `[::1]:8443`. */
export function parseListenAddress(text: string): ListenAddress {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text.trim());
  const port = match ? Number(match[3]) : NaN;
  if (!match || port > 65535) throw new InvalidArgumentError('expected [host]:port, e.g. :8443');
  const host = match[1] ?? match[2];
  return { host: host === '' ? undefined : host, port };
}

function parseHttpUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InvalidArgumentError('expected an http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidArgumentError('expected an http:// or https:// URL');
  }
  return text;
}

function parseLabelName(text: string): string {
  if (!isDns1123Label(text))
    throw new InvalidArgumentError('expected a DNS-1123 label (lower case, digits, -)');
  return text;
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function parseObjectName(text: string): string {
  if (text.length > 253 || !DNS_SUBDOMAIN.test(text)) {
    throw new InvalidArgumentError('expected a DNS-1123 subdomain (lower case, digits, - and .)');
  }
  return text;
}

function parseSan(text: string): string {
  const value = text.trim();
  if (isIP(value) || (value.length <= 253 && DNS_SUBDOMAIN.test(value.toLowerCase()))) return value;
  throw new InvalidArgumentError('expected a DNS name or an IP address');
}

function collectSans(text: string, previous: string[]): string[] {
  // One flag may carry a comma-separated list, which is also how the environment variable is read.
  return [
    ...previous,
    ...text
      .split(',')
      .filter((entry) => entry.trim() !== '')
      .map(parseSan),
  ];
}

function collectNames(text: string, previous: string[]): string[] {
  return [
    ...previous,
    ...text
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry !== ''),
  ];
}

function parseInterval(text: string): number {
  const ms = parseDuration(text);
  if (ms <= 0 || ms > MAX_TIMER_MS)
    throw new InvalidArgumentError('expected a duration between 1ms and 596h');
  return ms;
}

/** Every webhook flag (spec 8): each key is the field of the parsed flags it sets. */
const WEBHOOK_FLAGS = {
  listen: flag({
    flags: '--addr <host:port>',
    help: 'listen address',
    env: 'FOREWARN_ADDR',
    parse: parseListenAddress,
    default: parseListenAddress(':8443'),
    defaultText: ':8443',
  }),
  controllerUrl: flag({
    flags: '--controller-url <url>',
    help: 'controller API base URL',
    env: 'FOREWARN_CONTROLLER_URL',
    parse: parseHttpUrl,
    default: 'http://forewarn-controller.forewarn-system.svc:8080',
  }),
  namespace: flag({
    flags: '--namespace <name>',
    help: 'namespace the webhook runs in (default: $POD_NAMESPACE, else forewarn-system)',
    env: 'FOREWARN_NAMESPACE',
    parse: parseLabelName,
  }),
  selfSigned: flag({
    flags: '--self-signed [bool]',
    help: 'self-signed certificates (true) or files from a certificate manager (false)',
    env: 'FOREWARN_SELF_SIGNED',
    parse: parseBoolean,
    default: true,
  }),
  tlsCertFile: flag({
    flags: '--tls-cert-file <path>',
    help: 'certificate file (managed mode)',
    env: 'FOREWARN_TLS_CERT_FILE',
    default: '/etc/webhook/certs/tls.crt',
  }),
  tlsKeyFile: flag({
    flags: '--tls-key-file <path>',
    help: 'private key file (managed mode)',
    env: 'FOREWARN_TLS_KEY_FILE',
    default: '/etc/webhook/certs/tls.key',
  }),
  webhookName: flag({
    flags: '--webhook-name <name>',
    help: 'name of the ValidatingWebhookConfiguration',
    env: 'FOREWARN_WEBHOOK_NAME',
    parse: parseObjectName,
    default: 'forewarn-webhook',
  }),
  serviceName: flag({
    flags: '--service-name <name>',
    help: 'name of the webhook Service (certificate names)',
    env: 'FOREWARN_SERVICE_NAME',
    parse: parseLabelName,
    default: 'forewarn-webhook',
  }),
  secretName: flag({
    flags: '--secret-name <name>',
    help: 'TLS Secret of self-signed mode (default: <webhook-name>-tls)',
    env: 'FOREWARN_SECRET_NAME',
    parse: parseObjectName,
  }),
  extraSans: flag({
    flags: '--extra-san <name>',
    help: 'extra DNS name or IP for the self-signed certificate (repeatable)',
    env: 'FOREWARN_EXTRA_SAN',
    parse: collectSans,
    default: [] as string[],
  }),
  kubeconfig: flag({
    flags: '--kubeconfig <file>',
    help: 'kubeconfig file (default: in-cluster, else $KUBECONFIG)',
    env: 'FOREWARN_KUBECONFIG',
  }),
  /** The projected ServiceAccount token (audience forewarn-controller) sent to the controller. */
  controllerTokenFile: flag({
    flags: '--controller-token-file <path>',
    help: 'projected ServiceAccount token (audience forewarn-controller) sent to the controller as a Bearer token',
    env: 'FOREWARN_CONTROLLER_TOKEN_FILE',
  }),
  /** Issue 32, row 4: who may get warnings at the webhook's level (docs/webhook.md "Who gets which warnings"). */
  apiServerClientCaFile: flag({
    flags: '--api-server-client-ca-file <path>',
    help: "CA of the client certificate the API server presents to webhooks (its AdmissionConfiguration kubeConfigFile); reviews over a connection with such a certificate get warnings in full, every other caller's as an anonymous caller of the controller sees them",
    env: 'FOREWARN_API_SERVER_CLIENT_CA_FILE',
  }),
  apiServerClientNames: flag({
    flags: '--api-server-client-name <name>',
    help: "the API server's client certificate must name this (its subject CN or a DNS SAN; repeatable); unset: any certificate of the CA",
    env: 'FOREWARN_API_SERVER_CLIENT_NAME',
    parse: collectNames,
    default: [] as string[],
  }),
  trustUnauthenticatedReviews: flag({
    flags: '--trust-unauthenticated-reviews [bool]',
    help: 'give every caller of the webhook port warnings in full, as the API server gets them (only where nothing but the API server can reach the port)',
    env: 'FOREWARN_TRUST_UNAUTHENTICATED_REVIEWS',
    parse: parseBoolean,
    default: false,
  }),
  logLevel: LOG_LEVEL_FLAG,
  /** Issue 33: synthetic reviews through the whole path once it can serve (warm-up.ts). */
  warmUp: flag({
    flags: '--warm-up [enabled]',
    help: 'once serving, send synthetic reviews through itself and the controller so that real reviews find the code compiled',
    env: 'FOREWARN_WARM_UP',
    parse: parseBoolean,
    default: true,
    preset: 'true',
  }),
  rotationCheckIntervalMs: flag({
    flags: '--rotation-check-interval <duration>',
    help: 'self-signed certificate check interval',
    env: 'FOREWARN_ROTATION_CHECK_INTERVAL',
    parse: parseInterval,
    default: 24 * 3_600_000,
    defaultText: '24h',
  }),
};

type WebhookFlags = FlagValues<typeof WEBHOOK_FLAGS>;

/** The parsed flags with the defaults that depend on other flags filled in. */
export type WebhookConfig = Omit<
  WebhookFlags,
  'namespace' | 'secretName' | 'kubeconfig' | 'controllerTokenFile' | 'apiServerClientCaFile'
> & {
  namespace: string;
  apiServerClientCaFile: string | null;
  controllerTokenFile: string | null;
  secretName: string;
  kubeconfig: string | null;
};

export function parseWebhookFlags(args: readonly string[], env: NodeJS.ProcessEnv): WebhookConfig {
  const command = flagCommand(
    'forewarn-webhook',
    'Admission warning webhook: turns constraints into admission warnings, never rejects',
    WEBHOOK_FLAGS,
  );
  const flags = parseFlags(command, WEBHOOK_FLAGS, args, env, (values) =>
    !values.selfSigned && (!values.tlsCertFile || !values.tlsKeyFile)
      ? '--tls-cert-file and --tls-key-file are required with --self-signed=false'
      : undefined,
  );
  return {
    ...flags,
    namespace: flags.namespace ?? (env.POD_NAMESPACE || 'forewarn-system'),
    controllerTokenFile: flags.controllerTokenFile ?? null,
    apiServerClientCaFile: flags.apiServerClientCaFile ?? null,
    secretName: flags.secretName ?? `${flags.webhookName}-tls`,
    extraSans: [...new Set(flags.extraSans)],
    kubeconfig: flags.kubeconfig ?? null,
  };
}
