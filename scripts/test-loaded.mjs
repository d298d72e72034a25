// `npm run test:loaded`: the whole suite (`npm test`) with every core kept busy beside it, as a developer's laptop
// running a build or a shared CI runner looks. Every test must pass like this: tests wait on conditions, not durations,
// and compare with perf on the same run, not with fixed sizes or times.
//   npm run test:loaded [-- --hogs N]     N busy loops (default: one per online CPU)
// The hogs are plain shell loops at the default nice level, in a process group of their own; they are ended however
// this script ends (exit, Ctrl-C, SIGTERM). Prints how long the suite took with how many hogs, and the load it saw.
import { spawn } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';

const hogsArgument = process.argv.indexOf('--hogs');
const hogCount = hogsArgument > 0 ? Number(process.argv[hogsArgument + 1]) : availableParallelism();
if (!Number.isInteger(hogCount) || hogCount < 0) {
  console.error(`ringside: --hogs takes a whole number of busy loops, not ${process.argv[hogsArgument + 1]}`);
  process.exit(2);
}

const hogs = Array.from({ length: hogCount }, () => spawn('sh', ['-c', 'while :; do :; done'], { detached: true, stdio: 'ignore' }));
const endHogs = () => {
  for (const hog of hogs) {
    try {
      process.kill(-hog.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
};
process.on('exit', endHogs);

const started = Date.now();
let peakLoad = 0;
const sampler = setInterval(() => {
  peakLoad = Math.max(peakLoad, loadavg()[0]);
}, 5000);
console.log(`ringside: npm test with ${hogCount} busy loop(s) beside it (pids ${hogs.map((hog) => hog.pid).join(', ')})`);
const test = spawn('npm', ['test'], { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    test.kill(signal);
    endHogs();
    process.exit(130);
  });
}
test.on('exit', (code, signal) => {
  clearInterval(sampler);
  endHogs();
  const minutes = ((Date.now() - started) / 60000).toFixed(1);
  console.log(
    `ringside: npm test ${code === 0 ? 'passed' : `failed (${signal ?? `exit ${code}`})`} in ${minutes} min ` +
      `with ${hogCount} busy loop(s); peak 1-minute load ${peakLoad.toFixed(1)}`,
  );
  process.exit(code ?? 1);
});
