import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runCli, type CliEnvironment } from '../../../services/cli/program';

// The sample output in README.md and docs/cli.md is the product's real output, not a copy that ages:
// each block below a `<!-- sample: ... -->` marker must equal what `forewarn` prints for that command
// now. When the output changes on purpose, regenerate the blocks with
//   FOREWARN_UPDATE_SAMPLES=1 npx jest test/integration/docs/sample-output.test.ts
// and review the diff.

const ROOT = path.join(__dirname, '../../..');
const MARKER =
  /^<!-- sample: forewarn (.+?) \(COLUMNS=(\d+)\) -->\n```text\n\$ forewarn .+\n([\s\S]*?)```$/gm;
const DOCUMENTS = ['README.md', 'docs/cli.md'];

/** What `forewarn <args>` prints, run in-process from the repository root, wrapped at `columns`. */
async function forewarnOutput(args: string, columns: number): Promise<string> {
  let stdout = '';
  const environment: CliEnvironment = {
    stdout: { write: (chunk: string) => (stdout += chunk), isTTY: false },
    stderr: { write: () => true },
    env: { COLUMNS: String(columns) },
    readStdin: async () => '',
  };
  // Paths in the command are relative to the repository; the output names them as written.
  const absolute = args
    .split(' ')
    .map((word) => (/^(examples|test)\//.test(word) ? path.join(ROOT, word) : word));
  await runCli(absolute, environment);
  return stdout.split(`${ROOT}/`).join('');
}

async function samplesOf(document: string): Promise<{ text: string; expected: string }> {
  const text = readFileSync(path.join(ROOT, document), 'utf8');
  let expected = text;
  const blocks = [...text.matchAll(MARKER)];
  for (const [block, args, columns] of blocks) {
    const output = await forewarnOutput(args, Number(columns));
    // Replacer functions: the output may hold `$`, which a replacement string would interpret.
    const regenerated = block.replace(
      /(\$ forewarn .+\n)[\s\S]*?```$/,
      (_whole, command: string) => `${command}${output.trimEnd()}\n\`\`\``,
    );
    expected = expected.replace(block, () => regenerated);
  }
  if (blocks.length === 0) throw new Error(`${document} has no <!-- sample: forewarn ... --> block`);
  return { text, expected };
}

describe('sample output in the documentation', () => {
  it.each(DOCUMENTS)('%s shows what forewarn prints now', async (document) => {
    const { text, expected } = await samplesOf(document);
    if (process.env.FOREWARN_UPDATE_SAMPLES === '1' && text !== expected)
      writeFileSync(path.join(ROOT, document), expected);
    else expect(text).toBe(expected);
  });
});
