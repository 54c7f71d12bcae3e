import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { VersionListResponseSchema } from '@pkgreg/contracts';
import { pseudoRandomBytes } from '@pkgreg/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI_ENTRY, tempDir } from './helpers/cli.js';
import { startFaultProxy } from './helpers/fault-proxy.js';
import { useSeededRegistry } from './helpers/seeded-registry.js';

// Install progress on a real terminal (a tmux pane): the spinner line is redrawn in place and erased,
// so the final screen holds the results and nothing else.

const run = promisify(execFile);
const SOCKET = `pkgreg-cli-test-${process.pid}`;
const ESC = '\u001b';
const NAMES = ['alpha-skill', 'beta-skill', 'gamma-skill', 'delta-skill'];
// Bytes that do not compress: a download of about 2 MB, past the bar's 1 MB threshold.
const BIG_ASSET = pseudoRandomBytes(2_000_000);

const { registry } = useSeededRegistry([
  ...NAMES.map((name) => ({ owner: 'acme', repo: 'skills', path: name, name, description: `The ${name}` })),
  {
    owner: 'acme',
    repo: 'skills',
    path: 'big-skill',
    name: 'big-skill',
    description: 'A skill with a large asset',
    extraFiles: { 'assets/data.bin': { content: BIG_ASSET } },
  },
]);

function tmux(args: string[]) {
  return run('tmux', ['-L', SOCKET, ...args]);
}

afterAll(async () => {
  await tmux(['kill-server']).catch(() => {});
});

describe('install progress on a TTY', () => {
  it('leaves a clean screen: results only, no spinner line, no stray escape sequences', async () => {
    const cwd = await tempDir('tty');
    const raw = join(cwd, 'raw.log');
    const names = NAMES.map((name) => `@acme/${name}`).join(' ');
    await writeFile(
      join(cwd, 'run.sh'),
      `env -i PATH="$PATH" HOME=${cwd} ${process.execPath} ${CLI_ENTRY} --registry ${registry.url} install ${names} --agent generic\necho "EXIT=$?"\n`,
    );
    await tmux(['new-session', '-d', '-x', '100', '-y', '30', '-s', 'cli', '-c', cwd, 'sh']);
    await tmux(['send-keys', '-t', 'cli', 'clear', 'Enter']);
    await sleep(300);
    await tmux(['pipe-pane', '-t', 'cli', '-o', `cat >> ${raw}`]);
    await tmux(['send-keys', '-t', 'cli', 'sh run.sh', 'Enter']);
    let screen = '';
    for (let i = 0; i < 900 && !/EXIT=\d+/.test(screen); i++) {
      await sleep(100);
      screen = (await tmux(['capture-pane', '-p', '-t', 'cli'])).stdout;
    }
    const lines = screen.split('\n').map((line) => line.trimEnd());
    const start = lines.findIndex((line) => line.endsWith('sh run.sh'));
    expect(start).toBeGreaterThanOrEqual(0);
    // Right below the command: the results, then the exit status; no leftover progress line between.
    const below = lines.slice(start + 1, start + 2 + NAMES.length);
    expect(below.map((line) => line.replace(/@[^@\s]+ ->/, ' ->'))).toEqual([
      ...NAMES.map((name) => `installed @acme/${name} -> .agents/skills/${name}`),
      'EXIT=0',
    ]);
    expect(screen).not.toMatch(/\[\d\/\d\]|installing/);
    expect(screen.includes(ESC)).toBe(false);
    expect(screen).not.toMatch(/\^\[|\[2K/);

    // What reached the terminal: the progress was drawn, and only with carriage return + erase line.
    const stream = await readFile(raw, 'latin1');
    expect(stream).toMatch(/\[1\/4\] installing @acme\/alpha-skill/);
    expect(stream).toContain('\r\x1b[2K');
    const escapes = new Set(stream.match(new RegExp(`${ESC}[^a-zA-Z]*[a-zA-Z]`, 'g')) ?? []);
    expect([...escapes]).toEqual(['\x1b[2K']);
  }, 180_000);

  it('Ctrl-C while a request hangs: the progress line is erased and the exit code is 130', async () => {
    const proxy = await startFaultProxy(registry.url, (req) =>
      req.url?.includes('gamma-skill') ? 'hang' : 'forward',
    );
    try {
      const cwd = await tempDir('tty-int');
      const names = NAMES.map((name) => `@acme/${name}`).join(' ');
      await writeFile(
        join(cwd, 'run.sh'),
        // exec: the CLI is the foreground process itself, so Ctrl-C reaches it, not a wrapper shell.
        `exec env -i PATH="$PATH" HOME=${cwd} ${process.execPath} ${CLI_ENTRY} --registry ${proxy.url} install ${names} --agent generic\n`,
      );
      await tmux(['new-session', '-d', '-x', '100', '-y', '30', '-s', 'int', '-c', cwd, 'sh']);
      await tmux(['send-keys', '-t', 'int', 'clear; sh run.sh; echo "EXIT=$?"', 'Enter']);
      let screen = '';
      // Resolution comes first: the request for gamma's detail hangs, and the line says so.
      for (let i = 0; i < 900 && !screen.includes('resolving @acme/gamma-skill'); i++) {
        await sleep(100);
        screen = (await tmux(['capture-pane', '-p', '-t', 'int'])).stdout;
      }
      expect(screen).toContain('resolving @acme/gamma-skill');
      await tmux(['send-keys', '-t', 'int', 'C-c']);
      for (let i = 0; i < 300 && !/EXIT=\d+/.test(screen); i++) {
        await sleep(100);
        screen = (await tmux(['capture-pane', '-p', '-t', 'int'])).stdout;
      }
      expect(screen).toContain('EXIT=130');
      expect(screen).not.toMatch(/\[\d\/\d\]|installing|resolving/);
    } finally {
      await proxy.close();
    }
  }, 180_000);

  it('a big download shows a bar on stderr while it runs, and leaves only the result', async () => {
    const versions = VersionListResponseSchema.parse(
      await (await fetch(`${registry.url}/api/packages/@acme/big-skill/versions`)).json(),
    );
    const version = versions.data[0]?.version as string;
    const archive = Buffer.from(
      await (
        await fetch(`${registry.url}/api/packages/@acme/big-skill/versions/${version}/archive.tgz`)
      ).arrayBuffer(),
    );
    // The registry answers from the same machine in milliseconds; served slowly, the bar has time to draw.
    const proxy = await startFaultProxy(registry.url, (req) =>
      req.url?.endsWith('/archive.tgz')
        ? { status: 200, headers: { 'content-type': 'application/gzip' }, body: archive, pieceDelayMs: 60 }
        : 'forward',
    );
    try {
      const cwd = await tempDir('tty-bar');
      const raw = join(cwd, 'raw.log');
      await writeFile(
        join(cwd, 'run.sh'),
        `env -i PATH="$PATH" HOME=${cwd} ${process.execPath} ${CLI_ENTRY} --registry ${proxy.url} install @acme/big-skill --agent generic\necho "EXIT=$?"\n`,
      );
      await tmux(['new-session', '-d', '-x', '100', '-y', '30', '-s', 'bar', '-c', cwd, 'sh']);
      await tmux(['send-keys', '-t', 'bar', 'clear', 'Enter']);
      await sleep(300);
      await tmux(['pipe-pane', '-t', 'bar', '-o', `cat >> ${raw}`]);
      await tmux(['send-keys', '-t', 'bar', 'sh run.sh', 'Enter']);
      let screen = '';
      let sawBar = false;
      for (let i = 0; i < 900 && !/EXIT=\d+/.test(screen); i++) {
        await sleep(100);
        screen = (await tmux(['capture-pane', '-p', '-t', 'bar'])).stdout;
        if (/downloading [█░]+ \d+% \| [\d.]+ [kM]?B of 2\.0 MB \| @acme\/big-skill@/.test(screen))
          sawBar = true;
      }
      // The screen in the message: a run that ended before any bar (an error) says why.
      expect(sawBar, screen).toBe(true);
      const lines = screen.split('\n').map((line) => line.trimEnd());
      const start = lines.findIndex((line) => line.endsWith('sh run.sh'));
      expect(lines.slice(start + 1, start + 3)).toEqual([
        `installed @acme/big-skill@${version} -> .agents/skills/big-skill`,
        'EXIT=0',
      ]);
      expect(screen).not.toContain('downloading');
      expect(await readFile(join(cwd, '.agents/skills/big-skill/assets/data.bin'))).toEqual(BIG_ASSET);
    } finally {
      await proxy.close();
    }
  }, 180_000);
});

describe('registry text on a TTY', () => {
  it('registry text cannot drive the terminal: no title, no clipboard, no cleared screen (issue 26)', async () => {
    const hostile = `Plain words${ESC}]2;PWNED-TITLE\x07${ESC}]52;c;cHduZWQ=\x07${ESC}[2J${ESC}[H then more`;
    const proxy = await startFaultProxy(registry.url, (req) =>
      req.url === '/api/packages/@acme/alpha-skill'
        ? (body: string) => JSON.stringify({ ...JSON.parse(body), description: hostile })
        : 'forward',
    );
    try {
      const cwd = await tempDir('tty-text');
      await writeFile(
        join(cwd, 'run.sh'),
        `echo BEFORE-THE-RUN\nenv -i PATH="$PATH" HOME=${cwd} ${process.execPath} ${CLI_ENTRY} --registry ${proxy.url} info @acme/alpha-skill\necho "EXIT=$?"\n`,
      );
      await tmux(['new-session', '-d', '-x', '100', '-y', '40', '-s', 'text', '-c', cwd, 'sh']);
      // Let applications set tmux's clipboard (OSC 52), so a clipboard write would show as a buffer.
      await tmux(['set-option', '-s', 'set-clipboard', 'on']);
      const title = (await tmux(['display-message', '-p', '-t', 'text', '#{pane_title}'])).stdout;
      await tmux(['send-keys', '-t', 'text', 'clear; sh run.sh', 'Enter']);
      let screen = '';
      for (let i = 0; i < 900 && !/EXIT=\d+/.test(screen); i++) {
        await sleep(100);
        screen = (await tmux(['capture-pane', '-p', '-t', 'text'])).stdout;
      }
      expect(screen).toContain('EXIT=0');
      expect(screen).toContain('BEFORE-THE-RUN');
      expect(screen).toContain('Plain words then more');
      expect((await tmux(['display-message', '-p', '-t', 'text', '#{pane_title}'])).stdout).toBe(title);
      expect((await tmux(['list-buffers'])).stdout).toBe('');
    } finally {
      await proxy.close();
    }
  }, 180_000);
});
