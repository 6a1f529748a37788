import { RequestBudget } from './request-budget';

describe('RequestBudget', () => {
  it('counts the CPU of each step and stops once the budget is spent', async () => {
    let cpu = 0;
    const budget = new RequestBudget(100, () => cpu);
    expect(await budget.nextStep()).toBe(true);
    await budget.measure(() => {
      cpu += 60;
    });
    expect(await budget.nextStep()).toBe(true);
    await budget.measure(() => {
      cpu += 60;
    });
    expect(budget.usedMilliseconds).toBe(120);
    expect(await budget.nextStep()).toBe(false);
    expect(budget.reason).toContain('CPU budget of 100 ms');
  });

  it('counts only the steps: CPU between them belongs to other work', async () => {
    let cpu = 0;
    const budget = new RequestBudget(100, () => cpu);
    await budget.measure(() => {
      cpu += 10;
    });
    cpu += 500;
    expect(budget.usedMilliseconds).toBe(10);
    expect(await budget.nextStep()).toBe(true);
  });

  it('counts a step that fails too', async () => {
    let cpu = 0;
    const budget = new RequestBudget(5, () => cpu);
    await expect(
      budget.measure(() => {
        cpu += 10;
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(budget.exhausted).toBe(true);
  });

  it('gives the event loop a turn before every step', async () => {
    const budget = new RequestBudget();
    let timerRan = false;
    setImmediate(() => (timerRan = true));
    await budget.nextStep();
    expect(timerRan).toBe(true);
  });
});
