// `npm test`: runs the npm scripts it is given (lint, then the suites, fastest first) one after another, every one
// of them even when an earlier one failed, so one run reports everything; exits non-zero when any failed.
//   node scripts/test-suites.mjs lint format:check test:unit test:kernel test:browser test:e2e
import { spawnSync } from 'node:child_process';

const scripts = process.argv.slice(2);
const results = [];
for (const script of scripts) {
  const started = Date.now();
  console.log(`\nringside: npm run ${script}`);
  const run = spawnSync('npm', ['run', '--silent', script], { stdio: 'inherit' });
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  const failed = run.status !== 0;
  results.push({ script, failed, what: failed ? `FAILED (${run.signal ?? `exit ${run.status}`})` : 'passed', seconds });
}
console.log(`\nringside: ${results.map((r) => `${r.script} ${r.what} in ${r.seconds} s`).join(', ')}`);
process.exitCode = results.some((r) => r.failed) ? 1 : 0;
