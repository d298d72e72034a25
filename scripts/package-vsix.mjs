// Packages Ringside as a .vsix for Linux x64 with @vscode/vsce (works offline).
//
// The bundles in dist/ keep `koffi` external (it loads a native .node file relative to its own package), so koffi must
// travel inside the .vsix. vsce's npm dependency detection (the default, NOT --no-dependencies, which drops every
// node_modules file) lists the production dependencies; .vscodeignore then keeps only koffi's loader and its linux_x64
// binary. The result is checked: a .vsix without koffi's binary or the extension entry is an error, not a warning.
//
//   node scripts/package-vsix.mjs [--out FILE] [--no-build]      prints the .vsix path
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeFailure, ScriptError } from './script-error.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export class PackageVsixError extends ScriptError {
  constructor(message) {
    super(message);
    this.name = 'PackageVsixError';
  }
}

/** Files that must be inside every Ringside .vsix for it to activate on Linux x64. */
export const requiredVsixEntries = [
  'extension/package.json',
  'extension/dist/extension.js',
  // The walkthrough of the demo's first screen (package.json contributes.walkthroughs).
  'extension/extension/walkthrough/record.md',
  'extension/node_modules/koffi/package.json',
  'extension/node_modules/koffi/index.js',
  'extension/node_modules/koffi/build/koffi/linux_x64/koffi.node',
];

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: repoRoot, encoding: 'utf8', ...options });
  if (result.error) throw new PackageVsixError(`${command} could not start: ${result.error.message}`);
  return result;
}

/** Lists the entry names of a .vsix (a zip) from its central directory, without external tools. */
export function listVsix(vsixPath) {
  const zip = readFileSync(vsixPath);
  // The end-of-central-directory record (signature 0x06054b50) sits in the last 22..65557 bytes.
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 65_557); i--) {
    if (zip.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new PackageVsixError(`${vsixPath} is not a zip (no end-of-central-directory record)`);
  const count = zip.readUInt16LE(eocd + 10);
  let offset = zip.readUInt32LE(eocd + 16);
  const names = [];
  for (let n = 0; n < count; n++) {
    if (offset + 46 > zip.length || zip.readUInt32LE(offset) !== 0x02014b50) {
      throw new PackageVsixError(`${vsixPath}: corrupt central directory at entry ${n}`);
    }
    const nameLength = zip.readUInt16LE(offset + 28);
    const extraLength = zip.readUInt16LE(offset + 30);
    const commentLength = zip.readUInt16LE(offset + 32);
    names.push(zip.toString('utf8', offset + 46, offset + 46 + nameLength));
    offset += 46 + nameLength + extraLength + commentLength;
  }
  return names;
}

/**
 * Builds (unless build is false) and packages the extension. Returns the .vsix path and its size.
 * `root` is the extension folder (the repo; tests may point it at a copy).
 * @param {{ out?: string, build?: boolean, root?: string }} [options]
 */
export function packageVsix({ out, build = true, root = repoRoot } = {}) {
  const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  const vsixPath = path.resolve(out ?? path.join(repoRoot, '.cache', `${manifest.name}-${manifest.version}-linux-x64.vsix`));
  mkdirSync(path.dirname(vsixPath), { recursive: true });
  if (build) {
    const built = run('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
    if (built.status !== 0) throw new PackageVsixError(`npm run build failed (exit ${built.status})`);
  }
  if (!existsSync(path.join(root, 'dist', 'extension.js'))) {
    throw new PackageVsixError('dist/extension.js does not exist: the extension was not built (npm run build)');
  }
  const vsce = path.join(repoRoot, 'node_modules', '@vscode', 'vsce', 'vsce');
  const args = [
    vsce,
    'package',
    '--target',
    'linux-x64', // koffi's binary inside is linux_x64 only
    '--out',
    vsixPath,
    '--no-yarn',
    // The manifest has no repository/LICENSE file yet; without these vsce stops to ask on a terminal.
    '--allow-missing-repository',
    '--skip-license',
    // README links are relative to the repo; there is no public URL to rewrite them to.
    '--no-rewrite-relative-links',
  ];
  const packaged = run(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  if (packaged.status !== 0) {
    throw new PackageVsixError(`vsce package failed (exit ${packaged.status}):\n${packaged.stdout}${packaged.stderr}`);
  }
  const entries = new Set(listVsix(vsixPath));
  const missing = requiredVsixEntries.filter((e) => !entries.has(e));
  if (missing.length) throw new PackageVsixError(`${vsixPath} lacks ${missing.join(', ')}`);
  return { vsixPath, bytes: statSync(vsixPath).size, files: entries.size };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const outIndex = argv.indexOf('--out');
  try {
    const result = packageVsix({ out: outIndex >= 0 ? argv[outIndex + 1] : undefined, build: !argv.includes('--no-build') });
    console.log(`${result.vsixPath} (${(result.bytes / 1024 / 1024).toFixed(2)} MB, ${result.files} files)`);
  } catch (error) {
    console.error(describeFailure(error));
    process.exit(1);
  }
}
