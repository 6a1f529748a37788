import { compileCel } from './cel-program';

// Kubernetes' CEL IP and CIDR libraries, with the examples of their documentation (k8s.io/apiserver
// pkg/cel/library ip.go and cidr.go) and the real-world ServiceCIDR policy's expression.

function run(expression: string): unknown {
  const result = compileCel(expression)({});
  if (!result.ok) throw new Error(result.message);
  return result.value;
}

describe('Kubernetes CEL IP and CIDR libraries', () => {
  it.each([
    ["isIP('127.0.0.1')", true],
    ["isIP('::1')", true],
    ["isIP('127.0.0.256')", false],
    ["isIP(':::1')", false],
    ["isIP('::ffff:127.0.0.1')", false],
    ["isIP('fe80::1%eth0')", false],
    ["ip.isCanonical('127.0.0.1')", true],
    ["ip.isCanonical('2001:db8::abcd')", true],
    ["ip.isCanonical('2001:DB8::ABCD')", false],
    ["ip.isCanonical('2001:db8:0:0:0:0:0:abcd')", false],
    ["ip('127.0.0.1').family()", 4n],
    ["ip('::1').family()", 6n],
    ["ip('0.0.0.0').isUnspecified()", true],
    ["ip('127.0.0.1').isUnspecified()", false],
    ["ip('::').isUnspecified()", true],
    ["ip('127.0.0.1').isLoopback()", true],
    ["ip('::1').isLoopback()", true],
    ["ip('224.0.0.1').isLinkLocalMulticast()", true],
    ["ip('224.0.1.1').isLinkLocalMulticast()", false],
    ["ip('ff02::1').isLinkLocalMulticast()", true],
    ["ip('169.254.169.254').isLinkLocalUnicast()", true],
    ["ip('fe80::1').isLinkLocalUnicast()", true],
    ["ip('192.168.0.1').isGlobalUnicast()", true],
    ["ip('255.255.255.255').isGlobalUnicast()", false],
    ["ip('2001:db8::abcd').isGlobalUnicast()", true],
    ["ip('ff00::1').isGlobalUnicast()", false],
    ["ip('2001:DB8::1') == ip('2001:db8::1')", true],
  ])('ip: %s', (expression, expected) => {
    expect(run(expression)).toBe(expected);
  });

  it.each([
    ["isCIDR('192.168.0.0/16')", true],
    ["isCIDR('::1/128')", true],
    ["isCIDR('192.168.0.0/33')", false],
    ["isCIDR('192.168.0.0')", false],
    ["cidr('192.168.0.0/24').containsIP(ip('192.168.0.1'))", true],
    ["cidr('192.168.0.0/24').containsIP(ip('192.168.1.1'))", false],
    ["cidr('192.168.0.0/24').containsIP('192.168.0.1')", true],
    ["cidr('2001:db8::/32').containsIP('2001:db8::1')", true],
    ["cidr('192.168.0.0/24').containsIP('::1')", false],
    ["cidr('192.168.0.0/24').containsCIDR(cidr('192.168.0.0/25'))", true],
    ["cidr('192.168.0.0/24').containsCIDR('192.168.0.0/24')", true],
    ["cidr('192.168.0.0/24').containsCIDR('192.168.0.0/23')", false],
    ["cidr('192.168.0.1/24').ip() == ip('192.168.0.1')", true],
    ["cidr('192.168.0.1/24').masked() == cidr('192.168.0.0/24')", true],
    ["cidr('2001:db8::1/32').masked() == cidr('2001:db8::/32')", true],
    ["cidr('192.168.0.0/24').prefixLength()", 24n],
    // The real-world ServiceCIDR guard (policies/k8s-website): every new range within an allowed one.
    ["['10.96.0.0/16', '2001:db8::/64'].exists(allowed, cidr(allowed).containsCIDR('10.96.12.0/24'))", true],
    ["['10.96.0.0/16', '2001:db8::/64'].exists(allowed, cidr(allowed).containsCIDR('10.97.0.0/24'))", false],
  ])('cidr: %s', (expression, expected) => {
    expect(run(expression)).toBe(expected);
  });

  it('rejects what Kubernetes rejects, as evaluation errors rather than unsupported functions', () => {
    for (const expression of [
      "ip('010.0.0.1')",
      "ip('::ffff:1.2.3.4')",
      "cidr('10.0.0.0/33')",
      "cidr('10.0.0.0')",
    ]) {
      const result = compileCel(expression)({});
      expect(result).toMatchObject({ ok: false, unsupported: false });
    }
  });
});
