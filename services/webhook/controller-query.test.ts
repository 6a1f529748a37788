import { parseConstraintList } from './controller-client';

describe('parseConstraintList', () => {
  const entry = {
    name: 'deny-in/ingress',
    namespace: 'shop',
    constraintType: 'NetworkIngress',
    severity: 'Warning',
    effect: 'deny',
    summary: 'NetworkPolicy "deny-in" denies all ingress traffic',
    remediationHint: 'Add a NetworkPolicy that allows your traffic',
    sourceKind: 'NetworkPolicy',
  };

  it('keeps name, severity, summary and hint of each entry', () => {
    expect(parseConstraintList({ constraints: [entry] })).toEqual({
      ok: true,
      skippedEntries: 0,
      constraints: [
        {
          name: 'deny-in/ingress',
          severity: 'Warning',
          summary: 'NetworkPolicy "deny-in" denies all ingress traffic',
          remediationHint: 'Add a NetworkPolicy that allows your traffic',
        },
      ],
    });
  });

  it('accepts an empty list', () => {
    expect(parseConstraintList({ constraints: [] })).toEqual({
      ok: true,
      constraints: [],
      skippedEntries: 0,
    });
  });

  it.each([
    ['null', null],
    ['an array', [entry]],
    ['no constraints field', { items: [entry] }],
    ['constraints not an array', { constraints: { 0: entry } }],
  ])('rejects %s', (_label, body) => {
    expect(parseConstraintList(body)).toEqual({
      ok: false,
      detail: 'response is not an object with a constraints array',
    });
  });

  it('skips entries without a known severity or a summary, keeping the rest', () => {
    const result = parseConstraintList({
      constraints: [
        entry,
        { ...entry, severity: 'Urgent' },
        { ...entry, summary: 7 },
        'text',
        { ...entry, remediationHint: undefined },
      ],
    });
    expect(result).toMatchObject({ ok: true, skippedEntries: 3 });
    expect(result.ok && result.constraints.map((constraint) => constraint.remediationHint)).toEqual([
      'Add a NetworkPolicy that allows your traffic',
      '',
    ]);
  });
});
