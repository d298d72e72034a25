// Builds the C/C++ test fixtures before the tests run. Each fixture declares how to build itself
// with one or more lines `// ringside-build: NAME: COMMAND`, where COMMAND may use {src} and {out};
// {out} is fixtures-bin/NAME. Rebuilds only when the source is newer than the binary.
// Also makes sure tracefs is mounted, since tracepoint tests need it.
import { readdirSync, readFileSync, statSync, mkdirSync, existsSync } from 'node:fs';
import { execSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const srcDir = path.join(root, 'test/fixtures');
const outDir = path.join(root, 'fixtures-bin');
mkdirSync(outDir, { recursive: true });

let built = 0;
for (const file of readdirSync(srcDir)) {
  if (!/\.(c|cc|cpp)$/.test(file)) continue;
  const src = path.join(srcDir, file);
  const text = readFileSync(src, 'utf8');
  for (const match of text.matchAll(/^\/\/ ringside-build: ([\w.-]+): (.+)$/gm)) {
    const [, name, command] = match;
    const out = path.join(outDir, name);
    if (existsSync(out) && statSync(out).mtimeMs >= statSync(src).mtimeMs) continue;
    const cmd = command.replaceAll('{src}', JSON.stringify(src)).replaceAll('{out}', JSON.stringify(out)).replaceAll('{dir}', JSON.stringify(outDir));
    execSync(cmd, { stdio: 'inherit', cwd: outDir, shell: '/bin/bash' });
    built++;
  }
}
if (built) console.log(`prepare: built ${built} fixture(s) into fixtures-bin/`);

const tracefs = '/sys/kernel/tracing';
if (!existsSync(path.join(tracefs, 'events'))) {
  if (process.getuid && process.getuid() !== 0) {
    console.error(
      `prepare: tracefs is not mounted at ${tracefs} and this is not root; tracepoint tests will fail. Run: sudo mount -t tracefs nodev ${tracefs}`,
    );
  } else {
    execSync(`mount -t tracefs nodev ${tracefs}`, { stdio: 'inherit' });
    console.log(`prepare: mounted tracefs at ${tracefs}`);
  }
}
