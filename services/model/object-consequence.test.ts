import { consequenceOf, severityForObject } from './object-consequence';

// Issue 31: what a constraint does to the object decides how it is counted and warned about.

describe('consequenceOf', () => {
  it('counts a denying violation as a rejection and any other violation as an audit or warning', () => {
    expect(consequenceOf({ severity: 'Critical', constraintType: 'Admission', verdict: 'violates' })).toBe(
      'rejected',
    );
    expect(consequenceOf({ severity: 'Warning', constraintType: 'Admission', verdict: 'violates' })).toBe(
      'warned',
    );
  });

  it('keeps network, mesh and opaque webhook rules as standing, whatever their severity', () => {
    for (const constraintType of ['NetworkEgress', 'NetworkIngress', 'MeshPolicy', 'Admission'] as const)
      expect(consequenceOf({ severity: 'Critical', constraintType, verdict: 'applies' })).toBe('standing');
  });

  it('treats a missing companion as a finding about the object, not a standing rule', () => {
    expect(
      consequenceOf({ severity: 'Warning', constraintType: 'MissingResource', verdict: 'applies' }),
    ).toBe('warned');
  });

  it('without a verdict, keeps traffic rules standing and calls everything else unknown', () => {
    expect(consequenceOf({ severity: 'Critical', constraintType: 'NetworkEgress' })).toBe('standing');
    expect(consequenceOf({ severity: 'Critical', constraintType: 'ResourceLimit' })).toBe('unknown');
    expect(consequenceOf({ severity: 'Warning', constraintType: 'Admission', verdict: 'unknown' })).toBe(
      'unknown',
    );
    expect(consequenceOf({ severity: 'Critical', constraintType: 'Admission', verdict: 'passes' })).toBe(
      'passes',
    );
  });
});

describe('severityForObject', () => {
  it('makes a standing Critical network rule Info, so the webhook drops it', () => {
    expect(
      severityForObject({ severity: 'Critical', constraintType: 'NetworkEgress' }, 'applies', true),
    ).toBe('Info');
    expect(severityForObject({ severity: 'Warning', constraintType: 'Admission' }, 'applies', false)).toBe(
      'Info',
    );
  });

  it('makes a violation Critical exactly when its source denies', () => {
    expect(severityForObject({ severity: 'Warning', constraintType: 'Admission' }, 'violates', true)).toBe(
      'Critical',
    );
    expect(severityForObject({ severity: 'Critical', constraintType: 'Admission' }, 'violates', false)).toBe(
      'Warning',
    );
  });

  it('caps a rule not evaluated at Warning (nothing says it rejects) and keeps Info', () => {
    expect(severityForObject({ severity: 'Critical', constraintType: 'Admission' }, 'unknown', true)).toBe(
      'Warning',
    );
    expect(severityForObject({ severity: 'Info', constraintType: 'Admission' }, 'unknown', true)).toBe(
      'Info',
    );
  });

  it('keeps a missing companion at its own severity', () => {
    expect(
      severityForObject({ severity: 'Critical', constraintType: 'MissingResource' }, 'applies', false),
    ).toBe('Critical');
  });
});
