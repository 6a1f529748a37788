// Prints the plain "N passed, N failed" line CI reads, summed over jest --json result files.
// A missing or unreadable results file counts as one failure: a crashed runner must not look green.
const fs = require('node:fs');

let passed = 0;
let failed = 0;
let skipped = 0;
for (const file of process.argv.slice(2)) {
  try {
    const results = JSON.parse(fs.readFileSync(file, 'utf8'));
    passed += results.numPassedTests;
    failed += results.numFailedTests + (results.numRuntimeErrorTestSuites || 0);
    skipped += results.numPendingTests || 0;
  } catch (error) {
    console.error(`could not read test results ${file}: ${error.message}`);
    failed += 1;
  }
}
if (process.argv.length <= 2) failed += 1;
// Skipped tests (e.g. deploy tests without the Pulumi providers) are shown, never counted as passed.
console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
