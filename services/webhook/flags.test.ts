import { parseDuration } from '../flags/values';
import { parseListenAddress, parseWebhookFlags } from './flags';
import { usageErrorOf } from '../../test/support/usage-error';

describe('parseWebhookFlags', () => {
  it('has the documented defaults', () => {
    expect(parseWebhookFlags([], {})).toEqual({
      listen: { host: undefined, port: 8443 },
      controllerTokenFile: null,
      apiServerClientCaFile: null,
      apiServerClientNames: [],
      trustUnauthenticatedReviews: false,
      controllerUrl: 'http://forewarn-controller.forewarn-system.svc:8080',
      namespace: 'forewarn-system',
      selfSigned: true,
      tlsCertFile: '/etc/webhook/certs/tls.crt',
      tlsKeyFile: '/etc/webhook/certs/tls.key',
      webhookName: 'forewarn-webhook',
      serviceName: 'forewarn-webhook',
      secretName: 'forewarn-webhook-tls',
      extraSans: [],
      kubeconfig: null,
      logLevel: 'info',
      warmUp: true,
      rotationCheckIntervalMs: 24 * 3600 * 1000,
    });
  });

  it('takes the namespace from POD_NAMESPACE and the Secret name from the webhook name', () => {
    const config = parseWebhookFlags(['--webhook-name', 'warn-hook'], { POD_NAMESPACE: 'platform' });
    expect(config.namespace).toBe('platform');
    expect(config.secretName).toBe('warn-hook-tls');
  });

  it.each([
    [['--self-signed=false'], false],
    [['--self-signed', 'false'], false],
    [['--self-signed'], true],
    [['--self-signed=true'], true],
  ])('reads %j as self-signed %s', (args, expected) => {
    expect(parseWebhookFlags(args, {}).selfSigned).toBe(expected);
  });

  it('collects repeated and comma-separated --extra-san values', () => {
    expect(
      parseWebhookFlags(['--extra-san', '127.0.0.1', '--extra-san=webhook.local,::1'], {}).extraSans,
    ).toEqual(['127.0.0.1', 'webhook.local', '::1']);
  });

  it('reads FOREWARN_* variables, with command-line flags winning', () => {
    const config = parseWebhookFlags(['--log-level', 'warn'], {
      FOREWARN_CONTROLLER_URL: 'http://127.0.0.1:9999',
      FOREWARN_SELF_SIGNED: 'false',
      FOREWARN_LOG_LEVEL: 'debug',
      FOREWARN_ROTATION_CHECK_INTERVAL: '1h30m',
      FOREWARN_EXTRA_SAN: '10.0.0.1,a.example',
      FOREWARN_ADDR: '127.0.0.1:0',
    });
    expect(config).toMatchObject({
      controllerUrl: 'http://127.0.0.1:9999',
      selfSigned: false,
      logLevel: 'warn',
      rotationCheckIntervalMs: 90 * 60 * 1000,
      extraSans: ['10.0.0.1', 'a.example'],
      listen: { host: '127.0.0.1', port: 0 },
    });
  });

  it.each([
    [['--addr', '8443'], '--addr'],
    [['--controller-url', 'ftp://x'], '--controller-url'],
    [['--self-signed=maybe'], '--self-signed'],
    [['--namespace', 'Not_A_Label'], '--namespace'],
    [['--extra-san', 'bad name!'], '--extra-san'],
    [['--log-level', 'loud'], '--log-level'],
    [['--rotation-check-interval', 'daily'], '--rotation-check-interval'],
    [['--rotation-check-interval', '0s'], '--rotation-check-interval'],
    [['--unknown-flag'], '--unknown-flag'],
  ])('rejects %j with exit code 2 naming %s', (args, flag) => {
    const error = usageErrorOf(() => parseWebhookFlags(args, {}));
    expect(error.exitCode).toBe(2);
    expect(error.message).toContain(flag);
  });

  it('names the variable and the flag for an invalid environment value', () => {
    const error = usageErrorOf(() => parseWebhookFlags([], { FOREWARN_ADDR: 'nowhere' }));
    expect(error.exitCode).toBe(2);
    expect(error.message).toContain('FOREWARN_ADDR (--addr)');
  });

  it('needs both files in managed mode', () => {
    const error = usageErrorOf(() => parseWebhookFlags(['--self-signed=false', '--tls-cert-file='], {}));
    expect(error.message).toContain('--tls-cert-file');
  });

  it('answers --help with exit code 0 and the flag list', () => {
    const error = usageErrorOf(() => parseWebhookFlags(['--help'], {}));
    expect(error.exitCode).toBe(0);
    expect(error.message).toContain('--rotation-check-interval');
  });
});

describe('parseDuration and parseListenAddress', () => {
  it.each([
    ['24h', 86_400_000],
    ['90s', 90_000],
    ['1h30m', 5_400_000],
    ['500ms', 500],
    ['1.5s', 1_500],
  ])('parses %s', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([
    [':8443', { host: undefined, port: 8443 }],
    ['0.0.0.0:443', { host: '0.0.0.0', port: 443 }],
    ['[::1]:8443', { host: '::1', port: 8443 }],
  ])('parses %s', (text, address) => {
    expect(parseListenAddress(text)).toEqual(address);
  });

  it.each(['8443', 'host:99999', '', ':'])('rejects %j', (text) => {
    expect(() => parseListenAddress(text)).toThrow('expected [host]:port');
  });
});
