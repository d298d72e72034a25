// The scripts a newcomer meets first (`npm start`, `npm test`'s setup): what they say when something is in the way.
// Real conditions, no mocks: apt's real lock held by another process, a real listening socket on the port, tracefs
// as root, as uid 65534 and unmounted in a private mount namespace, each compared with what the CLI itself says.
import * as assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NOBODY_UID, prepareNobodyDir, SETPRIV, type NobodyDir } from '../unprivileged/nobody';

const repoRoot = path.resolve(__dirname, '../../..');

interface TracefsScript {
  probeTracefs(mountsText?: string): { path: string; state: 'ok' | 'unmounted' | 'denied'; modeText?: string };
  tracefsProblem(probe?: unknown): string | undefined;
}
interface AptScript {
  aptGet(args: string[], options?: { lockTimeoutS?: number; log?: (line: string) => void }): { status: number; stderr: string };
}
interface CodeServerScript {
  assertPortFree(port: number): Promise<void>;
  lastInstallMs(dir?: string): number | undefined;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const script = <T>(relative: string): T => require(path.join(repoRoot, relative)) as T;

/** Holds an fcntl write lock on `file` (what apt-get takes; flock(1) takes a different kind) until killed. */
function holdFcntlLock(file: string): Promise<ChildProcess> {
  // struct flock on x86_64 and aarch64: short l_type, short l_whence, (4 bytes padding) off_t l_start, off_t l_len, pid_t l_pid.
  const perl =
    'use Fcntl; open(my $f, "+<", $ARGV[0]) or die "open: $!"; ' +
    'my $lock = pack("s s x4 q q i x4", F_WRLCK, 0, 0, 0, 0); fcntl($f, F_SETLK, $lock) or die "lock: $!"; $| = 1; print "held\\n"; sleep 120;';
  const holder = spawn('perl', ['-e', perl, file], { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let stderr = '';
    holder.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    holder.stdout.once('data', () => resolve(holder));
    holder.once('exit', (code) => reject(new Error(`perl could not hold ${file} (exit ${code}): ${stderr}`)));
  });
}

describe('setup and npm start: what a newcomer reads when something is in the way', function () {
  this.timeout(120_000);

  it('apt-get refused for a lock names the process holding it, and gives up with one ringside line after the limit', async function () {
    if (process.getuid?.() !== 0) throw new Error("this test takes apt's lock, which needs root (CI runs as root)");
    const holder = await holdFcntlLock('/var/lib/apt/lists/lock');
    const said: string[] = [];
    try {
      // Limit 0: the first refusal is final, so apt-get update never really runs (no network, no change to the machine).
      assert.throws(
        () => script<AptScript>('scripts/apt.mjs').aptGet(['update', '-qq'], { lockTimeoutS: 0, log: (line) => said.push(line) }),
        (error: Error) => {
          assert.equal(error.name, 'ScriptError');
          assert.match(
            error.message,
            new RegExp(`^apt is still busy after \\d+ s \\(Could not get lock /var/lib/apt/lists/lock\\. It is held by process ${holder.pid} \\(perl\\)\\); `),
          );
          return true;
        },
      );
    } finally {
      holder.kill('SIGKILL');
    }
    assert.deepEqual(said, []);
  });

  describe('a port already in use', () => {
    let server: Server;
    let port: number;
    before(async () => {
      server = createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as { port: number }).port;
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('npm start stops before building with one line naming the port and the process on it, no stack trace', () => {
      const started = spawnSync(process.execPath, [path.join(repoRoot, 'scripts/start.mjs')], {
        env: { ...process.env, PORT: String(port) },
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.equal(started.status, 1, started.stderr);
      assert.equal(started.stdout, '', 'nothing was built or installed');
      // One line, the port and this test process (which listens on it) named; nothing like a stack trace's "    at ".
      assert.match(
        started.stderr.trim(),
        new RegExp(
          `^ringside: port ${port} on 127\\.0\\.0\\.1 is already in use \\(by pid ${process.pid}: \\S*node .*mocha.*\\); ` +
            'choose another with PORT=<port> npm start, or stop that server$',
        ),
      );
    });

    it('PORT that is not a port gets one line too', () => {
      const started = spawnSync(process.execPath, [path.join(repoRoot, 'scripts/start.mjs')], { env: { ...process.env, PORT: 'http' }, encoding: 'utf8' });
      assert.equal(started.status, 1);
      assert.equal(started.stderr.trim(), 'ringside: PORT=http is not a TCP port (1-65535)');
    });
  });

  it('the last code-server install time comes from the newest marker that recorded one', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ringside-markers-'));
    try {
      const { lastInstallMs } = script<CodeServerScript>('scripts/code-server.mjs');
      assert.equal(lastInstallMs(dir), undefined);
      writeFileSync(path.join(dir, '.installed-4.99.0'), '2025-01-02T00:00:00.000Z install took 754.2 s\n');
      writeFileSync(path.join(dir, '.installed-4.100.3'), '2025-03-04T00:00:00.000Z install took 301.5 s\n');
      writeFileSync(path.join(dir, '.installed-4.100.4'), '2025-05-06T00:00:00.000Z\n'); // found working: no time recorded
      assert.equal(lastInstallMs(dir), 301_500);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('tracefs: setup says what the CLI says', () => {
    let nobody: NobodyDir;
    before(() => {
      nobody = prepareNobodyDir();
      cpSync(path.join(repoRoot, 'scripts'), path.join(nobody.dir, 'scripts'), { recursive: true });
      spawnSync('chown', ['-R', `${NOBODY_UID}:${NOBODY_UID}`, path.join(nobody.dir, 'scripts')]);
    });
    after(() => nobody?.dispose());

    /** [setup's problem line or 'ok', the CLI's tracepointsError or 'ok'], both as uid 65534, optionally with tracefs unmounted. */
    function bothAsNobody(unmounted: boolean): [string, string] {
      const setupProbe = [
        process.execPath,
        '--input-type=module',
        '-e',
        `import { tracefsProblem } from ${JSON.stringify(path.join(nobody.dir, 'scripts/tracefs.mjs'))}; process.stdout.write(tracefsProblem() ?? 'ok')`,
      ];
      const cliProbe = [process.execPath, nobody.cli, 'events', '--json'];
      const run = (argv: string[]) => {
        // A private mount namespace: unmounting there leaves the machine's tracefs mounted.
        const command = unmounted
          ? ['unshare', '--mount', '--propagation', 'private', 'sh', '-c', 'umount /sys/kernel/tracing && exec "$@"', 'sh', ...SETPRIV, ...argv]
          : [...SETPRIV, ...argv];
        const result = spawnSync(command[0], command.slice(1), {
          cwd: nobody.dir,
          encoding: 'utf8',
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: nobody.dir },
        });
        assert.equal(result.status, 0, result.stderr);
        return result.stdout;
      };
      const cli = JSON.parse(run(cliProbe)) as { tracepointsError?: string; tracepoints: unknown[] };
      return [run(setupProbe), cli.tracepointsError ?? (cli.tracepoints.length > 0 ? 'ok' : 'no tracepoints and no error')];
    }

    it('as root: readable (the CLI lists tracepoints)', () => {
      const { probeTracefs, tracefsProblem } = script<TracefsScript>('scripts/tracefs.mjs');
      assert.equal(probeTracefs().state, 'ok');
      assert.equal(tracefsProblem(), undefined);
    });

    it('as uid 65534 on this machine\'s tracefs: the same sentence, "mounted but may not read" when it is closed to that user', () => {
      const [setup, cli] = bothAsNobody(false);
      assert.equal(setup, cli);
      const readable =
        spawnSync(SETPRIV[0], [...SETPRIV.slice(1), 'test', '-r', '/sys/kernel/tracing/events', '-a', '-x', '/sys/kernel/tracing/events']).status === 0;
      if (readable) assert.equal(setup, 'ok');
      else assert.match(setup, /^tracefs is mounted at \/sys\/kernel\/tracing but uid 65534 \(nobody\) may not read it \(mode \d+ /);
    });

    it('as uid 65534 with tracefs unmounted: the same sentence, "not mounted"', () => {
      const [setup, cli] = bothAsNobody(true);
      assert.equal(setup, cli);
      assert.match(setup, /^tracefs is not mounted, so tracepoints cannot be used \(as root run: mount -t tracefs nodev \/sys\/kernel\/tracing\)$/);
    });
  });
});
