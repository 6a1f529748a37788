// The controller's V8 heap limit follows its container's memory limit (infra/controller.ts).
import { heapLimitMegabytes } from './controller';

describe('the controller heap limit', () => {
  it('is three quarters of the memory limit, in MiB, for any quantity suffix', () => {
    const limitOf = (memory: string) =>
      heapLimitMegabytes({ requests: { cpu: '100m', memory: '256Mi' }, limits: { cpu: '500m', memory } });
    expect(limitOf('768Mi')).toBe(576);
    expect(limitOf('512Mi')).toBe(384);
    expect(limitOf('2Gi')).toBe(1536);
    expect(limitOf('1G')).toBe(715);
    expect(limitOf('536870912')).toBe(384);
  });
});
