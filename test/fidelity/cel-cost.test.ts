import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileCel, toCelInput } from '../../services/controller/verdicts/cel/cel-program';
import { RUNTIME_CEL_COST_BUDGET } from '../../services/controller/verdicts/cel/runtime-cost';
import { costCases, type CostCase } from './cel-cost-cases';

// Forewarn's CEL cost (services/controller/verdicts/cel/runtime-cost.ts) against the cost the API
// server's own CEL stack counts for the same expressions and objects (test/fidelity/cel-cost, built
// by build-cel-cost.sh; run.sh exports FOREWARN_CEL_COST_BIN). Equal, or listed with the reason in
// cel-cost/allowed-differences.json (reviewed like code).

interface OracleResult {
  name: string;
  totalCost: number;
  budgetExceeded: boolean;
  expressions: Array<{ expression: string; cost: number; error?: string }>;
  error?: string;
}

interface AllowedDifference {
  case: string;
  reason: string;
}

const oracleDirectory = process.env.FOREWARN_CEL_COST_BIN ?? '';
const oracle = join(oracleDirectory, 'cel-cost');
const allowed = JSON.parse(
  readFileSync(join(__dirname, 'cel-cost', 'allowed-differences.json'), 'utf8'),
) as AllowedDifference[];

function runOracle(cases: CostCase[]): OracleResult[] {
  const output = execFileSync(oracle, [], {
    input: JSON.stringify({ cases }),
    maxBuffer: 256 * 1024 * 1024,
    encoding: 'utf8',
  });
  return output
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as OracleResult);
}

/** Forewarn's cost of the validations in order, variables evaluated when first named (as the API server's are). */
function forewarnCost(testCase: CostCase, validations: string[]): number | undefined {
  const variables: Record<string, unknown> = {};
  const bindings: Record<string, unknown> = {
    object: toCelInput(testCase.object),
    oldObject: testCase.oldObject ? toCelInput(testCase.oldObject) : null,
    params: null,
    request: toCelInput({ operation: 'CREATE', namespace: 'team', name: '' }),
    namespaceObject: null,
    variables,
  };
  const evaluated = new Set<string>();
  let total = 0;
  let unsupported = false;
  const prepare = (expression: string) => {
    for (const match of expression.matchAll(/\bvariables\.([A-Za-z_]\w*)/g)) {
      const variable = testCase.variables.find((entry) => entry.name === match[1]);
      if (!variable || evaluated.has(variable.name)) continue;
      evaluated.add(variable.name);
      prepare(variable.expression);
      const outcome = compileCel(variable.expression)(bindings);
      total += outcome.cost;
      if (!outcome.ok && outcome.unsupported) unsupported = true;
      if (outcome.ok) variables[variable.name] = toCelInput(outcome.value);
    }
  };
  for (const expression of validations) {
    prepare(expression);
    const outcome = compileCel(expression)(bindings);
    // Not evaluated here (optional syntax, a missing function): the verdict is `unknown`, no cost.
    if (unsupported || (!outcome.ok && outcome.unsupported)) return undefined;
    total += outcome.cost;
  }
  return total;
}

const describeWithOracle = existsSync(oracle) ? describe : describe.skip;

describe('the oracle is there', () => {
  it('FOREWARN_CEL_COST_BIN names a built cel-cost (test/fidelity/run.sh builds it)', () => {
    expect(existsSync(oracle)).toBe(true);
  });
});

describeWithOracle('CEL runtime cost: Forewarn equals the API server', () => {
  const cases = costCases();
  let results: OracleResult[];

  beforeAll(() => {
    results = runOracle(cases);
  });

  it('has a table of documentation and corpus policies on small and large objects', () => {
    expect(cases.length).toBeGreaterThan(100);
    expect(results).toHaveLength(cases.length);
  });

  it('counts the same cost for every case, or the difference is listed with its reason', () => {
    const differences: string[] = [];
    const unsupported: string[] = [];
    cases.forEach((testCase, index) => {
      const result = results[index];
      if (result.error) return;
      const ours = forewarnCost(testCase, testCase.validations);
      if (ours === undefined) {
        unsupported.push(testCase.name);
        return;
      }
      const listed = allowed.some((entry) => testCase.name.includes(entry.case));
      if (ours !== result.totalCost && !listed)
        differences.push(`${testCase.name}: Forewarn ${ours}, API server ${result.totalCost}`);
      const exceeded = ours > RUNTIME_CEL_COST_BUDGET;
      if (exceeded !== result.budgetExceeded && !listed)
        differences.push(
          `${testCase.name}: budget exceeded here ${exceeded}, there ${result.budgetExceeded}`,
        );
    });
    expect(differences).toEqual([]);
    // Cases Forewarn answers `unknown` for (CEL it does not evaluate) are not compared; most are.
    expect(unsupported.length).toBeLessThan(cases.length / 2);
  });

  it('compiles what the API server compiles', () => {
    const failures = results
      .filter((result) => result.error)
      .map((result) => `${result.name}: ${result.error}`);
    expect(failures.filter((failure) => !allowed.some((entry) => failure.includes(entry.case)))).toEqual([]);
  });
});
