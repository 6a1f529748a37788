import { anyPrefixMatch, anySuffixMatch, RegoBuiltinError } from './rego-builtins';

// OPA's strings.any_prefix_match / any_suffix_match, as the host gives them to compiled templates.

describe('OPA string match built-ins for Wasm templates', () => {
  it('matches a string or any of a list (a set arrives as a list) against any prefix', () => {
    expect(anyPrefixMatch('registry.corp.example/web:1', ['docker.io/', 'registry.corp.example/'])).toBe(
      true,
    );
    expect(anyPrefixMatch('docker.io/nginx', 'registry.corp.example/')).toBe(false);
    expect(anyPrefixMatch(['a/x', 'b/y'], ['b/'])).toBe(true);
    expect(anyPrefixMatch('anything', [])).toBe(false);
    expect(anyPrefixMatch([], ['a'])).toBe(false);
  });

  it('matches any suffix', () => {
    expect(anySuffixMatch('nginx:latest', [':latest', ':dev'])).toBe(true);
    expect(anySuffixMatch('nginx:1.27', [':latest', ':dev'])).toBe(false);
    expect(anySuffixMatch(['x:dev'], ':dev')).toBe(true);
  });

  it('refuses operands that are not strings, as OPA does', () => {
    expect(() => anyPrefixMatch(7, ['a'])).toThrow(RegoBuiltinError);
    expect(() => anySuffixMatch('a', ['b', 3])).toThrow(/operand 2/);
  });
});
