import type { EngineVerdict, PairVerdicts } from './oracles';

// The per-pair comparison of risks-agreement.test.ts: for one engine, every (policy, workload) pair
// either side decides. Agreement counts the pairs both decide; "Forewarn decided" the pairs the
// engine decides that Forewarn decides too. A pair the allow list names (with its reason) is
// reported, not failed.

export interface ForewarnVerdict {
  verdict: EngineVerdict;
}

export interface AllowedPair {
  engine: string;
  policy: string;
  workload: string;
  reason: string;
}

export interface EngineComparison {
  title: string;
  pairs: number;
  engineDecided: number;
  forewarnDecided: number;
  bothDecided: number;
  agree: number;
  violations: number;
  disagreements: string[];
  undecided: string[];
  allowed: string[];
}

export function comparePairs(
  title: string,
  engine: string,
  engineVerdicts: PairVerdicts,
  forewarn: ReadonlyMap<string, ReadonlyMap<string, ForewarnVerdict>> | undefined,
  allowList: readonly AllowedPair[],
  /**
   * What a pair Forewarn does not list means: `passes` where the engine reports only violations and
   * so decides every pair (gator, the server's warnings); `unlisted` where the engine reports only
   * what it matched (Kyverno), so a pair it decides that Forewarn does not list is a disagreement on
   * matching, whatever the engine's verdict.
   */
  forewarnUnlisted: 'passes' | 'unlisted' = 'passes',
): EngineComparison {
  const comparison: EngineComparison = {
    title,
    pairs: 0,
    engineDecided: 0,
    forewarnDecided: 0,
    bothDecided: 0,
    agree: 0,
    violations: 0,
    disagreements: [],
    undecided: [],
    allowed: [],
  };
  const keys = new Set<string>();
  for (const [policy, byWorkload] of engineVerdicts)
    for (const workload of byWorkload.keys()) keys.add(`${policy}\u0000${workload}`);
  for (const [policy, byWorkload] of forewarn ?? new Map<string, Map<string, ForewarnVerdict>>())
    for (const workload of byWorkload.keys()) keys.add(`${policy}\u0000${workload}`);
  for (const key of [...keys].sort()) {
    const [policy = '', workload = ''] = key.split('\u0000');
    // A pair the engine does not list: it does not match the workload, which is a pass.
    const theirs = engineVerdicts.get(policy)?.get(workload) ?? 'passes';
    // A pair Forewarn does not list: the constraint does not apply to the workload, a pass.
    const ours = forewarn?.get(policy)?.get(workload)?.verdict ?? forewarnUnlisted;
    comparison.pairs++;
    if (theirs === 'undecided') continue;
    comparison.engineDecided++;
    if (theirs === 'violates') comparison.violations++;
    const line = `${policy} × ${workload}: ${engine} ${theirs}, Forewarn ${ours}`;
    if (ours === 'undecided') {
      comparison.undecided.push(line);
      continue;
    }
    comparison.forewarnDecided++;
    comparison.bothDecided++;
    if (theirs === ours) {
      comparison.agree++;
      continue;
    }
    const allowance = allowList.find(
      (entry) =>
        entry.engine === engine &&
        entry.policy === policy &&
        (entry.workload === '*' || entry.workload === workload),
    );
    if (allowance) comparison.allowed.push(`${line} (${allowance.reason})`);
    else comparison.disagreements.push(line);
  }
  return comparison;
}

const percent = (part: number, whole: number) =>
  whole === 0 ? 'n/a' : `${((100 * part) / whole).toFixed(1)}%`;

export function formatTable(comparisons: readonly EngineComparison[]): string {
  const header = [
    'engine',
    'pairs',
    'engine decides',
    'violations',
    'both decide',
    'agree',
    'Forewarn decides',
  ];
  const rows = comparisons.map((comparison) => [
    comparison.title,
    String(comparison.pairs),
    String(comparison.engineDecided),
    String(comparison.violations),
    String(comparison.bothDecided),
    `${comparison.agree} (${percent(comparison.agree, comparison.bothDecided)})`,
    `${comparison.forewarnDecided} (${percent(comparison.forewarnDecided, comparison.engineDecided)})`,
  ]);
  const widths = header.map((cell, column) =>
    Math.max(cell.length, ...rows.map((row) => row[column]?.length ?? 0)),
  );
  return [header, ...rows]
    .map((row) => `  | ${row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join(' | ')} |`)
    .join('\n');
}
