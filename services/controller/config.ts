import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { DETAIL_LEVELS, isDetailLevel, type DetailLevel } from '../model/api';
import { parseBoolean, parseDuration } from '../flags/values';
import { isLogLevel, type LOG_LEVELS } from '../logging/logger';

export { parseBoolean, parseDuration };
import { MISSING_RULES, type MissingRuleName } from './missing/rules';
import { parseRescanInterval } from '../flags/rescan-interval';
import {
  parsePodSecurityDefaults,
  PodSecurityValueError,
  type PodSecurityDefaults,
} from '../model/pod-security';

export { parseRescanInterval };

// Controller flags (DESIGN.md 2), each also settable as a FOREWARN_* environment variable, parsed
// with commander. Parsing is a pure function of argv and env so it is tested without a process.

export interface ControllerConfig {
  manifests?: string;
  kubeconfig?: string;
  address: string;
  port: number;
  mcpPort: number;
  mcp: boolean;
  detailLevel: DetailLevel;
  rescanIntervalMs: number;
  contact: string;
  flowobserverAddress?: string;
  ownWebhook: string;
  meshRootNamespace: string;
  /** Pod Security Admission defaults of the cluster's AdmissionConfiguration, when the operator knows them. */
  podSecurityDefaults?: PodSecurityDefaults;
  missingDebounceMs: number;
  disabledMissingRules: MissingRuleName[];
  logLevel: (typeof LOG_LEVELS)[number];
}

export class ConfigError extends Error {
  constructor(
    message: string,
    /** 0 for --help/--version, 2 for invalid flags. */
    readonly exitCode: number,
    /** Text to print (help, or the error) as commander formatted it. */
    readonly output: string,
  ) {
    super(message);
  }
}

function parsePodSecurityDefaultFlag(value: string): PodSecurityDefaults {
  try {
    return parsePodSecurityDefaults(value);
  } catch (error) {
    if (error instanceof PodSecurityValueError) throw new InvalidArgumentError(error.message);
    throw error;
  }
}

export function parsePort(value: string): number {
  // Digits only: Number() would read "" (an empty FOREWARN_PORT) as 0, a random port, and "0x50" as 80.
  const port = /^\d{1,5}$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new InvalidArgumentError(`expected a port number 0-65535, got ${JSON.stringify(value)}`);
  return port;
}

function parseDetailLevel(value: string): DetailLevel {
  if (!isDetailLevel(value)) throw new InvalidArgumentError(`expected one of ${DETAIL_LEVELS.join(', ')}`);
  return value;
}

function parseEmail(value: string): string {
  if (!/^[^\s@]+@[^\s@]+$/.test(value))
    throw new InvalidArgumentError(`expected an e-mail address, got ${JSON.stringify(value)}`);
  return value;
}

function parseHostPort(value: string): string {
  if (!/^[^\s:]+:\d{1,5}$/.test(value))
    throw new InvalidArgumentError(`expected host:port, got ${JSON.stringify(value)}`);
  return value;
}

function parseLogLevel(value: string): (typeof LOG_LEVELS)[number] {
  if (!isLogLevel(value))
    throw new InvalidArgumentError('expected fatal, error, warn, info, debug, trace or silent');
  return value;
}

function collectMissingRule(value: string, previous: MissingRuleName[] = []): MissingRuleName[] {
  const rules = value
    .split(',')
    .map((rule) => rule.trim())
    .filter((rule) => rule !== '');
  for (const rule of rules)
    if (!(MISSING_RULES as readonly string[]).includes(rule))
      throw new InvalidArgumentError(
        `unknown rule ${JSON.stringify(rule)}; expected ${MISSING_RULES.join(', ')}`,
      );
  return [...previous, ...(rules as MissingRuleName[])];
}

/** commander lists the env var in `--help` itself ("env: FOREWARN_..."), so the text does not repeat it. */
function option(flags: string, description: string, environment: string): Option {
  return new Option(flags, description).env(environment);
}

export function buildControllerCommand(): Command {
  return new Command('forewarn-controller')
    .description(
      'Indexes the policies that constrain each namespace and serves them read-only over HTTP and MCP.',
    )
    .addOption(
      option(
        '--manifests <dir>',
        'read objects from YAML/JSON files under DIR instead of a cluster',
        'FOREWARN_MANIFESTS',
      ),
    )
    .addOption(
      option(
        '--kubeconfig <file>',
        'kubeconfig file (default: in-cluster, then KUBECONFIG, then ~/.kube/config)',
        'FOREWARN_KUBECONFIG',
      ),
    )
    .addOption(option('--address <ip>', 'address to listen on', 'FOREWARN_ADDRESS').default('0.0.0.0'))
    .addOption(option('--port <port>', 'HTTP port', 'FOREWARN_PORT').default(8080).argParser(parsePort))
    .addOption(
      option('--mcp-port <port>', 'agent protocol (MCP) port', 'FOREWARN_MCP_PORT')
        .default(8090)
        .argParser(parsePort),
    )
    .addOption(
      option('--mcp [enabled]', 'serve the agent protocol (MCP)', 'FOREWARN_MCP')
        .default(true)
        .preset('true')
        .argParser(parseBoolean),
    )
    .addOption(
      option(
        '--detail-level <level>',
        'most detailed privacy level served: summary, detailed, full',
        'FOREWARN_DETAIL_LEVEL',
      )
        .default('summary')
        .argParser(parseDetailLevel),
    )
    .addOption(
      option(
        '--rescan-interval <duration>',
        'interval of API discovery / CRD rescans',
        'FOREWARN_RESCAN_INTERVAL',
      )
        .default(300_000, '5m')
        .argParser(parseRescanInterval),
    )
    .addOption(
      option('--contact <email>', 'default contact on manual remediation steps', 'FOREWARN_CONTACT')
        .default('platform-team@example.com')
        .argParser(parseEmail),
    )
    .addOption(
      option(
        '--flowobserver-address <host:port>',
        'flow observer to check reachability of',
        'FOREWARN_FLOWOBSERVER_ADDRESS',
      ).argParser(parseHostPort),
    )
    .addOption(
      option(
        '--own-webhook <name>',
        "Forewarn's own webhook configuration, never reported",
        'FOREWARN_OWN_WEBHOOK',
      ).default('forewarn-webhook'),
    )
    .addOption(
      option(
        '--mesh-root-namespace <namespace>',
        'mesh root namespace whose policies apply mesh-wide',
        'FOREWARN_MESH_ROOT_NAMESPACE',
      ).default('istio-system'),
    )
    .addOption(
      option(
        '--pod-security-default <level>',
        "the cluster's Pod Security Admission default for unlabelled namespaces (AdmissionConfiguration): LEVEL[:VERSION] for enforce, or mode=LEVEL[:VERSION],... ; unknown to Forewarn otherwise",
        'FOREWARN_POD_SECURITY_DEFAULT',
      ).argParser(parsePodSecurityDefaultFlag),
    )
    .addOption(
      option(
        '--missing-debounce <duration>',
        'how long a companion resource must be missing before it is reported',
        'FOREWARN_MISSING_DEBOUNCE',
      )
        .default(60_000, '60s')
        .argParser(parseDuration),
    )
    .addOption(
      option(
        '--disable-missing-rule <rule>',
        `companion-resource rule to turn off (repeatable or comma-separated): ${MISSING_RULES.join(', ')}`,
        'FOREWARN_DISABLE_MISSING_RULE',
      )
        .default([])
        .argParser(collectMissingRule),
    )
    .addOption(
      option('--log-level <level>', 'log level', 'FOREWARN_LOG_LEVEL')
        .default('info')
        .argParser(parseLogLevel),
    )
    .helpOption('-h, --help', 'show this help')
    .allowExcessArguments(false);
}

interface ParsedOptions {
  manifests?: string;
  kubeconfig?: string;
  address: string;
  port: number;
  mcpPort: number;
  mcp: boolean;
  detailLevel: DetailLevel;
  rescanInterval: number;
  contact: string;
  flowobserverAddress?: string;
  ownWebhook: string;
  meshRootNamespace: string;
  podSecurityDefault?: PodSecurityDefaults;
  missingDebounce: number;
  disableMissingRule: MissingRuleName[];
  logLevel: (typeof LOG_LEVELS)[number];
}

/** Parses argv (without node and script) and env; throws ConfigError for help and invalid flags. */
export function parseControllerConfig(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): ControllerConfig {
  const command = buildControllerCommand();
  let output = '';
  command
    .exitOverride()
    .configureOutput({ writeOut: (text) => (output += text), writeErr: (text) => (output += text) });
  const savedEnv = process.env;
  try {
    // commander reads option env vars from process.env; give it the env under test.
    process.env = { ...env };
    command.parse([...argv], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      throw new ConfigError(error.message, error.exitCode === 0 ? 0 : 2, output || error.message);
    }
    throw error;
  } finally {
    process.env = savedEnv;
  }
  const options = command.opts<ParsedOptions>();
  return {
    manifests: options.manifests,
    kubeconfig: options.kubeconfig,
    address: options.address,
    port: options.port,
    mcpPort: options.mcpPort,
    mcp: options.mcp,
    detailLevel: options.detailLevel,
    rescanIntervalMs: options.rescanInterval,
    contact: options.contact,
    flowobserverAddress: options.flowobserverAddress,
    ownWebhook: options.ownWebhook,
    meshRootNamespace: options.meshRootNamespace,
    podSecurityDefaults: options.podSecurityDefault,
    missingDebounceMs: options.missingDebounce,
    disabledMissingRules: options.disableMissingRule,
    logLevel: options.logLevel,
  };
}
