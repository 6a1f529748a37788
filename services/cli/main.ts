#!/usr/bin/env node
import { runCli } from './program';

// The `forewarn` binary (package.json `bin`). Everything is in program.ts; this file binds it to
// the process: argv, the real streams, and the exit code.

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
}).then((code) => {
  // exitCode instead of exit(): pending writes to a pipe are flushed first.
  process.exitCode = code;
});
