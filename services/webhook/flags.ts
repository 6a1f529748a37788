import { isIP } from 'node:net';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import type { LevelWithSilent } from 'pino';
import { parseBoolean, parseDuration } from '../flags/values';
import { isLogLevel } from '../logging/logger';

export { parseBoolean, parseDuration };
import { isDns1123Label } from '../model/kubernetes';
import { MAX_TIMER_MS } from './certs/rotation';
import type { ListenAddress } from './server';

// Command line of the webhook (spec 8 plus the names self-signed mode needs). Every flag can also
// be set as FOREWARN_<FLAG> (e.g. FOREWARN_CONTROLLER_URL); a flag on the command line wins. An
// invalid value exits with status 2 and a message naming the flag (or variable).

export interface WebhookConfig {
  listen: ListenAddress;
  controllerUrl: string;
  namespace: string;
  selfSigned: boolean;
  tlsCertFile: string;
  tlsKeyFile: string;
  webhookName: string;
  serviceName: string;
  secretName: string;
  extraSans: string[];
  kubeconfig: string | null;
  logLevel: LevelWithSilent;
  rotationCheckIntervalMs: number;
  /** The projected ServiceAccount token (audience forewarn-controller) sent to the controller. */
  controllerTokenFile: string | null;
}

/** A usage error: the process should print `message` and exit with `exitCode` (2, or 0 for --help). */
export class FlagError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

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

function parseLevel(text: string): LevelWithSilent {
  if (!isLogLevel(text))
    throw new InvalidArgumentError('expected fatal, error, warn, info, debug, trace or silent');
  return text;
}

function parseInterval(text: string): number {
  const ms = parseDuration(text);
  if (ms <= 0 || ms > MAX_TIMER_MS)
    throw new InvalidArgumentError('expected a duration between 1ms and 596h');
  return ms;
}

function buildCommand(env: NodeJS.ProcessEnv): Command {
  return new Command('forewarn-webhook')
    .description('Admission warning webhook: turns constraints into admission warnings, never rejects')
    .addOption(
      new Option('--addr <host:port>', 'listen address')
        .default(parseListenAddress(':8443'), ':8443')
        .argParser(parseListenAddress),
    )
    .addOption(
      new Option('--controller-url <url>', 'controller API base URL')
        .default('http://forewarn-controller.forewarn-system.svc:8080')
        .argParser(parseHttpUrl),
    )
    .addOption(
      new Option('--namespace <name>', 'namespace the webhook runs in (default: $POD_NAMESPACE)')
        .default(env.POD_NAMESPACE || 'forewarn-system')
        .argParser(parseLabelName),
    )
    .addOption(
      new Option(
        '--self-signed [bool]',
        'self-signed certificates (true) or files from a certificate manager (false)',
      )
        .default(true)
        .argParser(parseBoolean),
    )
    .addOption(
      new Option('--tls-cert-file <path>', 'certificate file (managed mode)').default(
        '/etc/webhook/certs/tls.crt',
      ),
    )
    .addOption(
      new Option('--tls-key-file <path>', 'private key file (managed mode)').default(
        '/etc/webhook/certs/tls.key',
      ),
    )
    .addOption(
      new Option('--webhook-name <name>', 'name of the ValidatingWebhookConfiguration')
        .default('forewarn-webhook')
        .argParser(parseObjectName),
    )
    .addOption(
      new Option('--service-name <name>', 'name of the webhook Service (certificate names)')
        .default('forewarn-webhook')
        .argParser(parseLabelName),
    )
    .addOption(
      new Option(
        '--secret-name <name>',
        'TLS Secret of self-signed mode (default: <webhook-name>-tls)',
      ).argParser(parseObjectName),
    )
    .addOption(
      new Option('--extra-san <name>', 'extra DNS name or IP for the self-signed certificate (repeatable)')
        .default([])
        .argParser(collectSans),
    )
    .addOption(
      new Option(
        '--controller-token-file <path>',
        'projected ServiceAccount token (audience forewarn-controller) sent to the controller as a Bearer token',
      ),
    )
    .addOption(new Option('--kubeconfig <file>', 'kubeconfig file (default: in-cluster, else $KUBECONFIG)'))
    .addOption(new Option('--log-level <level>', 'log level').default('info').argParser(parseLevel))
    .addOption(
      new Option('--rotation-check-interval <duration>', 'self-signed certificate check interval')
        .default(24 * 3_600_000, '24h')
        .argParser(parseInterval),
    )
    .helpOption('-h, --help', 'show this help')
    .allowExcessArguments(false)
    .exitOverride()
    .configureOutput({ writeOut: () => undefined, writeErr: () => undefined });
}

/** `controller-url` → `FOREWARN_CONTROLLER_URL`. */
function envName(flag: string): string {
  return `FOREWARN_${flag.replace(/-/g, '_').toUpperCase()}`;
}

/** Values from FOREWARN_* variables for options not given on the command line. */
function applyEnvironment(command: Command, env: NodeJS.ProcessEnv): void {
  for (const option of command.options) {
    const flag = option.long?.replace(/^--/, '');
    if (!flag || flag === 'help') continue;
    const value = env[envName(flag)];
    const key = option.attributeName();
    if (value === undefined || value === '' || command.getOptionValueSource(key) === 'cli') continue;
    try {
      const parsed: unknown = option.parseArg
        ? option.parseArg(value, flag === 'extra-san' ? [] : undefined)
        : value;
      command.setOptionValueWithSource(key, parsed, 'env');
    } catch (error) {
      throw new FlagError(`invalid ${envName(flag)} (--${flag}) '${value}': ${(error as Error).message}`, 2);
    }
  }
}

export function parseWebhookFlags(args: readonly string[], env: NodeJS.ProcessEnv): WebhookConfig {
  const command = buildCommand(env);
  try {
    command.parse([...args], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.exitCode === 0) throw new FlagError(command.helpInformation(), 0);
      throw new FlagError(error.message.replace(/^error: /, ''), 2);
    }
    throw error;
  }
  applyEnvironment(command, env);
  const options = command.opts<{
    addr: ListenAddress;
    controllerUrl: string;
    namespace: string;
    selfSigned: boolean;
    tlsCertFile: string;
    tlsKeyFile: string;
    webhookName: string;
    serviceName: string;
    secretName?: string;
    extraSan: string[];
    kubeconfig?: string;
    logLevel: LevelWithSilent;
    rotationCheckInterval: number;
    controllerTokenFile?: string;
  }>();
  if (!options.selfSigned && (!options.tlsCertFile || !options.tlsKeyFile)) {
    throw new FlagError('--tls-cert-file and --tls-key-file are required with --self-signed=false', 2);
  }
  return {
    listen: options.addr,
    controllerUrl: options.controllerUrl,
    namespace: options.namespace,
    selfSigned: options.selfSigned,
    tlsCertFile: options.tlsCertFile,
    tlsKeyFile: options.tlsKeyFile,
    webhookName: options.webhookName,
    serviceName: options.serviceName,
    secretName: options.secretName ?? `${options.webhookName}-tls`,
    extraSans: [...new Set(options.extraSan)],
    kubeconfig: options.kubeconfig ?? null,
    logLevel: options.logLevel,
    rotationCheckIntervalMs: options.rotationCheckInterval,
    controllerTokenFile: options.controllerTokenFile ?? null,
  };
}
