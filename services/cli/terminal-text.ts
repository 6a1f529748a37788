// Text a server sent is printed to a terminal, and a terminal obeys escape sequences in it: OSC 52
// writes the user's clipboard, OSC 8 disguises a link, CSI moves the cursor and rewrites what was
// printed before (issue 32, row 13). Whatever answers at `--url` may be hostile, so every string of
// its answers loses its control sequences and control characters (newline and tab stay) before the
// CLI renders or reports it. The CLI's own colours are added afterwards and are not affected.

// ESC or its 8-bit form, then: a string command (OSC, DCS, SOS, PM, APC) up to its terminator (BEL
// or ST) or the end of the text; a CSI with its parameters; or any single-character escape.
const ESCAPE_SEQUENCE =
  // eslint-disable-next-line no-control-regex
  /(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[\s\S]*?(?:\x07|\x1b\\|\x9c|$)|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?|\x1b[\s\S]?/g;
// Every other C0 and C1 control character, and DEL, but newline and tab.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTER = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/** The text without terminal escape sequences and control characters (newline and tab kept). */
export function withoutTerminalControls(text: string): string {
  return text.replace(ESCAPE_SEQUENCE, '').replace(CONTROL_CHARACTER, '');
}

/** A parsed JSON answer with every string in it (keys too) cleaned by `withoutTerminalControls`. */
export function withoutTerminalControlsDeep(value: unknown): unknown {
  if (typeof value === 'string') return withoutTerminalControls(value);
  if (Array.isArray(value)) return value.map(withoutTerminalControlsDeep);
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(
      Object.entries(value).map(([key, entry]) => [
        withoutTerminalControls(key),
        withoutTerminalControlsDeep(entry),
      ]),
    );
  return value;
}
