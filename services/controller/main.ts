#!/usr/bin/env node
import { createLogger } from '../logging/logger';
import { UsageError } from '../flags/command-line';
import { parseControllerConfig } from './config';
import type { ConstraintIndex } from './index/constraint-index';
import type { RunningController } from './runtime';

// The controller process: flags, logs, start, and a graceful stop on SIGTERM/SIGINT.

const SHUTDOWN_DEADLINE_MS = 9_000;

/** The namespace with the most constraints: the most interesting report to try first. */
function busiestNamespace(index: ConstraintIndex): string | undefined {
  return index
    .namespacesWithConstraints()
    .map((namespace) => ({ namespace, count: index.constraintsForNamespace(namespace).length }))
    .sort((left, right) => right.count - left.count || left.namespace.localeCompare(right.namespace))[0]
    ?.namespace;
}

async function main(): Promise<void> {
  let config;
  try {
    config = parseControllerConfig(process.argv.slice(2));
  } catch (error) {
    if (error instanceof UsageError) {
      (error.exitCode === 0 ? process.stdout : process.stderr).write(
        error.output.endsWith('\n') ? error.output : `${error.output}\n`,
      );
      process.exit(error.exitCode);
    }
    throw error;
  }
  const logger = createLogger({ service: 'controller', level: config.logLevel });
  let controller: RunningController | undefined;
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    if (!controller) {
      // Stopped while starting (e.g. a rollout replaced the pod): nothing is served yet, nothing to drain.
      logger.info({ signal }, 'stopped before the first sync completed');
      process.exit(0);
    }
    logger.info({ signal }, 'stopping: draining in-flight requests');
    setTimeout(() => {
      logger.warn('shutdown deadline reached; exiting with requests still open');
      process.exit(0);
    }, SHUTDOWN_DEADLINE_MS).unref();
    controller
      .close()
      .then(() => {
        logger.info('stopped');
        process.exit(0);
      })
      .catch((error: unknown) => {
        logger.error({ err: error }, 'error while stopping');
        process.exit(1);
      });
  };
  // Before starting: without a handler, a SIGTERM during the first sync would kill the process by signal.
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  try {
    // Loaded only now, so `--help` and flag errors answer without loading the server's dependencies.
    const { startController } = await import('./runtime.js');
    controller = await startController(config, logger);
  } catch (error) {
    logger.fatal({ err: error }, 'controller failed to start');
    process.exit(1);
  }
  const base = `http://${config.address === '0.0.0.0' ? 'localhost' : config.address}:${controller.port}`;
  const namespace = busiestNamespace(controller.index) ?? 'default';
  const urls = [
    `${base}/resources/reports/${namespace}`,
    `${base}/resources/health`,
    `${base}/resources/capabilities`,
    `${base}/api/v1/constraints?namespace=${namespace}`,
  ];
  logger.info({ urls }, 'try these URLs');
  if (process.stdout.isTTY)
    process.stderr.write(`\nForewarn is serving. Try:\n${urls.map((url) => `  curl ${url}`).join('\n')}\n\n`);
}

void main();
