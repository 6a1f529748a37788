import { readdirSync } from 'node:fs';
import path from 'node:path';
import { AdapterParseError, type Constraint, type ConstraintDraft } from '../../model/constraint';
import { DETAIL_LEVELS } from '../../model/api';
import { detail, namespaceName, objectName, renderText, text, type Text } from '../../model/text';
import { testAdapterContext } from '../../../test/support/render-constraint';
import { loadFixtureObjects } from '../../../test/support/yaml-fixtures';
import { ADAPTERS, AdapterRegistry } from '../adapters/registry';
import { sharedTextsTemplate, templatedConstraint } from './constraint-texts';
import { SharedValues } from './shared-values';
import { ConstraintIndex } from './constraint-index';
import { Ingestor, ParseErrorCounter } from './ingest';

// The index keeps constraint texts as templates filled from the source when read: whatever an
// adapter writes must come back identical, key for key, and equal texts of different policies must
// be one template.

const ADAPTERS_DIRECTORY = path.join(__dirname, '..', 'adapters');

/** Every constraint of every adapter's fixtures, as the adapter wrote it. */
const drafts: Array<[string, ConstraintDraft]> = ADAPTERS.flatMap((adapter) => {
  const directory = path.join(ADAPTERS_DIRECTORY, adapter.name, 'fixtures');
  let files: string[];
  try {
    files = readdirSync(directory);
  } catch {
    return [];
  }
  return files.flatMap((file) => {
    const objects = [...loadFixtureObjects(path.join(directory, file)).values()];
    const context = testAdapterContext(objects);
    return objects.flatMap((object) => {
      try {
        const made = [
          ...adapter.toConstraints(object, context),
          ...(adapter.namespaceConstraints?.(object, context) ?? []),
        ];
        return made.map((draft): [string, ConstraintDraft] => [`${file} ${draft.id}`, draft]);
      } catch (error) {
        if (error instanceof AdapterParseError) return [];
        throw error;
      }
    });
  });
});

const TEXT_FIELDS = ['displayName', 'summary', 'remediationHint', 'remediation'] as const;

function textsOf(constraint: ConstraintDraft): Array<[string, Text]> {
  return [
    ['displayName', constraint.displayName],
    ['summary', constraint.summary],
    ['remediationHint', constraint.remediationHint],
    ['remediation', constraint.remediation.summary],
    ...constraint.remediation.steps.flatMap((step, index): Array<[string, Text]> => [
      [`step ${index}`, step.description],
      ...(step.command ? [[`step ${index} command`, step.command] as [string, Text]] : []),
    ]),
  ];
}

function keep(draft: ConstraintDraft, shared = new SharedValues()): Constraint {
  return templatedConstraint({ ...draft, lastObserved: '2026-11-26T00:00:00.000Z', ref: 'ref-1' }, (value) =>
    shared.share(value),
  );
}

describe('constraint texts kept as templates', () => {
  it('has constraints of every adapter to check', () => {
    const adapters = new Set(drafts.map(([, draft]) => draft.adapter));
    expect(drafts.length).toBeGreaterThan(100);
    expect(adapters.size).toBeGreaterThanOrEqual(8);
  });

  it.each(drafts)('%s: texts come back as the adapter wrote them, key for key', (_name, draft) => {
    const kept = keep(draft);
    for (const field of TEXT_FIELDS) {
      // JSON keeps key order: the same bytes, not only equal values.
      expect(JSON.stringify(kept[field])).toBe(JSON.stringify(draft[field]));
      expect(kept[field]).toStrictEqual(draft[field]);
    }
    const keptTexts = textsOf(kept);
    textsOf(draft).forEach(([field, value], position) => {
      for (const level of DETAIL_LEVELS)
        for (const namespace of [draft.source.namespace ?? 'elsewhere', 'elsewhere'])
          expect([field, renderText(keptTexts[position][1], { level, namespace })]).toEqual([
            field,
            renderText(value, { level, namespace }),
          ]);
    });
  });

  const draftOf = (name: string, namespace: string): ConstraintDraft => {
    const own = objectName(name, namespace);
    return {
      id: `uid:${namespace}-${name}#ingress`,
      name,
      type: 'NetworkEgress',
      severity: 'Warning',
      effect: 'deny',
      adapter: 'networkpolicy',
      source: { kind: 'NetworkPolicy', apiVersion: 'networking.k8s.io/v1', name, namespace },
      scope: { kind: 'namespace', namespace },
      tags: ['network'],
      displayName: [own],
      summary: text`NetworkPolicy "${own}" in ${namespaceName(namespace)} allows ${detail('port 53')} to ${objectName('dns', namespace)} and ${objectName('api', 'other')}`,
      remediationHint: text`ask the owner of ${own}`,
      remediation: {
        summary: text`ask the owner of ${own}`,
        steps: [
          {
            type: 'cli',
            description: text`Inspect ${own}`,
            command: text`kubectl get networkpolicy ${own} -n ${namespaceName(namespace)}`,
          },
          { type: 'manual', description: text`Ask the owner`, contact: 'platform@example.com' },
        ],
      },
    };
  };

  it('keeps one template for the texts of policies of the same shape, whatever their names', () => {
    const shared = new SharedValues();
    const first = keep(draftOf('deny-all', 'team-1'), shared);
    const second = keep(draftOf('web-deny', 'team-2'), shared);
    expect(sharedTextsTemplate(first)).toBeDefined();
    expect(sharedTextsTemplate(second)).toBe(sharedTextsTemplate(first));
    const viewer = { level: 'full', namespace: 'team-2' } as const;
    expect(renderText(second.summary, viewer)).toBe(
      'NetworkPolicy "web-deny" in team-2 allows port 53 to dns and api',
    );
    expect(renderText(second.remediation.steps[0].command ?? [], viewer)).toBe(
      'kubectl get networkpolicy web-deny -n team-2',
    );
    // A name in another namespace is not the source's: kept as written, redacted as before.
    expect(renderText(second.summary, { level: 'detailed', namespace: 'team-2' })).toBe(
      'NetworkPolicy "web-deny" in team-2 allows port 53 to dns and redacted',
    );
    expect(second.summary).toStrictEqual(draftOf('web-deny', 'team-2').summary);
  });

  it('shows the texts to spreading, JSON and key listing, and hides the template', () => {
    const draft = draftOf('deny-all', 'team-1');
    const kept = keep(draft);
    expect(Object.isFrozen(kept)).toBe(true);
    expect(Object.keys(kept)).toEqual(expect.arrayContaining([...TEXT_FIELDS]));
    expect(Object.keys(kept)).not.toContain('textsTemplate');
    const spread = { ...kept };
    expect(spread.summary).toStrictEqual(draft.summary);
    const parsed = JSON.parse(JSON.stringify(kept)) as Record<string, unknown>;
    expect(parsed.remediation).toStrictEqual(JSON.parse(JSON.stringify(draft.remediation)));
    expect(parsed).not.toHaveProperty('textsTemplate');
    expect({ ...draft, lastObserved: kept.lastObserved, ref: kept.ref }).toEqual(kept);
  });

  it('is what the index keeps: one template for a policy repeated in many namespaces', () => {
    const index = new ConstraintIndex();
    const ingestor = new Ingestor(index, new AdapterRegistry(), new ParseErrorCounter());
    for (const [namespace, name] of [
      ['team-1', 'deny-all'],
      ['team-2', 'default-deny'],
    ])
      ingestor.upsert({
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: { name, namespace, uid: `uid-${namespace}` },
        spec: { podSelector: {}, policyTypes: ['Ingress'] },
      });
    const [first] = index.constraintsForNamespace('team-1');
    const [second] = index.constraintsForNamespace('team-2');
    expect(sharedTextsTemplate(second)).toBe(sharedTextsTemplate(first));
    expect(renderText(second.summary, { level: 'full', namespace: 'team-2' })).toContain('"default-deny"');
    expect(renderText(first.summary, { level: 'summary', namespace: 'team-2' })).not.toContain('deny-all');
  });
});
