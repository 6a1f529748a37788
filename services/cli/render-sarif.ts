import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Log, ReportingDescriptor, Result } from 'sarif';
import type { CheckFinding, ManifestCheckReport } from '../controller/check/manifest-check';
import { singleLine } from '../model/warnings';
import { constraintId, findingLevel, findingText, locateFindings, objectLabel } from './ci-findings';

// `forewarn check -o sarif`: SARIF 2.1.0, the format code-scanning services read (GitHub's
// upload-sarif, GitLab, Azure DevOps). One rule per constraint the check met, one result per finding,
// at the manifest's file and line, with the level from the verdict (ci-findings.ts).

const SARIF_SCHEMA = 'https://json.schemastore.org/sarif-2.1.0.json';

export interface SarifInput {
  reports: readonly ManifestCheckReport[];
  /** The text of every checked file, by the name the reports give it. */
  contents: ReadonlyMap<string, string>;
  /** Problems of the --manifests directory: the check ran without these objects. */
  clusterProblems: readonly string[];
  toolVersion: string;
}

/**
 * The file as a URI: relative names stay relative to the directory the check ran in (`%SRCROOT%`,
 * which code scanning maps to the repository), absolute ones become file URLs.
 */
export function artifactUri(file: string): { uri: string; uriBaseId?: string } {
  if (file === '<stdin>') return { uri: 'stdin' };
  if (path.isAbsolute(file)) return { uri: pathToFileURL(file).href };
  return { uri: encodeURI(file.split(path.sep).join('/')), uriBaseId: '%SRCROOT%' };
}

function ruleOf(finding: CheckFinding): ReportingDescriptor {
  const hint = singleLine(finding.remediationHint);
  return {
    id: constraintId(finding),
    name: singleLine(finding.name),
    shortDescription: { text: `${finding.sourceKind} ${singleLine(finding.name)}` },
    fullDescription: { text: singleLine(finding.summary) },
    ...(hint ? { help: { text: `fix: ${hint}` } } : {}),
    defaultConfiguration: { level: findingLevel({ ...finding, verdict: 'violates' }) },
    properties: {
      constraintType: finding.constraintType,
      sourceKind: finding.sourceKind,
      severity: finding.severity,
      effect: finding.effect,
    },
  };
}

export function renderSarif(input: SarifInput): string {
  const rules: ReportingDescriptor[] = [];
  const ruleIndex = new Map<string, number>();
  const addRule = (finding: CheckFinding) => {
    const id = constraintId(finding);
    if (ruleIndex.has(id)) return;
    ruleIndex.set(id, rules.length);
    rules.push(ruleOf(finding));
  };
  for (const report of input.reports)
    for (const object of report.objects) [...object.findings, ...object.passed].forEach(addRule);

  const results: Result[] = locateFindings(input.reports, input.contents).map((located) => ({
    ruleId: constraintId(located.finding),
    ruleIndex: ruleIndex.get(constraintId(located.finding)),
    level: located.level,
    message: { text: `${objectLabel(located.object)}: ${findingText(located.finding)}` },
    locations: [
      {
        physicalLocation: {
          artifactLocation: artifactUri(located.file),
          region: { startLine: located.line },
        },
        logicalLocations: [{ fullyQualifiedName: objectLabel(located.object), kind: 'resource' }],
      },
    ],
    properties: {
      verdict: located.finding.verdict ?? 'applies',
      severity: located.finding.severity,
      resource: located.object.resource,
      ...(located.finding.evidence ? { evidence: located.finding.evidence } : {}),
    },
  }));

  const log: Log = {
    $schema: SARIF_SCHEMA,
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'forewarn',
            semanticVersion: input.toolVersion,
            rules,
          },
        },
        invocations: [
          {
            executionSuccessful: true,
            toolExecutionNotifications: input.clusterProblems.map((problem) => ({
              level: 'warning' as const,
              message: { text: `${problem} (its objects are not part of the check)` },
            })),
          },
        ],
        results,
      },
    ],
  };
  return `${JSON.stringify(log, null, 2)}\n`;
}
