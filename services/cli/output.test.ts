import { formatTable, wrapWidth } from './output';
import { renderReportTable } from './render-views';
import { createStyle } from './output';
import type { Report } from '../model/api';

// Issue 31: `forewarn report` fits the terminal as `check` does (no 262-column lines).

const longHint = 'ask the cluster admins to allow the egress traffic your pods need; '.repeat(3).trim();

describe('formatTable with a width', () => {
  it('wraps the last column under itself so that every line fits', () => {
    const table = formatTable(
      ['SEVERITY', 'NAME', 'REMEDIATION'],
      [
        ['Critical', 'block-cloud-metadata', longHint],
        ['Info', 'x', 'short'],
      ],
      undefined,
      80,
    );
    const lines = table.trimEnd().split('\n');
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(80);
    const column = lines[0].indexOf('REMEDIATION');
    expect(lines[1].slice(column)).toMatch(/^ask the cluster admins/);
    expect(lines[2].slice(0, column).trim()).toBe('');
    // Nothing lost: the wrapped column reads back as the hint.
    const hint = lines
      .slice(1, -1)
      .map((line) => line.slice(column))
      .join(' ');
    expect(hint).toBe(longHint);
  });

  it('puts the last column below its row when the others leave it too little room', () => {
    const table = formatTable(['NAME', 'HINT'], [['n'.repeat(60), longHint]], undefined, 70);
    const lines = table.trimEnd().split('\n');
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(70);
    expect(lines[0]).toBe('NAME');
    expect(lines[1]).toBe('    HINT');
    expect(lines[3]).toMatch(/^ {4}ask the cluster admins/);
  });

  it('keeps each row on one line without a width (pipes, files)', () => {
    const table = formatTable(['NAME', 'HINT'], [['n', longHint]]);
    expect(table.trimEnd().split('\n')).toHaveLength(2);
  });
});

describe('report table', () => {
  const report = {
    namespace: 'shop',
    constraintCount: 1,
    criticalCount: 1,
    warningCount: 0,
    infoCount: 0,
    detailLevel: 'summary',
    constraints: [
      {
        severity: 'Critical',
        type: 'NetworkEgress',
        name: 'block-cloud-metadata',
        source: 'CiliumClusterwideNetworkPolicy',
        effect: 'deny',
        detailLevel: 'summary',
        remediation: { summary: longHint },
      },
    ],
  } as unknown as Report;

  it('fits COLUMNS, and stays whole when piped', () => {
    const width = wrapWidth({ write: () => true, isTTY: false }, { COLUMNS: '100' });
    const fitted = renderReportTable(report, createStyle(false), width);
    for (const line of fitted.split('\n')) expect([...line].length).toBeLessThanOrEqual(100);
    const whole = renderReportTable(report, createStyle(false));
    expect(whole.split('\n').some((line) => line.length > 100)).toBe(true);
  });
});
