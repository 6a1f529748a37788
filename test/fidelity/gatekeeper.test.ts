import { execFileSync } from 'node:child_process';
import path from 'node:path';
import type { KubernetesObject } from '../../services/model/kubernetes';
import { buildAdmissionCheck } from '../../services/controller/verdicts/admission-check';
import { regoEngine } from '../../services/controller/verdicts/gatekeeper/rego-engine';
import { indexObjects } from '../support/controller-fixtures';
import { opaBinary } from '../support/opa-binary';
import { loadFixtureObjects } from '../support/yaml-fixtures';

// Fidelity against Gatekeeper itself (issue 23): the templates, constraints and workloads of
// test/fidelity/gatekeeper/ through `gator test` (Gatekeeper's CLI, its real constraint framework)
// and through Forewarn's admission check. Every (constraint, workload) pair must agree: gator
// reports a violation exactly where Forewarn's verdict is `violates`, and Forewarn decides every
// pair it lists (no `unknown`). The violation messages must agree too, but for one difference of
// the Wasm SDK: a Rego set printed by sprintf reads `["a"]` where Gatekeeper prints `{"a"}`
// (services/controller/verdicts/gatekeeper/rego-sprintf.ts). Prints the figures for docs/accuracy.md.

const GATOR = process.env.FOREWARN_GATOR_BIN ?? '';
/** Each suite: its folder, and how many violations and passes it holds at least. */
const SUITES = [
  { folder: 'gatekeeper', violations: 10, passes: 10 },
  // Selection by the object's and its namespace's labels, OPA built-ins left to the Wasm host, dryrun.
  { folder: 'gatekeeper-selectors', violations: 8, passes: 8 },
];
const GATEKEEPER_GROUP = 'constraints.gatekeeper.sh';

interface GatorResult {
  msg: string;
  constraint: { metadata: { name: string } };
  violatingObject: { kind: string; metadata: { name: string; namespace?: string } };
}

const pairKey = (
  constraint: string,
  object: { kind?: string; metadata?: { name?: string; namespace?: string } },
) => `${constraint} ${object.kind ?? ''}/${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;

/** Gatekeeper's `{"a", "b"}` (a set) as the Wasm SDK's sprintf prints it, `["a", "b"]`. */
const setsAsLists = (message: string) =>
  message.replace(/\{("(?:[^"\\]|\\.)*"(?:, "(?:[^"\\]|\\.)*")*)\}/g, '[$1]');

function gatorViolations(suite: string): Map<string, string[]> {
  // gator exits 1 when it finds violations; its JSON is on stdout either way.
  let output: string;
  try {
    output = execFileSync(GATOR, ['test', '-f', suite, '-o', 'json'], { encoding: 'utf8' });
  } catch (error) {
    output = String((error as { stdout?: string }).stdout ?? '');
    if (!output.trim().startsWith('['))
      throw new Error(`gator test failed: ${String((error as { stderr?: string }).stderr ?? error)}`);
  }
  const violations = new Map<string, string[]>();
  for (const result of JSON.parse(output) as GatorResult[]) {
    const key = pairKey(result.constraint.metadata.name, result.violatingObject);
    violations.set(key, [...(violations.get(key) ?? []), setsAsLists(result.msg)].sort());
  }
  return violations;
}

function suiteObjects(suite: string): KubernetesObject[] {
  return ['templates.yaml', 'constraints.yaml', 'workloads.yaml'].flatMap((file) => [
    ...loadFixtureObjects(path.join(suite, file)).values(),
  ]);
}

describe.each(SUITES)(
  'Gatekeeper fidelity (gator test): $folder',
  ({ folder, violations: minimumViolations, passes: minimumPasses }) => {
    const suite = path.join(__dirname, folder);
    it('agrees with gator on every verdict and message of the suite', async () => {
      if (GATOR === '')
        throw new Error('FOREWARN_GATOR_BIN is not set: run npm run test:fidelity (test/fidelity/run.sh)');
      regoEngine.configure(opaBinary());
      const objects = suiteObjects(suite);
      const { index } = indexObjects(objects);
      const workloads = objects.filter((object) => object.kind !== 'Namespace' && object.metadata?.namespace);
      const check = (object: KubernetesObject) =>
        buildAdmissionCheck(index, { object, operation: 'CREATE' }).constraints.filter((entry) =>
          entry.sourceApiVersion.startsWith(`${GATEKEEPER_GROUP}/`),
        );
      // The first pass starts every template's compilation.
      for (const object of workloads) check(object);
      await regoEngine.settled();

      const gator = gatorViolations(suite);
      const forewarn = new Map<string, { verdict: string; messages: string[] }>();
      for (const object of workloads)
        for (const entry of check(object))
          forewarn.set(pairKey(entry.name, object), {
            verdict: entry.verdict,
            messages: entry.evidence.map((evidence) => evidence.message).sort(),
          });

      const disagreements: string[] = [];
      for (const [key, { verdict, messages }] of forewarn) {
        const gatorMessages = gator.get(key);
        const gatorVerdict = gatorMessages ? 'violates' : 'passes';
        if (verdict !== gatorVerdict)
          disagreements.push(`${key}: gator ${gatorVerdict}, Forewarn ${verdict}`);
        else if (gatorMessages && JSON.stringify(messages) !== JSON.stringify(gatorMessages))
          disagreements.push(
            `${key}: gator says ${JSON.stringify(gatorMessages)}, Forewarn ${JSON.stringify(messages)}`,
          );
      }
      for (const key of gator.keys())
        if (!forewarn.has(key)) disagreements.push(`${key}: gator violates, Forewarn does not list it`);

      const violating = [...forewarn.values()].filter((entry) => entry.verdict === 'violates').length;
      process.stdout.write(
        `Gatekeeper fidelity (${folder}): ${forewarn.size} (constraint, workload) pairs, ${violating} violations ` +
          `(gator ${gator.size}), ${forewarn.size - disagreements.length} agree, ${disagreements.length} disagree\n`,
      );
      expect(disagreements).toEqual([]);
      // The suite exercises both outcomes on every constraint.
      expect(violating).toBeGreaterThanOrEqual(minimumViolations);
      expect(forewarn.size - violating).toBeGreaterThanOrEqual(minimumPasses);
    });
  },
);
