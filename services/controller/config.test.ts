import {
  buildControllerCommand,
  effectiveApiAuth,
  parseControllerConfig,
  type ControllerConfig,
} from './config';
import { usageErrorOf } from '../../test/support/usage-error';

// Controller flags (DESIGN.md 2) and their FOREWARN_* environment equivalents. parseControllerConfig
// is pure in argv and env, so nothing here touches the real process environment.

const NO_ENV: NodeJS.ProcessEnv = {};

/** Every flag with a non-default value, its env var, and what it parses to. */
const FLAGS: Array<{
  flag: string;
  env: string;
  value: string;
  expected: Partial<ControllerConfig>;
}> = [
  {
    flag: '--manifests',
    env: 'FOREWARN_MANIFESTS',
    value: 'examples/manifests',
    expected: { manifests: 'examples/manifests' },
  },
  {
    flag: '--kubeconfig',
    env: 'FOREWARN_KUBECONFIG',
    value: '/etc/kube/config',
    expected: { kubeconfig: '/etc/kube/config' },
  },
  { flag: '--address', env: 'FOREWARN_ADDRESS', value: '127.0.0.1', expected: { address: '127.0.0.1' } },
  { flag: '--port', env: 'FOREWARN_PORT', value: '9080', expected: { port: 9080 } },
  { flag: '--mcp-port', env: 'FOREWARN_MCP_PORT', value: '9090', expected: { mcpPort: 9090 } },
  { flag: '--mcp', env: 'FOREWARN_MCP', value: 'false', expected: { mcp: false } },
  { flag: '--detail-level', env: 'FOREWARN_DETAIL_LEVEL', value: 'full', expected: { detailLevel: 'full' } },
  {
    flag: '--rescan-interval',
    env: 'FOREWARN_RESCAN_INTERVAL',
    value: '90s',
    expected: { rescanIntervalMs: 90_000 },
  },
  {
    flag: '--contact',
    env: 'FOREWARN_CONTACT',
    value: 'sre@example.org',
    expected: { contact: 'sre@example.org' },
  },
  {
    flag: '--flowobserver-address',
    env: 'FOREWARN_FLOWOBSERVER_ADDRESS',
    value: 'hubble-relay.kube-system:80',
    expected: { flowobserverAddress: 'hubble-relay.kube-system:80' },
  },
  {
    flag: '--own-webhook',
    env: 'FOREWARN_OWN_WEBHOOK',
    value: 'my-webhook',
    expected: { ownWebhook: 'my-webhook' },
  },
  {
    flag: '--mesh-root-namespace',
    env: 'FOREWARN_MESH_ROOT_NAMESPACE',
    value: 'mesh-root',
    expected: { meshRootNamespace: 'mesh-root' },
  },
  {
    flag: '--opa-path',
    env: 'FOREWARN_OPA_PATH',
    value: '/opt/opa',
    expected: { opaPath: '/opt/opa' },
  },
  {
    flag: '--pod-security-default',
    env: 'FOREWARN_POD_SECURITY_DEFAULT',
    value: 'enforce=baseline,warn=restricted:v1.30',
    expected: {
      podSecurityDefaults: {
        enforce: { level: 'baseline', version: 'latest' },
        warn: { level: 'restricted', version: 'v1.30' },
      },
    },
  },
  {
    flag: '--pod-security-exempt-namespaces',
    env: 'FOREWARN_POD_SECURITY_EXEMPT_NAMESPACES',
    value: 'kube-system, monitoring,kube-system',
    expected: { podSecurityExemptNamespaces: ['kube-system', 'monitoring'] },
  },
  {
    flag: '--pod-security-exempt-runtime-classes',
    env: 'FOREWARN_POD_SECURITY_EXEMPT_RUNTIME_CLASSES',
    value: 'gvisor,kata.containers',
    expected: { podSecurityExemptRuntimeClasses: ['gvisor', 'kata.containers'] },
  },
  {
    flag: '--param-kinds',
    env: 'FOREWARN_PARAM_KINDS',
    value: 'rules.example.com/v1/replicalimits, policy.example.org/v1beta1/limits,',
    expected: {
      paramKinds: [
        { group: 'rules.example.com', version: 'v1', plural: 'replicalimits' },
        { group: 'policy.example.org', version: 'v1beta1', plural: 'limits' },
      ],
    },
  },
  {
    flag: '--reference-key-file',
    env: 'FOREWARN_REFERENCE_KEY_FILE',
    value: '/var/run/forewarn/reference-key',
    expected: { referenceKeyFile: '/var/run/forewarn/reference-key' },
  },
  {
    flag: '--disable-missing-rule',
    env: 'FOREWARN_DISABLE_MISSING_RULE',
    value: 'crd,monitoring',
    expected: { disabledMissingRules: ['crd', 'monitoring'] },
  },
  {
    flag: '--missing-debounce',
    env: 'FOREWARN_MISSING_DEBOUNCE',
    value: '2m',
    expected: { missingDebounceMs: 120_000 },
  },
  { flag: '--log-level', env: 'FOREWARN_LOG_LEVEL', value: 'debug', expected: { logLevel: 'debug' } },
  { flag: '--api-auth', env: 'FOREWARN_API_AUTH', value: 'none', expected: { apiAuth: 'none' } },
  { flag: '--caller-rbac', env: 'FOREWARN_CALLER_RBAC', value: 'false', expected: { callerRbac: false } },
  {
    flag: '--caller-rbac-ttl',
    env: 'FOREWARN_CALLER_RBAC_TTL',
    value: '2s',
    expected: { callerRbacTtlMs: 2000 },
  },
  {
    flag: '--caller-rbac-timeout',
    env: 'FOREWARN_CALLER_RBAC_TIMEOUT',
    value: '500ms',
    expected: { callerRbacTimeoutMs: 500 },
  },
  {
    flag: '--policy-reports',
    env: 'FOREWARN_POLICY_REPORTS',
    value: 'true',
    expected: { policyReports: true },
  },
  {
    flag: '--warm-up',
    env: 'FOREWARN_WARM_UP',
    value: 'false',
    expected: { warmUp: false },
  },
  {
    flag: '--webhook-service-account',
    env: 'FOREWARN_WEBHOOK_SERVICE_ACCOUNT',
    value: 'tools/my-webhook',
    expected: { webhookServiceAccount: 'tools/my-webhook' },
  },
];

/** Invalid values: each must exit 2 with a message naming the flag (or its env var). */
const INVALID: Array<{ flag: string; env: string; value: string }> = [
  { flag: '--port', env: 'FOREWARN_PORT', value: 'http' },
  { flag: '--port', env: 'FOREWARN_PORT', value: '65536' },
  { flag: '--port', env: 'FOREWARN_PORT', value: '' },
  { flag: '--port', env: 'FOREWARN_PORT', value: '0x50' },
  { flag: '--mcp-port', env: 'FOREWARN_MCP_PORT', value: '-1' },
  { flag: '--mcp', env: 'FOREWARN_MCP', value: 'maybe' },
  { flag: '--detail-level', env: 'FOREWARN_DETAIL_LEVEL', value: 'everything' },
  { flag: '--rescan-interval', env: 'FOREWARN_RESCAN_INTERVAL', value: '5 minutes' },
  { flag: '--rescan-interval', env: 'FOREWARN_RESCAN_INTERVAL', value: '0s' },
  { flag: '--contact', env: 'FOREWARN_CONTACT', value: 'not-an-address' },
  { flag: '--flowobserver-address', env: 'FOREWARN_FLOWOBSERVER_ADDRESS', value: 'no-port' },
  { flag: '--missing-debounce', env: 'FOREWARN_MISSING_DEBOUNCE', value: '10d' },
  { flag: '--pod-security-default', env: 'FOREWARN_POD_SECURITY_DEFAULT', value: 'strict' },
  {
    flag: '--pod-security-exempt-namespaces',
    env: 'FOREWARN_POD_SECURITY_EXEMPT_NAMESPACES',
    value: 'Kube_System',
  },
  {
    flag: '--pod-security-exempt-runtime-classes',
    env: 'FOREWARN_POD_SECURITY_EXEMPT_RUNTIME_CLASSES',
    value: 'gvisor,-bad-',
  },
  { flag: '--disable-missing-rule', env: 'FOREWARN_DISABLE_MISSING_RULE', value: 'crd,no-such-rule' },
  // ConfigMap params are never read (least privilege), nor any built-in kind.
  { flag: '--param-kinds', env: 'FOREWARN_PARAM_KINDS', value: '/v1/configmaps' },
  { flag: '--param-kinds', env: 'FOREWARN_PARAM_KINDS', value: 'v1/configmaps' },
  { flag: '--param-kinds', env: 'FOREWARN_PARAM_KINDS', value: 'rbac.authorization.k8s.io/v1/roles' },
  { flag: '--param-kinds', env: 'FOREWARN_PARAM_KINDS', value: 'rules.example.com/v1/Replica_Limits' },
  { flag: '--log-level', env: 'FOREWARN_LOG_LEVEL', value: 'loud' },
  { flag: '--api-auth', env: 'FOREWARN_API_AUTH', value: 'password' },
  { flag: '--caller-rbac-ttl', env: 'FOREWARN_CALLER_RBAC_TTL', value: 'soon' },
  { flag: '--webhook-service-account', env: 'FOREWARN_WEBHOOK_SERVICE_ACCOUNT', value: 'no-slash' },
];

describe('controller configuration', () => {
  it('has the documented defaults', () => {
    expect(parseControllerConfig([], NO_ENV)).toEqual({
      manifests: undefined,
      kubeconfig: undefined,
      address: '0.0.0.0',
      port: 8080,
      mcpPort: 8090,
      mcp: true,
      detailLevel: 'summary',
      rescanIntervalMs: 300_000,
      contact: 'platform-team@example.com',
      flowobserverAddress: undefined,
      ownWebhook: 'forewarn-webhook',
      podSecurityDefaults: undefined,
      podSecurityExemptNamespaces: [],
      podSecurityExemptRuntimeClasses: [],
      meshRootNamespace: 'istio-system',
      missingDebounceMs: 60_000,
      disabledMissingRules: [],
      paramKinds: [],
      logLevel: 'info',
      apiAuth: undefined,
      webhookServiceAccount: 'forewarn-system/forewarn-webhook',
      callerRbac: true,
      callerRbacTtlMs: 30_000,
      callerRbacTimeoutMs: 2000,
      policyReports: false,
      warmUp: true,
    });
  });

  it('writes PolicyReports only into a cluster: --policy-reports with --manifests is a usage error', () => {
    expect(parseControllerConfig(['--policy-reports'], NO_ENV).policyReports).toBe(true);
    const error = usageErrorOf(() =>
      parseControllerConfig(['--manifests', 'examples/manifests', '--policy-reports'], NO_ENV),
    );
    expect(error.exitCode).toBe(2);
    expect(error.message).toMatch(/--policy-reports writes PolicyReports into a cluster/);
  });

  it('trusts every caller of the webhook API on files, and refuses tokenreview there', () => {
    expect(effectiveApiAuth(parseControllerConfig(['--manifests', 'examples/manifests'], NO_ENV))).toBe(
      'none',
    );
    expect(effectiveApiAuth(parseControllerConfig([], NO_ENV))).toBe('tokenreview');
    const error = usageErrorOf(() =>
      parseControllerConfig(['--manifests', 'examples/manifests', '--api-auth', 'tokenreview'], NO_ENV),
    );
    expect(error.exitCode).toBe(2);
    expect(error.message).toMatch(/--api-auth=tokenreview needs a cluster/);
  });

  it.each(FLAGS)(
    'reads $flag as a flag, in both `--flag value` and `--flag=value` forms',
    ({ flag, value, expected }) => {
      expect(parseControllerConfig([flag, value], NO_ENV)).toMatchObject(expected);
      expect(parseControllerConfig([`${flag}=${value}`], NO_ENV)).toMatchObject(expected);
    },
  );

  it.each(FLAGS)('reads $env as the environment equivalent of $flag', ({ env, value, expected }) => {
    expect(parseControllerConfig([], { [env]: value })).toMatchObject(expected);
  });

  it('covers every flag the command defines (a new flag needs a row above)', () => {
    const defined = buildControllerCommand()
      .options.map((option) => option.long)
      .filter((flag): flag is string => flag !== undefined && flag !== '--help')
      .sort();
    expect(defined).toEqual(FLAGS.map(({ flag }) => flag).sort());
  });

  it('lets a flag win over its environment variable', () => {
    expect(parseControllerConfig(['--port', '7000'], { FOREWARN_PORT: '9000' }).port).toBe(7000);
    expect(parseControllerConfig(['--mcp=true'], { FOREWARN_MCP: 'false' }).mcp).toBe(true);
  });

  it('accepts every way a container spec writes the --mcp boolean', () => {
    expect(parseControllerConfig(['--mcp'], NO_ENV).mcp).toBe(true);
    expect(parseControllerConfig(['--mcp=false'], NO_ENV).mcp).toBe(false);
    expect(parseControllerConfig(['--mcp', 'false'], NO_ENV).mcp).toBe(false);
    expect(parseControllerConfig(['--mcp', 'true'], NO_ENV).mcp).toBe(true);
    expect(parseControllerConfig(['--mcp=0'], NO_ENV).mcp).toBe(false);
    expect(parseControllerConfig(['--mcp=yes'], NO_ENV).mcp).toBe(true);
    // A bare --mcp followed by another flag does not swallow it.
    expect(parseControllerConfig(['--mcp', '--port', '1234'], NO_ENV)).toMatchObject({
      mcp: true,
      port: 1234,
    });
    expect(parseControllerConfig([], { FOREWARN_MCP: 'false' }).mcp).toBe(false);
  });

  it('collects --disable-missing-rule when repeated', () => {
    expect(
      parseControllerConfig(['--disable-missing-rule', 'crd', '--disable-missing-rule=mesh-mtls'], NO_ENV)
        .disabledMissingRules,
    ).toEqual(['crd', 'mesh-mtls']);
  });

  it('accepts port 0 (any free port, used by tests) and every duration unit', () => {
    expect(parseControllerConfig(['--port', '0'], NO_ENV).port).toBe(0);
    for (const [text, milliseconds] of [
      ['1500ms', 1_500],
      ['30s', 30_000],
      ['5m', 300_000],
      ['1h', 3_600_000],
    ] as const)
      expect(parseControllerConfig(['--rescan-interval', text], NO_ENV).rescanIntervalMs).toBe(milliseconds);
  });

  it.each(INVALID)(
    'rejects $flag $value with exit code 2 and a message naming the flag',
    ({ flag, value }) => {
      const error = usageErrorOf(() => parseControllerConfig([`${flag}=${value}`], NO_ENV));
      expect(error.exitCode).toBe(2);
      expect(error.output).toContain(flag);
    },
  );

  it.each(INVALID)(
    'rejects $env=$value with exit code 2 naming the flag and the variable',
    ({ flag, env, value }) => {
      const error = usageErrorOf(() => parseControllerConfig([], { [env]: value }));
      expect(error.exitCode).toBe(2);
      expect(error.output).toContain(flag);
      expect(error.output).toContain(env);
    },
  );

  it('rejects unknown flags and stray arguments with exit code 2', () => {
    const unknown = usageErrorOf(() => parseControllerConfig(['--manifest', 'dir'], NO_ENV));
    expect(unknown.exitCode).toBe(2);
    expect(unknown.output).toContain('--manifest');
    const stray = usageErrorOf(() => parseControllerConfig(['examples/manifests'], NO_ENV));
    expect(stray.exitCode).toBe(2);
    expect(stray.output).toMatch(/too many arguments/);
  });

  it('rejects a flag given without its value', () => {
    const error = usageErrorOf(() => parseControllerConfig(['--port'], NO_ENV));
    expect(error.exitCode).toBe(2);
    expect(error.output).toContain('--port');
  });

  it('prints help listing every flag and its env var, with exit code 0', () => {
    for (const helpFlag of ['--help', '-h']) {
      const help = usageErrorOf(() => parseControllerConfig([helpFlag], NO_ENV));
      expect(help.exitCode).toBe(0);
      expect(help.output).toMatch(/^Usage: forewarn-controller/);
      for (const { flag, env } of FLAGS) {
        expect(help.output).toContain(flag);
        expect(help.output).toContain(env);
      }
      expect(help.output).toContain('--help');
      // The env var is listed once per flag, not twice.
      expect(help.output.split('FOREWARN_PORT').length - 1).toBe(1);
    }
  });

  it('does not read or change the real process environment', () => {
    const before = { ...process.env };
    process.env.FOREWARN_PORT = '1111';
    try {
      expect(parseControllerConfig([], { FOREWARN_PORT: '2222' }).port).toBe(2222);
      expect(parseControllerConfig([], NO_ENV).port).toBe(8080);
      expect(process.env.FOREWARN_PORT).toBe('1111');
    } finally {
      process.env = before;
    }
  });
});
