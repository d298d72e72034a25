// The .vsix `npm start` and the e2e tests install: koffi (kept external by the bundle) must be inside and load from
// there, while sources, tests and the other node_modules stay out so the package stays small.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { codeServer, E2E_TIMEOUT_MS, extensionVsix, repoRoot } from './harness';

interface PackageVsixModule {
  listVsix(vsixPath: string): string[];
  requiredVsixEntries: string[];
}

describe('e2e: the packaged extension', function () {
  this.timeout(2 * E2E_TIMEOUT_MS);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const packager = require(path.join(repoRoot, 'scripts', 'package-vsix.mjs')) as PackageVsixModule;

  it("carries the bundle and koffi's linux_x64 binary, and nothing from the sources or other dependencies", () => {
    const entries = packager.listVsix(extensionVsix());
    for (const required of packager.requiredVsixEntries) assert.ok(entries.includes(required), `missing ${required}`);
    const strays = entries.filter(
      (entry) =>
        (/\.ts$/.test(entry) && !entry.endsWith('.d.ts')) ||
        /^extension\/(native|test|bench|scripts|out|fixtures-bin|\.cache)\//.test(entry) ||
        (/^extension\/node_modules\//.test(entry) && !entry.startsWith('extension/node_modules/koffi/')) ||
        /koffi\/build\/koffi\/(?!linux_x64\/)/.test(entry),
    );
    assert.deepEqual(strays, []);
  });

  it('installs with code-server --install-extension, and the shipped koffi loads in plain Node', () => {
    const extensionsDir = mkdtempSync(path.join(os.tmpdir(), 'ringside-e2e-install-'));
    try {
      codeServer().installVsix(extensionVsix(), extensionsDir);
      const installed = readdirSync(extensionsDir).filter((name) => name.startsWith('ringside.ringside-'));
      assert.equal(installed.length, 1, `installed folders: ${readdirSync(extensionsDir).join(', ')}`);
      const koffiDir = path.join(extensionsDir, installed[0], 'node_modules', 'koffi');
      // A fresh Node (like code-server's extension host) resolving koffi from inside the installed extension only.
      const probe = spawnSync(
        process.execPath,
        [
          '-e',
          `const k = require(${JSON.stringify(koffiDir)}); const libc = k.load('libc.so.6');
        const getpid = libc.func('int getpid(void)'); process.stdout.write(String(getpid() === process.pid))`,
        ],
        { encoding: 'utf8', cwd: os.tmpdir() },
      );
      assert.equal(probe.status, 0, probe.stderr);
      assert.equal(probe.stdout, 'true');
    } finally {
      rmSync(extensionsDir, { recursive: true, force: true });
    }
  });
});
