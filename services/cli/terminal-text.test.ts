import { withoutTerminalControls, withoutTerminalControlsDeep } from './terminal-text';

describe('withoutTerminalControls', () => {
  it.each([
    ['OSC 52 clipboard write (BEL)', 'a\x1b]52;c;ZXZpbA==\x07b', 'ab'],
    ['OSC 52 clipboard write (ST)', 'a\x1b]52;c;ZXZpbA==\x1b\\b', 'ab'],
    ['OSC 8 hyperlink', '\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\', 'click'],
    ['CSI cursor and erase', 'ok\x1b[2K\x1b[1A\x1b[31mred\x1b[0m', 'okred'],
    ['8-bit CSI and OSC', 'a\x9b2Jb\x9d52;c;x\x9cc', 'abc'],
    ['unterminated OSC', 'a\x1b]52;c;ZXZpbA==', 'a'],
    ['carriage return and backspace', 'safe\rEVIL\b', 'safeEVIL'],
  ])('%s', (_name, input, expected) => {
    expect(withoutTerminalControls(input)).toBe(expected);
  });

  it('keeps newlines, tabs and ordinary Unicode', () => {
    expect(withoutTerminalControls('line 1\n\tline 2 — ü ✓')).toBe('line 1\n\tline 2 — ü ✓');
  });

  it('cleans every string of a parsed answer, keys included', () => {
    expect(
      withoutTerminalControlsDeep({ error: 'x\x1b]52;c;e\x07', list: ['\x1b[1m', 2], ['k\x1b[0m']: true }),
    ).toEqual({ error: 'x', list: ['', 2], k: true });
  });
});
