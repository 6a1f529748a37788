import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { runCli, type CliEnvironment } from '../../../services/cli/program';
import { createControllerApp } from '../../../services/controller/http/app';
import { silentLogger } from '../../../services/logging/logger';
import {
  demoClusterObjects,
  FIXED_NOW,
  indexObjects,
  runtimeStateFor,
} from '../../support/controller-fixtures';

// The sample output in README.md and docs/cli.md is the product's real output, not a copy that ages:
// each block below a `<!-- sample: ... -->` marker must equal what `forewarn` prints for that command
// now. When the output changes on purpose, regenerate the blocks with
//   FOREWARN_UPDATE_SAMPLES=1 npx jest test/integration/docs/sample-output.test.ts
// and review the diff. Commands other than `check --manifests` ask a controller serving the demo
// cluster (examples/manifests) at the `summary` level, with a fixed key for opaque references.

const ROOT = path.join(__dirname, '../../..');
const MARKER =
  /^<!-- sample: forewarn (.+?) \(COLUMNS=(\d+)\) -->\n```text\n\$ forewarn .+\n([\s\S]*?)```$/gm;
const DOCUMENTS = ['README.md', 'docs/cli.md'];

let controller: Server | undefined;

/** A controller of the demo cluster, started for the first sample that needs one. */
async function demoControllerUrl(): Promise<string> {
  if (!controller) {
    const demo = indexObjects(demoClusterObjects(), { opaqueReferenceKey: new Uint8Array(32).fill(7) });
    const server = createServer(
      createControllerApp({
        index: demo.index,
        runtimeState: () => runtimeStateFor(demo),
        configuredDetailLevel: 'summary',
        clock: () => FIXED_NOW,
        logger: silentLogger(),
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    controller = server;
  }
  return `http://127.0.0.1:${(controller.address() as AddressInfo).port}`;
}

afterAll(() => new Promise<void>((resolve) => (controller ? controller.close(() => resolve()) : resolve())));

/** What `forewarn <args>` prints, run in-process from the repository root, wrapped at `columns`. */
async function forewarnOutput(args: string, columns: number): Promise<string> {
  let stdout = '';
  const environment: CliEnvironment = {
    stdout: { write: (chunk: string) => (stdout += chunk), isTTY: false },
    stderr: { write: () => true },
    env: { COLUMNS: String(columns) },
    readStdin: async () => '',
  };
  // Paths in the command are relative to the repository, and run from it: the output names them as
  // written and wraps the same wherever the checkout is (an absolute path would move every wrap).
  const words = args.split(' ');
  if (!words.includes('--manifests')) words.push('--url', await demoControllerUrl());
  const previousDirectory = process.cwd();
  process.chdir(ROOT);
  try {
    await runCli(words, environment);
  } finally {
    process.chdir(previousDirectory);
  }
  return stdout;
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
