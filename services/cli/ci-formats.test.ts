import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Log } from 'sarif';
import { parseXml, type XmlElement } from '../../test/support/xml-structure';
import { runCli, type CliEnvironment } from './program';
import { SARIF_STRUCTURE } from '../../test/support/sarif-structure';
import { escapeData, escapeProperty } from './render-github';
import { artifactUri } from './render-sarif';
import { findingLevel } from './ci-findings';
import type { CheckFinding } from '../controller/check/manifest-check';

// `check -o sarif|junit|github` through runCli, offline against the demo cluster (examples/manifests):
// each format read back and held to its structure (SARIF 2.1.0 by JSON Schema, JUnit by a strict XML
// reader, GitHub workflow commands by their grammar), lines pointing at the manifest's own lines, and
// the same output on a second run.

const demoManifests = path.join(__dirname, '../../examples/manifests');
const deployment = path.join(__dirname, '../../examples/deployment.yaml');

function run(args: string[], readStdin = async () => '') {
  const stdout = { text: '', write: (chunk: string) => (stdout.text += chunk) };
  const stderr = { text: '', write: (chunk: string) => (stderr.text += chunk) };
  const cli: CliEnvironment = { stdout, stderr, env: {}, readStdin };
  return runCli(args, cli).then((code) => ({ code, stdout: stdout.text, stderr: stderr.text }));
}

/** The 1-based number of the line of `text` that contains `needle` after `after` lines. */
function lineOf(text: string, needle: string, after = 0): number {
  const index = text.split('\n').findIndex((line, number) => number >= after && line.includes(needle));
  if (index < 0) throw new Error(`${needle} not in the text`);
  return index + 1;
}

let directory: string;
let twoObjects: string;
let twoObjectsText: string;

beforeAll(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'forewarn-ci-formats-'));
  twoObjects = path.join(directory, 'two, objects.yaml');
  // A List first (its item is the first object), then a second document: lines differ per object.
  twoObjectsText = [
    '# two workloads',
    'apiVersion: v1',
    'kind: List',
    'items:',
    '  - apiVersion: apps/v1',
    '    kind: Deployment',
    '    metadata: { name: api, namespace: shop, labels: { owner: team-a } }',
    '    spec:',
    '      selector: { matchLabels: { app: api } }',
    '      template:',
    '        metadata: { labels: { app: api } }',
    '        spec:',
    '          containers:',
    '            - name: api',
    '              image: registry.example.com/api:1',
    '              resources: { limits: { cpu: 1, memory: 1Gi }, requests: { cpu: 1, memory: 1Gi } }',
    '            - name: sidecar',
    '              image: registry.example.com/sidecar:1',
    '---',
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata: { name: web, namespace: shop }',
    'spec:',
    '  selector: { matchLabels: { app: frontend } }',
    '  template:',
    '    metadata: { labels: { app: frontend } }',
    '    spec:',
    '      containers:',
    '        - name: web',
    '          image: "registry.example.com/web:1"',
    '',
  ].join('\n');
  await writeFile(twoObjects, twoObjectsText);
});

afterAll(() => rm(directory, { recursive: true, force: true }));

describe('check -o sarif', () => {
  it('is SARIF 2.1.0: one rule per constraint, one result per finding, at the file and line', async () => {
    const result = await run([
      'check',
      '-f',
      twoObjects,
      deployment,
      '--manifests',
      demoManifests,
      '-o',
      'sarif',
    ]);
    expect(result.code).toBe(3);
    const log = JSON.parse(result.stdout) as Log;
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    addFormats(ajv);
    const validate = ajv.compile(SARIF_STRUCTURE);
    const valid = validate(log);
    expect(validate.errors ?? []).toEqual([]);
    expect(valid).toBe(true);

    const [sarifRun] = log.runs;
    const rules = sarifRun.tool.driver.rules ?? [];
    const results = sarifRun.results ?? [];
    // One rule per constraint: ids unique, and every result's ruleIndex names its own rule.
    expect(new Set(rules.map((rule) => rule.id)).size).toBe(rules.length);
    for (const each of results) expect(rules[each.ruleIndex ?? -1]?.id).toBe(each.ruleId);

    // One result per finding, as the JSON output lists them.
    const json = await run([
      'check',
      '-f',
      twoObjects,
      deployment,
      '--manifests',
      demoManifests,
      '-o',
      'json',
    ]);
    const reports = (
      JSON.parse(json.stdout) as {
        reports: Array<{ file: string; objects: Array<{ name: string; findings: Array<{ name: string }> }> }>;
      }
    ).reports;
    const findingCount = reports.flatMap((report) =>
      report.objects.flatMap((object) => object.findings),
    ).length;
    expect(results).toHaveLength(findingCount);

    // The failing container of each object is where its result points: `api`'s sidecar (no limits)
    // inside the List, `web`'s only container in the second document.
    const limitsOf = (objectName: string) =>
      results.find(
        (each) =>
          each.ruleId?.endsWith('require-resource-limits-prod') &&
          each.locations?.[0].logicalLocations?.[0].fullyQualifiedName === `Deployment shop/${objectName}`,
      );
    const web = limitsOf('web');
    expect(web?.level).toBe('error');
    // An absolute name is a file URL (a relative one stays relative: see below).
    expect(web?.locations?.[0].physicalLocation?.artifactLocation?.uri).toBe(pathToFileURL(twoObjects).href);
    expect(web?.locations?.[0].physicalLocation?.region?.startLine).toBe(
      lineOf(twoObjectsText, '- name: web'),
    );
    expect(limitsOf('api')?.locations?.[0].physicalLocation?.region?.startLine).toBe(
      lineOf(twoObjectsText, '- name: sidecar'),
    );
    // A finding without a failing field points at its object's first line.
    const owner = results.find(
      (each) =>
        each.ruleId?.endsWith('workloads-must-have-owner') &&
        each.locations?.[0].logicalLocations?.[0].fullyQualifiedName === 'Deployment shop/web',
    );
    expect(owner?.locations?.[0].physicalLocation?.region?.startLine).toBe(
      lineOf(twoObjectsText, 'apiVersion: apps/v1', 19),
    );
    // The text and fix of the table, and levels from the verdicts.
    expect(web?.message.text).toMatch(/every container must set resource limits[\s\S]*\nfix: /);
    // Constraints that only apply (network, mesh) are listed once per namespace, never as results of
    // an object (issue 31): every result here is a violation.
    expect(new Set(results.map((each) => each.level))).toEqual(new Set(['error', 'warning']));
    expect(
      results
        .filter((each) => each.level === 'error')
        .every((each) => each.properties?.verdict === 'violates'),
    ).toBe(true);
  });

  it('gives a rule it could not evaluate a note, and a violation an error or a warning by severity', () => {
    const finding = (verdict: CheckFinding['verdict'], severity: CheckFinding['severity']) =>
      ({ verdict, severity }) as CheckFinding;
    expect(findingLevel(finding('violates', 'Critical'))).toBe('error');
    expect(findingLevel(finding('violates', 'Warning'))).toBe('warning');
    expect(findingLevel(finding(undefined, 'Critical'))).toBe('error');
    expect(findingLevel(finding('unknown', 'Warning'))).toBe('note');
  });

  it('keeps relative names relative to the checkout (%SRCROOT%), URI-encoded', () => {
    expect(artifactUri(path.join('deploy', 'web app.yaml'))).toEqual({
      uri: 'deploy/web%20app.yaml',
      uriBaseId: '%SRCROOT%',
    });
  });

  it('is the same on a second run, and names standard input without a path', async () => {
    const args = ['check', '-f', deployment, '--manifests', demoManifests, '-o', 'sarif'];
    expect((await run(args)).stdout).toBe((await run(args)).stdout);
    const text = await readFile(deployment, 'utf8');
    const piped = await run(
      ['check', '-f', '-', '--manifests', demoManifests, '-o', 'sarif'],
      async () => text,
    );
    const log = JSON.parse(piped.stdout) as Log;
    const uris = new Set(
      log.runs[0].results?.map((each) => each.locations?.[0].physicalLocation?.artifactLocation?.uri),
    );
    expect(uris).toEqual(new Set(['stdin']));
  });
});

function elements(parent: XmlElement, name: string): XmlElement[] {
  return parent.children.filter((child) => child.name === name);
}

describe('check -o junit', () => {
  it('is a JUnit report: a suite per file, a test case per object and constraint evaluated', async () => {
    const result = await run([
      'check',
      '-f',
      twoObjects,
      deployment,
      '--manifests',
      demoManifests,
      '-o',
      'junit',
    ]);
    expect(result.code).toBe(3);
    const root = parseXml(result.stdout);
    expect(root.name).toBe('testsuites');
    const suites = elements(root, 'testsuite');
    expect(suites.map((suite) => suite.attributes.name)).toEqual([twoObjects, deployment]);
    const json = JSON.parse(
      (await run(['check', '-f', twoObjects, deployment, '--manifests', demoManifests, '-o', 'json'])).stdout,
    ) as { reports: Array<{ objects: Array<{ findings: unknown[]; passed: unknown[] }> }> };
    let total = 0;
    suites.forEach((suite, index) => {
      expect(suite.children.every((child) => child.name === 'testcase')).toBe(true);
      const cases = elements(suite, 'testcase');
      const expected = json.reports[index].objects.reduce(
        (sum, object) => sum + object.findings.length + object.passed.length,
        0,
      );
      expect(cases).toHaveLength(expected);
      const failures = cases.filter((each) => elements(each, 'failure').length === 1);
      const skipped = cases.filter((each) => elements(each, 'skipped').length === 1);
      expect(Number(suite.attributes.tests)).toBe(cases.length);
      expect(Number(suite.attributes.failures)).toBe(failures.length);
      expect(Number(suite.attributes.skipped)).toBe(skipped.length);
      expect(suite.attributes.errors).toBe('0');
      for (const each of cases) {
        expect(Object.keys(each.attributes).sort()).toEqual(['classname', 'file', 'line', 'name']);
        expect(Number(each.attributes.line)).toBeGreaterThan(0);
        expect(each.children.length).toBeLessThanOrEqual(1);
        for (const child of each.children) {
          expect(['failure', 'skipped']).toContain(child.name);
          expect(child.attributes.message).toBeTruthy();
        }
      }
      total += cases.length;
    });
    expect(Number(root.attributes.tests)).toBe(total);
    const webLimits = elements(suites[0], 'testcase').find(
      (each) =>
        each.attributes.classname === 'Deployment shop/web' &&
        each.attributes.name.endsWith('require-resource-limits-prod'),
    );
    const failure = webLimits && elements(webLimits, 'failure')[0];
    expect(failure?.attributes.type).toBe('Critical');
    expect(failure?.text).toMatch(/^will be rejected: container "web"[\s\S]*\nfix: /);
    // The file name's comma and space survive escaping.
    expect(elements(suites[0], 'testcase')[0].attributes.file).toBe(twoObjects);
  });
});

describe('check -o github', () => {
  it('prints one workflow command per finding, at the file and line, escaped as the runner decodes', async () => {
    const result = await run(['check', '-f', twoObjects, '--manifests', demoManifests, '-o', 'github']);
    expect(result.code).toBe(3);
    const lines = result.stdout.trimEnd().split('\n');
    const grammar = /^::(error|warning|notice) file=([^,:]+),line=(\d+),title=([^,:]+)::(.+)$/;
    const sarif = JSON.parse(
      (await run(['check', '-f', twoObjects, '--manifests', demoManifests, '-o', 'sarif'])).stdout,
    ) as Log;
    const results = sarif.runs[0].results ?? [];
    expect(lines).toHaveLength(results.length);
    lines.forEach((line, index) => {
      const match = grammar.exec(line);
      expect(match).not.toBeNull();
      const [, command, file, lineNumber, , message] = match as RegExpExecArray;
      expect(command).toBe(
        ({ error: 'error', warning: 'warning', note: 'notice' } as Record<string, string>)[
          results[index].level ?? 'none'
        ],
      );
      expect(decodeURIComponent(file)).toBe(twoObjects);
      expect(Number(lineNumber)).toBe(results[index].locations?.[0].physicalLocation?.region?.startLine);
      expect(decodeURIComponent(message)).toBe(
        (results[index].message.text ?? '').replace(/^Deployment shop\/\w+: /, ''),
      );
    });
  });

  it('escapes %, line breaks, and in properties : and ,', () => {
    expect(escapeData('100% done\r\nnext')).toBe('100%25 done%0D%0Anext');
    expect(escapeProperty('a: b, c%')).toBe('a%3A b%2C c%25');
  });
});
