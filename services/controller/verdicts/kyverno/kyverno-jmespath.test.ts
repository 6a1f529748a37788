import { queryJmesPath } from './kyverno-jmespath';

// Kyverno's regex functions run Go's RE2 on the caller's text: linear, with Go's `$1` / `${name}`
// replacement syntax.
describe("Kyverno's JMESPath regex functions", () => {
  it('regex_match finds a match anywhere, as Go MatchString', () => {
    expect(queryJmesPath("regex_match('^nginx', image)", { image: 'nginx:1.27' })).toBe(true);
    expect(queryJmesPath("regex_match('[0-9]+$', image)", { image: 'nginx:1.27' })).toBe(true);
    expect(queryJmesPath("regex_match('^redis', image)", { image: 'nginx:1.27' })).toBe(false);
  });

  it('regex_match on a backtracking pattern stays linear in the subject', () => {
    const subject = `${'a'.repeat(30_000)}!`;
    const started = performance.now();
    expect(queryJmesPath("regex_match('^([a-z0-9]+[._-]?)+$', subject)", { subject })).toBe(false);
    // A backtracking engine takes minutes on this subject; RE2 takes milliseconds.
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('regex_replace_all expands groups as Go does; the literal variant does not', () => {
    expect(
      queryJmesPath("regex_replace_all('([a-z]+):([0-9.]+)', image, '$2-$1')", { image: 'nginx:1.27' }),
    ).toBe('1.27-nginx');
    expect(queryJmesPath("regex_replace_all_literal('[0-9]', image, '$1')", { image: 'v1' })).toBe('v$1');
  });
});
