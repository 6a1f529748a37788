import path from 'node:path';
import { ControllerProcesses, parseLogLines, repositoryRoot, until } from '../../support/controller-process';
import { opaBinary } from '../../support/opa-binary';
import { loadFixtureObjects } from '../../support/yaml-fixtures';

// The real controller process on the Gatekeeper suite of the fidelity tier: it finds opa through
// FOREWARN_OPA_PATH (--opa-path), compiles the Rego templates as they are indexed, and
// POST /api/v1/admission-check answers Gatekeeper's verdicts; without opa it says so at start and
// Rego templates are `unknown` with what to do, while CEL templates are still judged.

const suite = path.join(repositoryRoot, 'test/fidelity/gatekeeper');
const legacy = [...loadFixtureObjects(path.join(suite, 'workloads.yaml')).values()].find(
  (object) => object.metadata?.name === 'legacy',
);

// Compiling runs opa once per template, one at a time: seconds on a loaded machine.
jest.setTimeout(240_000);

const processes = new ControllerProcesses();
afterEach(() => processes.cleanUp());

interface CheckedEntry {
  name: string;
  verdict: string;
  reason?: string;
  evidence: Array<{ path: string; message: string }>;
}

async function check(base: string): Promise<Map<string, CheckedEntry>> {
  const response = await fetch(`${base}/api/v1/admission-check`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ object: legacy, operation: 'CREATE' }),
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { constraints: CheckedEntry[] };
  return new Map(body.constraints.map((entry) => [entry.name, entry]));
}

describe('Gatekeeper verdicts in the controller process', () => {
  it('compiles Rego templates with opa and answers their verdicts', async () => {
    const { running, base } = await processes.startController(suite, {}, undefined, {
      FOREWARN_OPA_PATH: opaBinary(),
    });
    expect(
      parseLogLines(running.stdoutLines).some(
        (line) => line.msg === 'Gatekeeper Rego templates compile with opa',
      ),
    ).toBe(true);
    let last = '';
    // Templates compile in the background from the moment they are indexed.
    const waited = until('the Rego templates compiled', 120_000, async () => {
      const answer = await check(base);
      last = JSON.stringify([...answer.values()].map((entry) => [entry.name, entry.verdict, entry.reason]));
      const compiling = [...answer.values()].some((entry) => entry.reason?.includes('being compiled'));
      return compiling ? undefined : answer;
    });
    const { value: verdicts } = await waited.catch((error: Error) => {
      throw new Error(`${error.message}; last answer: ${last}`);
    });
    expect(verdicts.get('workloads-must-have-owner')).toMatchObject({
      verdict: 'violates',
      evidence: [{ path: '', message: 'you must provide labels: ["owner"]' }],
    });
    expect(verdicts.get('images-from-internal-registry')?.evidence[0]).toMatchObject({
      path: 'spec.template.spec.containers[0]',
    });
    expect(verdicts.get('containers-need-limits')?.verdict).toBe('violates');
  });

  it('without opa, says so and leaves Rego templates unknown with what to do', async () => {
    const { running, base } = await processes.startController(suite, {}, undefined, {
      FOREWARN_OPA_PATH: '/nonexistent/opa',
    });
    const warning = parseLogLines(running.stdoutLines).find((line) =>
      line.msg?.toString().startsWith('opa not found'),
    );
    expect(warning?.level).toBe('warn');
    const verdicts = await check(base);
    expect(verdicts.get('workloads-must-have-owner')).toMatchObject({
      verdict: 'unknown',
      reason: expect.stringContaining('--opa-path') as unknown,
    });
    // CEL templates need no opa.
    expect(verdicts.get('containers-need-limits')?.verdict).toBe('violates');
  });
});
