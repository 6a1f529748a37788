#!/usr/bin/env node
import path from 'node:path';
import { runCli } from './program';

// The `forewarn` binary (package.json `bin`, also as `kubectl-forewarn`, which kubectl runs for
// `kubectl forewarn`). Everything is in program.ts; this file binds it to the process: argv, the
// real streams, the name it was started by, and the exit code. It imports nothing else: start-up
// time is what program.ts loads (docs/benchmarks.md).

async function readStandardInput(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin)
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

void runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  readStdin: readStandardInput,
  // kubectl runs plugins by their path: help and errors then say `kubectl forewarn`.
  programName: path.basename(process.argv[1] ?? '').startsWith('kubectl-') ? 'kubectl forewarn' : 'forewarn',
}).then((code) => {
  // exitCode instead of exit(): pending writes to a pipe are flushed first.
  process.exitCode = code;
});
