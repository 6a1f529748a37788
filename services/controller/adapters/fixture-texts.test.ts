import { readdirSync } from 'node:fs';
import path from 'node:path';
import { AdapterParseError, type ConstraintDraft } from '../../model/constraint';
import { DETAIL_LEVELS } from '../../model/api';
import { MAX_SUMMARY_LENGTH, readableTextViolations, renderReadableLine } from '../../model/summary-rules';
import { renderText, type Text } from '../../model/text';
import { testAdapterContext } from '../../../test/support/render-constraint';
import { loadFixtureObjects } from '../../../test/support/yaml-fixtures';
import { ADAPTERS } from './registry';

// The text rules (DESIGN.md section 3, services/model/summary-rules.ts) over every constraint of the
// new sources' fixtures, at every level, for a viewer inside and outside the source's namespace: as
// the adapter wrote it, at most 300 characters (the views' safety net must not have to cut); as the
// views render it, no rule broken (one line, no JSON dump, plural kinds, placeholders collapsed).

const ADAPTERS_UNDER_TEST = new Set([
  'cni',
  'adminnetworkpolicy',
  'podsecurity',
  'policyengine',
  'mesh',
  // Issue 31: a webhook's summary was cut by the views' safety net ("requests fail while it is…").
  'webhookconfig',
  'admissionpolicy',
]);
const NEW_FIXTURES = new Set([
  'webhookconfigurations.yaml',
  'admissionpolicies.yaml',
  'calico-policies.yaml',
  'adminnetworkpolicies.yaml',
  'namespaces.yaml',
  'kyverno-cel.yaml',
  'linkerd-policies.yaml',
]);

const constraints: Array<[string, ConstraintDraft]> = ADAPTERS.filter((adapter) =>
  ADAPTERS_UNDER_TEST.has(adapter.name),
).flatMap((adapter) => {
  const directory = path.join(__dirname, adapter.name, 'fixtures');
  return readdirSync(directory)
    .filter((file) => NEW_FIXTURES.has(file))
    .flatMap((file) => {
      const objects = [...loadFixtureObjects(path.join(directory, file)).values()];
      const context = testAdapterContext(objects);
      return objects.flatMap((object) => {
        try {
          return adapter
            .toConstraints(object, context)
            .map((constraint): [string, ConstraintDraft] => [`${file} ${constraint.name}`, constraint]);
        } catch (error) {
          if (error instanceof AdapterParseError) return [];
          throw error;
        }
      });
    });
});

function textsOf(constraint: ConstraintDraft): Array<[string, Text]> {
  return [
    ['summary', constraint.summary],
    ['remediationHint', constraint.remediationHint],
    ...constraint.remediation.steps.map((step, index): [string, Text] => [`step ${index}`, step.description]),
  ];
}

describe('texts of the new sources follow the text rules', () => {
  it('has constraints to check', () => {
    expect(constraints.length).toBeGreaterThan(20);
  });

  it.each(constraints)('%s', (_name, constraint) => {
    const problems: string[] = [];
    for (const level of DETAIL_LEVELS)
      for (const namespace of [constraint.source.namespace ?? 'elsewhere', 'elsewhere'])
        for (const [field, value] of textsOf(constraint)) {
          const raw = renderText(value, { level, namespace });
          if (raw.length > MAX_SUMMARY_LENGTH)
            problems.push(`${field} at ${level} for ${namespace}: ${raw.length} characters: ${raw}`);
          const shown = renderReadableLine(value, { level, namespace });
          for (const problem of readableTextViolations(shown))
            problems.push(`${field} at ${level} for ${namespace}: ${problem}: ${shown}`);
        }
    expect(problems).toEqual([]);
  });
});
