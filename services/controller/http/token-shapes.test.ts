import { couldBeValidToken } from './token-shapes';

const now = Date.parse('2026-11-27T12:00:00Z');
const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
const jwt = (claims: object, header: object = { alg: 'RS256' }) =>
  `${encode(header)}.${encode(claims)}.c2lnbmF0dXJl`;

describe('couldBeValidToken', () => {
  it('reviews JWTs that have not expired by their own claims (ServiceAccount, OIDC)', () => {
    expect(couldBeValidToken(jwt({ sub: 'alice', exp: now / 1000 + 60 }), now)).toBe(true);
    expect(couldBeValidToken(jwt({ sub: 'legacy-service-account' }), now)).toBe(true);
  });

  it('refuses expired, unsigned and malformed JWTs without asking', () => {
    expect(couldBeValidToken(jwt({ sub: 'alice', exp: now / 1000 - 1 }), now)).toBe(false);
    expect(couldBeValidToken(jwt({ sub: 'alice' }, { alg: 'none' }), now)).toBe(false);
    expect(couldBeValidToken(`${encode({ alg: 'RS256' })}.not-json.sig`, now)).toBe(false);
    expect(couldBeValidToken('a.b', now)).toBe(false);
  });

  it('reviews bootstrap, EKS and GKE token formats', () => {
    expect(couldBeValidToken('abcdef.0123456789abcdef', now)).toBe(true);
    expect(couldBeValidToken(`k8s-aws-v1.${'aHR0cHM6Ly9zdHM'.repeat(4)}`, now)).toBe(true);
    expect(couldBeValidToken(`ya29.${'a0AfH6SM'.repeat(4)}`, now)).toBe(true);
  });

  it('refuses free-form strings', () => {
    for (const token of ['not-a-jwt-1', 'password', 'x'.repeat(9000), ''])
      expect(couldBeValidToken(token, now)).toBe(false);
  });
});
