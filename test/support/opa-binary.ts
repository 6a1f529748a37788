import { execFileSync } from 'node:child_process';
import path from 'node:path';

// Open Policy Agent for the tests that run Gatekeeper Rego: built once into the tool cache by
// tools/build-opa.sh (warm: it only prints the path). FOREWARN_OPA_BIN, when set, is used as is.
// Without Go the build fails and so do these tests, with the script's message: they never skip.

let cached: string | undefined;

export function opaBinary(): string {
  if (cached) return cached;
  const fromEnvironment = process.env.FOREWARN_OPA_BIN;
  if (fromEnvironment) return (cached = fromEnvironment);
  const script = path.join(__dirname, '../../tools/build-opa.sh');
  let output: string;
  try {
    output = execFileSync('bash', [script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? String(error);
    throw new Error(
      `tools/build-opa.sh could not provide opa (Go >= 1.25 is needed to build it):\n${stderr}`,
    );
  }
  const line = output.trim().split('\n').pop() ?? '';
  const match = /^FOREWARN_OPA_BIN=(.+)$/.exec(line);
  if (!match) throw new Error(`tools/build-opa.sh printed no FOREWARN_OPA_BIN line:\n${output}`);
  return (cached = match[1]);
}
