import { KubeConfig } from '@kubernetes/client-node';
import { createLogger, type Logger } from '../logging/logger';
import { ManagedCertificateFiles } from './certs/managed';
import { SelfSignedCertificates } from './certs/self-signed-mode';
import { createControllerSource } from './controller-source';
import { UsageError } from '../flags/command-line';
import { parseWebhookFlags, type WebhookConfig } from './flags';
import { createWebhookMetrics, type WebhookMetrics } from './metrics';
import { createWebhookApp, WebhookHttpsServer } from './server';
import { tokenFileReader } from './token-file';
import { scheduleWebhookWarmUp } from './warm-up';
import { errorMessage } from '../model/error-message';
import { readFileSync } from 'node:fs';
import { apiServerCheck } from './api-server-identity';

// Process entry of the webhook (`node dist/services/webhook/main.js`, image path /webhook): wires
// flags, logger, controller client, HTTPS server and the certificate mode, and stops cleanly on
// SIGTERM (stop accepting, drain in-flight reviews, exit within 10 s as the pod's grace period asks).

const DRAIN_MS = 8_000;
const HARD_EXIT_MS = 9_500;

/** `--kubeconfig`, else the pod's service account, else $KUBECONFIG / ~/.kube/config. */
export function loadKubeConfig(file: string | null, env: NodeJS.ProcessEnv = process.env): KubeConfig {
  const kubeConfig = new KubeConfig();
  if (file) kubeConfig.loadFromFile(file);
  else if (env.KUBERNETES_SERVICE_HOST) kubeConfig.loadFromCluster();
  else kubeConfig.loadFromDefault();
  return kubeConfig;
}

interface Stoppable {
  stop(): Promise<void> | void;
}

async function startCertificates(
  config: WebhookConfig,
  server: WebhookHttpsServer,
  logger: Logger,
): Promise<Stoppable> {
  if (!config.selfSigned) {
    const files = new ManagedCertificateFiles({
      certFile: config.tlsCertFile,
      keyFile: config.tlsKeyFile,
      target: server,
      logger,
    });
    // Missing files are not fatal: the manager may still be issuing; readiness waits for them.
    await files.start();
    return files;
  }
  return SelfSignedCertificates.start({
    kubeConfig: loadKubeConfig(config.kubeconfig),
    namespace: config.namespace,
    secretName: config.secretName,
    webhookName: config.webhookName,
    serviceName: config.serviceName,
    extraSans: config.extraSans,
    rotationCheckIntervalMs: config.rotationCheckIntervalMs,
    target: server,
    logger,
  });
}

/**
 * The controller as the webhook asks it: with its token for the API server's reviews, and without
 * for every other caller's (issue 32: they get what the controller tells an anonymous caller).
 */
function controllerSources(config: WebhookConfig, logger: Logger, metrics: WebhookMetrics) {
  const batching = { observeBatch: (checks: number) => metrics.countCheckBatch(checks) };
  const controller = createControllerSource(
    {
      baseUrl: config.controllerUrl,
      bearerToken: config.controllerTokenFile
        ? tokenFileReader(config.controllerTokenFile, logger)
        : undefined,
    },
    batching,
  );
  const anonymousController = createControllerSource({ baseUrl: config.controllerUrl }, batching);
  const clientCaPem = config.apiServerClientCaFile
    ? readFileSync(config.apiServerClientCaFile, 'utf8')
    : undefined;
  return { controller, anonymousController, clientCaPem };
}

export async function main(args: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  let config: WebhookConfig;
  try {
    config = parseWebhookFlags(args, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    if (error.exitCode === 0) process.stdout.write(error.message);
    else process.stderr.write(`forewarn-webhook: ${error.message}\nRun with --help for the flags.\n`);
    process.exit(error.exitCode);
  }

  const logger = createLogger({ service: 'webhook', level: config.logLevel });
  const metrics = createWebhookMetrics();
  const { controller, anonymousController, clientCaPem } = controllerSources(config, logger, metrics);
  // The handler is bound late: the app's readiness asks the server whether a certificate is loaded.
  const server: WebhookHttpsServer = new WebhookHttpsServer(
    (request, response) => app(request, response),
    logger,
    {},
    clientCaPem,
  );
  server.onCertificateChange((notAfter) => metrics.setCertificateExpiry(notAfter));
  const app = createWebhookApp({
    constraints: controller,
    logger,
    isReady: () => server.hasCertificate(),
    metrics,
    callerTrust: {
      isApiServer: apiServerCheck({
        verifiesClientCertificates: clientCaPem !== undefined,
        clientNames: config.apiServerClientNames,
        trustUnauthenticated: config.trustUnauthenticatedReviews,
      }),
      anonymousConstraints: anonymousController,
    },
  });
  const port = await server.listen(config.listen);
  logger.info(
    {
      event: 'listening',
      port,
      controllerUrl: config.controllerUrl,
      certificates: config.selfSigned ? 'self-signed' : 'managed',
      fullWarningsFor: config.trustUnauthenticatedReviews
        ? 'every caller'
        : clientCaPem
          ? 'the API server (client certificate)'
          : 'nobody: no --api-server-client-ca-file, warnings at the controller detail level',
    },
    'webhook listening (HTTPS; readiness waits for a certificate)',
  );

  let certificates: Stoppable | null = null;
  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ event: 'shutdown', signal }, 'stopping: draining in-flight requests');
    setTimeout(() => process.exit(1), HARD_EXIT_MS).unref();
    void (async () => {
      await server.close(DRAIN_MS);
      await Promise.allSettled([certificates?.stop(), controller.close(), anonymousController.close()]);
      logger.info({ event: 'stopped' }, 'stopped');
      process.exit(0);
    })();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  try {
    certificates = await startCertificates(config, server, logger);
  } catch (error) {
    logger.error(
      { event: 'certificates_failed', error: errorMessage(error) },
      'cannot obtain a serving certificate; exiting so Kubernetes restarts the pod (admission continues without warnings meanwhile, failurePolicy Ignore)',
    );
    await server.close(0);
    process.exit(1);
  }
  // Synthetic reviews through the whole path, so real ones find it compiled (warm-up.ts); its
  // retry timer does not hold the process at shutdown.
  if (config.warmUp)
    scheduleWebhookWarmUp({ servingPair: () => server.servingPair(), constraints: controller, logger });
}

if (require.main === module) {
  main(process.argv.slice(2), process.env).catch((error: unknown) => {
    process.stderr.write(`forewarn-webhook: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  });
}
