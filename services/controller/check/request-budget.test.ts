import { RequestBudget } from './request-budget';

describe('RequestBudget', () => {
  it('counts the CPU of each step and stops once the budget is spent', async () => {
    let cpu = 0;
    const budget = new RequestBudget(100, () => cpu);
    const spend = () => {
      cpu += 60;
      return 'done';
    };
    expect(await budget.step(spend)).toEqual({ ran: true, value: 'done' });
    expect(await budget.step(spend)).toEqual({ ran: true, value: 'done' });
    expect(budget.usedMilliseconds).toBe(120);
    expect(await budget.step(spend)).toEqual({ ran: false });
    expect(budget.reason).toContain('CPU budget of 100 ms');
  });

  it('counts only the steps: CPU between them belongs to other work', async () => {
    let cpu = 0;
    const budget = new RequestBudget(100, () => cpu);
    await budget.step(() => (cpu += 10));
    cpu += 500;
    expect(budget.usedMilliseconds).toBe(10);
    expect(budget.exhausted).toBe(false);
  });

  it('counts a step that fails too', async () => {
    let cpu = 0;
    const budget = new RequestBudget(5, () => cpu);
    await expect(
      budget.step(() => {
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
    await budget.step(() => expect(timerRan).toBe(true));
  });

  it('runs the steps of concurrent calls one at a time, a turn of the event loop between each', async () => {
    const budget = new RequestBudget();
    const events: string[] = [];
    let turns = 0;
    const ticking = setInterval(() => turns++, 0);
    const call = (name: string) =>
      Promise.all(
        [1, 2, 3].map((position) =>
          budget.step(async () => {
            events.push(`${name}${position} start`);
            await new Promise((resolve) => setTimeout(resolve, 2));
            events.push(`${name}${position} end`);
          }),
        ),
      );
    await Promise.all([call('a'), call('b')]);
    clearInterval(ticking);
    for (let index = 0; index < events.length; index += 2) {
      expect(events[index]).toMatch(/start$/);
      expect(events[index + 1]).toBe(events[index].replace('start', 'end'));
    }
    expect(turns).toBeGreaterThan(0);
  });
});
