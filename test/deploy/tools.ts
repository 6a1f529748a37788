// What run.sh provisioned for the deploy tier, passed in the environment: the directories holding the
// Pulumi CLI, the providers and the language hosts, and the Python virtualenv.
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/** Directories to put first on PATH for `pulumi` (FOREWARN_DEPLOY_PATH, `:`-separated). */
export function deployToolDirs(): string[] {
  const dirs = (process.env.FOREWARN_DEPLOY_PATH ?? '').split(':').filter((dir) => dir !== '');
  if (dirs.length === 0) {
    throw new Error('FOREWARN_DEPLOY_PATH is not set: run the deploy tier with npm run test:deploy');
  }
  return dirs;
}

/** The virtualenv holding Pulumi's Python SDK (FOREWARN_PYTHON_VENV). */
export function pythonVirtualenv(): string {
  const venv = process.env.FOREWARN_PYTHON_VENV;
  if (!venv) throw new Error('FOREWARN_PYTHON_VENV is not set: run the deploy tier with npm run test:deploy');
  return venv;
}

/**
 * Stack configuration lines that make Pulumi skip waiting for Deployments to become Available: no
 * kubelet runs here, so their pods never start. It is the test program's configuration (the
 * component's `annotations` argument), never a default of the component.
 */
export function skipAwaitConfig(): string[] {
  return ['forewarn:annotations:', "  pulumi.com/skipAwait: 'true'"];
}

/** The resource plugins `pulumi up` of the component needs, looked up in the tool directories. */
export const REQUIRED_PROVIDERS = ['pulumi-resource-kubernetes', 'pulumi-resource-tls'] as const;

/** Which required providers are missing from the tool directories (empty when all are there). */
export function missingProviders(): string[] {
  return REQUIRED_PROVIDERS.filter(
    (provider) => !deployToolDirs().some((dir) => isExecutable(path.join(dir, provider))),
  );
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * `test` when every provider is there, else `test.skip` with the reason printed once: tests that
 * create Kubernetes objects cannot run without the Kubernetes and TLS providers, while the ones that
 * fail before any object is registered (invalid arguments, `pulumi package add`) still run.
 */
export function testNeedingProviders(file: string): jest.It {
  const missing = missingProviders();
  if (missing.length === 0) return test;
  console.log(
    `[deploy] ${file}: SKIPPING the tests that create objects: ${missing.join(', ')} not found in ` +
      `${deployToolDirs().join(', ')} (test/e2e/provision/build-tools.sh could not build them; see docs/e2e.md)`,
  );
  return test.skip;
}
