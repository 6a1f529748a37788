import {
  buildWarnings,
  formatWarning,
  MAX_WARNING_LENGTH,
  orderedWarnings,
  shortenWarning,
  type WarningSource,
} from './warnings';

const critical: WarningSource = {
  severity: 'Critical',
  summary: 'ResourceQuota "compute" is at 95% of cpu',
  remediationHint: 'Ask for a larger quota',
};
const warning: WarningSource = {
  severity: 'Warning',
  summary: 'NetworkPolicy "deny-in" denies all ingress traffic',
  remediationHint: 'Add a policy allowing your ingress',
};
const info: WarningSource = {
  severity: 'Info',
  summary: 'LimitRange "defaults" sets default limits',
  remediationHint: 'Set requests explicitly',
};

describe('formatWarning', () => {
  it('prefixes by severity and joins summary and hint with " - "', () => {
    expect(formatWarning(critical)).toBe(
      '[CRITICAL] ResourceQuota "compute" is at 95% of cpu - Ask for a larger quota',
    );
    expect(formatWarning(warning)).toBe(
      '[WARNING] NetworkPolicy "deny-in" denies all ingress traffic - Add a policy allowing your ingress',
    );
  });

  it('drops Info', () => {
    expect(formatWarning(info)).toBeNull();
  });

  it('leaves out the separator when there is no hint', () => {
    expect(formatWarning({ severity: 'Warning', summary: 'Something', remediationHint: '' })).toBe(
      '[WARNING] Something',
    );
  });

  it('turns control characters (newlines, tabs) into single spaces', () => {
    expect(
      formatWarning({ severity: 'Warning', summary: 'line one\nline two\t!', remediationHint: 'fix\r\nit' }),
    ).toBe('[WARNING] line one line two ! - fix it');
  });
});

describe('shortenWarning', () => {
  it('keeps a warning of exactly 256 characters', () => {
    const text = 'x'.repeat(256);
    expect(shortenWarning(text)).toBe(text);
  });

  it('shortens 257 characters to 256 ending with …', () => {
    const shortened = shortenWarning('y'.repeat(257));
    expect(shortened).toBe(`${'y'.repeat(255)}…`);
    expect(Array.from(shortened)).toHaveLength(MAX_WARNING_LENGTH);
  });

  it('counts code points and never splits a surrogate pair', () => {
    const shortened = shortenWarning('🚫'.repeat(300));
    expect(Array.from(shortened)).toHaveLength(256);
    expect(shortened).toBe(`${'🚫'.repeat(255)}…`);
  });

  it('does not leave a space before the ellipsis', () => {
    expect(shortenWarning(`${'a'.repeat(254)} bcd`)).toBe(`${'a'.repeat(254)}…`);
  });

  it('applies to formatted warnings', () => {
    const long = formatWarning({ severity: 'Critical', summary: 's'.repeat(300), remediationHint: 'h' });
    expect(long).toBe(`[CRITICAL] ${'s'.repeat(244)}…`);
  });
});

describe('buildWarnings', () => {
  it('puts Critical first, keeps the controller order within a severity and drops Info', () => {
    const second: WarningSource = { ...warning, summary: 'second warning' };
    const otherCritical: WarningSource = { ...critical, summary: 'other critical' };
    expect(buildWarnings([warning, info, critical, second, otherCritical])).toEqual([
      '[CRITICAL] ResourceQuota "compute" is at 95% of cpu - Ask for a larger quota',
      '[CRITICAL] other critical - Ask for a larger quota',
      '[WARNING] NetworkPolicy "deny-in" denies all ingress traffic - Add a policy allowing your ingress',
      '[WARNING] second warning - Add a policy allowing your ingress',
    ]);
  });

  it('removes duplicates, including ones that become equal once shortened', () => {
    const longA: WarningSource = { severity: 'Warning', summary: `${'z'.repeat(300)}A`, remediationHint: '' };
    const longB: WarningSource = { severity: 'Warning', summary: `${'z'.repeat(300)}B`, remediationHint: '' };
    expect(buildWarnings([warning, warning, longA, longB])).toHaveLength(2);
  });

  it('keeps the severity of each warning beside its text, so callers count without parsing it', () => {
    expect(orderedWarnings([warning, info, critical, warning])).toEqual([
      { severity: 'Critical', text: formatWarning(critical) },
      { severity: 'Warning', text: formatWarning(warning) },
    ]);
  });

  it('gives no warnings for Info only or nothing', () => {
    expect(buildWarnings([info])).toEqual([]);
    expect(buildWarnings([])).toEqual([]);
  });
});
