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

/**
 * Fails (never skips) when a tool the tier needs is missing from the tool directories: run.sh has
 * build-tools.sh build every one of them, so a missing binary means the tier was started by hand
 * with a partial FOREWARN_DEPLOY_PATH.
 */
export function requireDeployTools(extra: readonly string[] = []): void {
  const missing = [...REQUIRED_PROVIDERS, 'pulumi', ...extra].filter(
    (tool) => !deployToolDirs().some((dir) => isExecutable(path.join(dir, tool))),
  );
  if (missing.length > 0) {
    throw new Error(
      `${missing.join(', ')} not found in ${deployToolDirs().join(', ')}: run the tier with npm run test:deploy ` +
        '(test/e2e/provision/build-tools.sh builds them; see docs/e2e.md)',
    );
  }
}

/** The directory holding `tool`, from the tool directories (throws when none has it). */
export function toolPath(tool: string): string {
  const dir = deployToolDirs().find((candidate) => isExecutable(path.join(candidate, tool)));
  if (!dir) throw new Error(`${tool} not found in ${deployToolDirs().join(', ')}`);
  return path.join(dir, tool);
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
