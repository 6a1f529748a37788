import { KeptLately } from './kept-lately';
import { RULE_TEXTS_PER_GENERATION, ruleText, ruleTextsKept } from './kyverno/rule-subject';
import type { ConstraintDraft } from '../../model/constraint';
import { indexObjects } from '../../../test/support/controller-fixtures';

describe('KeptLately', () => {
  it('derives once while a key is kept, at most two generations', () => {
    const kept = new KeptLately<string, string>(2);
    let derived = 0;
    const derive = (key: string) => `${key} ${++derived}`;
    expect(kept.get('a', derive)).toBe('a 1');
    expect(kept.get('a', derive)).toBe('a 1');
    kept.get('b', derive);
    kept.get('c', derive); // a and b become the older generation
    expect(kept.get('a', derive)).toBe('a 1'); // still kept, brought back to the recent one
    kept.get('d', derive);
    kept.get('e', derive); // c and a older, b gone
    expect(kept.size).toBeLessThanOrEqual(4);
    expect(kept.get('b', derive)).toBe(`b ${derived}`);
    expect(derived).toBe(6);
  });
});

describe('Kyverno rule texts', () => {
  // A sweep of every workload evaluates every Kyverno constraint: the texts kept stay bounded.
  it('are made once per constraint while kept, and not kept for every constraint', () => {
    const policies = Array.from({ length: 2 * RULE_TEXTS_PER_GENERATION + 100 }, (_, at) => ({
      apiVersion: 'kyverno.io/v1',
      kind: 'Policy',
      metadata: { name: `policy-${at}`, namespace: `team-${at}` },
      spec: {
        validationFailureAction: 'Enforce',
        rules: [
          {
            name: 'require-limits',
            match: { any: [{ resources: { kinds: ['Pod'] } }] },
            validate: { message: 'limits are required', pattern: { spec: {} } },
          },
        ],
      },
    }));
    const { index } = indexObjects(policies);
    const constraints: ConstraintDraft[] = policies.flatMap(({ metadata }) =>
      index.constraintsForNamespace(metadata.namespace),
    );
    expect(constraints).toHaveLength(policies.length);
    const first = ruleText(constraints[0]);
    expect(ruleText(constraints[0])).toBe(first);
    expect(JSON.stringify(first)).toContain('policy-0');
    for (const constraint of constraints) ruleText(constraint);
    expect(ruleTextsKept()).toBeLessThanOrEqual(2 * RULE_TEXTS_PER_GENERATION);
    expect(RULE_TEXTS_PER_GENERATION).toBeLessThanOrEqual(512);
  });
});
