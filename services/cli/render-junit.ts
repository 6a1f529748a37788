import type { CheckedObject, CheckFinding, ManifestCheckReport } from '../controller/check/manifest-check';
import { singleLine } from '../model/warnings';
import { findingText, objectLabel } from './ci-findings';
import { manifestLocations } from './manifest-locations';

// `forewarn check -o junit`: the JUnit XML test report CI systems show as tests (Jenkins, GitLab,
// Azure DevOps, CircleCI, GitHub test-report actions). A suite per manifest file, a test case per
// object × constraint evaluated on it: a violation fails, a constraint without a verdict on the
// object is skipped (it was not evaluated), a passed one passes. An object the webhook never sees
// is one skipped case, with the reason.

/** Characters XML 1.0 cannot carry at all (C0 controls but tab, line feed and carriage return). */
// eslint-disable-next-line no-control-regex
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

export function xmlEscape(text: string): string {
  return text
    .replace(NOT_XML, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

function attributes(values: Record<string, string | number>): string {
  return Object.entries(values)
    .map(([name, value]) => ` ${name}="${xmlEscape(String(value))}"`)
    .join('');
}

interface TestCase {
  object: CheckedObject;
  name: string;
  line: number;
  outcome:
    { kind: 'passed' } | { kind: 'failed'; finding: CheckFinding } | { kind: 'skipped'; message: string };
}

function outcomeOf(finding: CheckFinding): TestCase['outcome'] {
  if (finding.verdict === 'violates' || finding.verdict === undefined) return { kind: 'failed', finding };
  if (finding.verdict === 'passes') return { kind: 'passed' };
  const reason = finding.reason ? `: ${singleLine(finding.reason)}` : '';
  return { kind: 'skipped', message: `applies, not evaluated on the object${reason}` };
}

function testCasesOf(report: ManifestCheckReport, content: string): TestCase[] {
  const locations = manifestLocations(content);
  return report.objects.flatMap((object, position) => {
    const line = locations.lineOf(object, position);
    if (object.skipped !== undefined)
      return [{ object, name: 'admission', line, outcome: { kind: 'skipped', message: object.skipped } }];
    return [...object.findings, ...object.passed].map((finding): TestCase => ({
      object,
      name: `${finding.sourceKind} ${singleLine(finding.name)}`,
      line,
      outcome: outcomeOf(finding),
    }));
  });
}

function testCaseXml(file: string, testCase: TestCase): string {
  const head = `    <testcase${attributes({ classname: objectLabel(testCase.object), name: testCase.name, file, line: testCase.line })}`;
  const outcome = testCase.outcome;
  if (outcome.kind === 'passed') return `${head}/>`;
  if (outcome.kind === 'skipped')
    return `${head}>\n      <skipped${attributes({ message: outcome.message })}/>\n    </testcase>`;
  const failure = attributes({
    message: singleLine(outcome.finding.summary),
    type: outcome.finding.severity,
  });
  return `${head}>\n      <failure${failure}>${xmlEscape(findingText(outcome.finding))}</failure>\n    </testcase>`;
}

function counts(testCases: readonly TestCase[]) {
  return {
    tests: testCases.length,
    failures: testCases.filter((testCase) => testCase.outcome.kind === 'failed').length,
    errors: 0,
    skipped: testCases.filter((testCase) => testCase.outcome.kind === 'skipped').length,
  };
}

export function renderJunit(
  reports: readonly ManifestCheckReport[],
  contents: ReadonlyMap<string, string>,
): string {
  const suites = reports.map((report) => ({
    file: report.file,
    testCases: testCasesOf(report, contents.get(report.file) ?? ''),
  }));
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites${attributes({ name: 'forewarn check', ...counts(suites.flatMap((suite) => suite.testCases)) })}>`,
  ];
  for (const suite of suites) {
    lines.push(`  <testsuite${attributes({ name: suite.file, ...counts(suite.testCases) })}>`);
    lines.push(...suite.testCases.map((testCase) => testCaseXml(suite.file, testCase)));
    lines.push('  </testsuite>');
  }
  lines.push('</testsuites>', '');
  return lines.join('\n');
}
