import { parseConstraintList, resultsOfBatchAnswer } from './controller-client';

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

describe('resultsOfBatchAnswer: each check of a batch from its entry', () => {
  const listed = { name: 'n', severity: 'Warning', summary: 's', remediationHint: 'h' };

  it('reads every entry in order: a list for 200, the status otherwise', () => {
    const text = JSON.stringify({
      answers: [
        { status: 200, body: { constraints: [listed] } },
        { status: 422, body: { error: 'nothing to check' } },
        { status: 200, body: { constraints: 'not a list' } },
        { body: {} },
      ],
    });
    expect(resultsOfBatchAnswer(text, 4)).toEqual([
      { ok: true, constraints: [listed], skippedEntries: 0 },
      { ok: false, reason: 'bad_status', detail: 'controller answered HTTP 422', status: 422 },
      { ok: false, reason: 'bad_body', detail: 'response is not an object with a constraints array' },
      { ok: false, reason: 'bad_body', detail: 'batch answer entry is not an object with a status' },
    ]);
  });

  it.each([
    ['not JSON', '{"answers": [', /^response is not JSON/],
    ['no answers array', '{"constraints": []}', /answers array of 2 entries/],
    [
      'fewer answers than checks',
      JSON.stringify({ answers: [{ status: 200, body: { constraints: [] } }] }),
      /of 2 entries/,
    ],
  ])('gives one failure for every check when the answer is %s', (_label, text, detail) => {
    expect(resultsOfBatchAnswer(text, 2)).toEqual({
      ok: false,
      reason: 'bad_body',
      detail: expect.stringMatching(detail),
    });
  });
});
