import { VersionDetailSchema } from '@pkgreg/contracts';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { jsonText, oneLine, terminalSafe } from '../src/terminal-text.js';
import { type CliResult, runCli, tempDir } from './helpers/cli.js';
import { type FaultProxy, startFaultProxy } from './helpers/fault-proxy.js';
import { useSeededRegistry } from './helpers/seeded-registry.js';

// Issue 26: strings from the registry reach the terminal with every control removed. A hostile
// registry (a local proxy of the test's own in front of the real one) hides escape sequences in
// descriptions, reasons, findings and error messages; the CLI prints them as plain text, one line
// each, and --json prints them exactly, escaped.

const { registry } = useSeededRegistry([
  {
    owner: 'acme',
    repo: 'text',
    path: 'pdf-tools',
    name: 'pdf-tools',
    description: 'Extract text from PDF files',
  },
  {
    owner: 'acme',
    repo: 'text',
    path: 'pdf-forms',
    name: 'pdf-forms',
    description: 'Fill PDF forms',
  },
]);
let proxy: FaultProxy | undefined;
let home: string;

beforeAll(async () => {
  home = await tempDir('home');
});

afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

const ESC = '\x1b';
/** Each shape of control a terminal acts on, with plain words between them that must survive. */
const SHAPES = [
  `${ESC}[2J${ESC}[1;1H`, // CSI: clear the screen, move home
  `${ESC}]0;PAYLOAD-TITLE\x07`, // OSC 0 window title, BEL
  `${ESC}]52;c;UEFZTE9BRC1DTElQ\x07`, // OSC 52: write the clipboard
  `${ESC}]8;;https://evil.example/PAYLOAD-LINK${ESC}\\`, // OSC 8 hyperlink, ST
  `${ESC}P1$tPAYLOAD-DCS${ESC}\\`, // DCS
  `${ESC}_PAYLOAD-APC${ESC}\\`, // APC
  '\x9b31m', // C1 CSI
  '\x9d2;PAYLOAD-C1\x9c', // C1 OSC ... C1 ST
  '\u202e\u2066', // bidi override, isolate
  '\x7f\x00\x08\x07', // DEL, NUL, backspace, bell
  '\r', // carriage return: overwrite the line
  '\n', // a forged line
  `${ESC}(0${ESC}7${ESC}c`, // charset, save cursor, reset
];
const WORDS = [
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'end',
];
const HOSTILE = WORDS.map((word, i) => `${word}${SHAPES[i] ?? ''}`).join('');
/** At most 120 characters, as the contract's finding excerpt. */
const HOSTILE_SHORT = `ex${ESC}]0;PAYLOAD-TITLE\x07cerpt\u202e${ESC}[31m!`;

// Raw in what a terminal is sent: C0 but tab and newline, DEL, C1, bidi controls.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for.
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

function expectPlain(text: string): void {
  expect(text).not.toMatch(UNSAFE);
  expect(text).not.toContain('PAYLOAD');
}

function cli(args: string[], url: string): Promise<CliResult> {
  return tempDir('text').then((cwd) =>
    runCli(['--registry', url, ...args], { cwd, home, env: { DO_NOT_TRACK: '1' } }),
  );
}

/** The proxy's rewrite of a JSON answer: `edit` changes the parsed body. */
function rewrite(edit: (json: Record<string, unknown>, path: string) => void) {
  return async () =>
    startFaultProxy(registry.url, (req) => (body: string) => {
      const json = JSON.parse(body);
      edit(json, req.url ?? '');
      return JSON.stringify(json);
    });
}

const hostileDetail = rewrite((json, path) => {
  if (!/^\/api\/packages\/@acme\/pdf-tools$/.test(path)) return;
  json.description = HOSTILE;
  json.status = 'deprecated';
  json.deprecationMessage = HOSTILE;
  json.license = HOSTILE;
  json.author = HOSTILE;
  json.warnings = [HOSTILE, HOSTILE];
  json.allowedTools = [HOSTILE];
  json.risk = 'medium';
  json.findings = [
    { rule: HOSTILE, severity: 'medium', file: HOSTILE, line: 3, excerpt: HOSTILE_SHORT, message: HOSTILE },
  ];
});

describe('terminalSafe, oneLine and jsonText', () => {
  it('remove every shape of control and keep the words around them', () => {
    const safe = terminalSafe(HOSTILE);
    expectPlain(safe);
    for (const word of WORDS) expect(safe).toContain(word);
    // Only the one newline that was there survives terminalSafe; oneLine makes it a space.
    expect(safe.split('\n')).toHaveLength(2);
    expect(oneLine(HOSTILE)).not.toContain('\n');
    expect(oneLine(HOSTILE)).toBe('onetwothreefourfivesixseveneightnineteneleven twelve end');
    expect(terminalSafe('tabs\tand\nlines stay')).toBe('tabs\tand\nlines stay');
    expect(terminalSafe(`${ESC}]0;unterminated title to the end`)).toBe('');
  });

  it('jsonText escapes what JSON.stringify leaves raw, and parses back to the same value', () => {
    const value = { text: HOSTILE, list: ['\u2028\u2029', '\x85\x9b'] };
    const text = jsonText(value);
    expectPlain(text.replace(/PAYLOAD/g, ''));
    expect(JSON.parse(text)).toEqual(value);
  });
});

describe('registry text on the terminal (a hostile registry)', () => {
  it('info prints every field as plain text, one line each', async () => {
    proxy = await hostileDetail();
    const result = await cli(['info', '@acme/pdf-tools'], proxy.url);
    expect(result.code).toBe(0);
    expectPlain(result.stdout);
    expectPlain(result.stderr);
    const plain = oneLine(HOSTILE);
    expect(result.stdout.split('\n')[1]).toBe(plain);
    expect(result.stdout).toContain(`License:       ${plain}\n`);
    expect(result.stdout).toMatch(/^Status: +deprecated: one/m);
    expect(result.stdout).toContain('  medium ');
    expect(result.stdout).toContain('         excerpt!\n');
    expect(result.stderr).toBe(`warning: @acme/pdf-tools is deprecated: ${plain}\n`);
    // No line of the output is one the registry forged.
    expect(result.stdout.split('\n')).not.toContain('end');
  });

  it('info --json prints the registry value exactly, with no raw control', async () => {
    proxy = await hostileDetail();
    const result = await cli(['info', '@acme/pdf-tools', '--json'], proxy.url);
    expect(result.code).toBe(0);
    expect(result.stdout).not.toMatch(UNSAFE);
    const json = JSON.parse(result.stdout);
    expect(json.description).toBe(HOSTILE);
    expect(json.findings[0].excerpt).toBe(HOSTILE_SHORT);
  });

  it('search tables stay aligned and plain', async () => {
    proxy = await startFaultProxy(registry.url, () => (body: string) => {
      const json = JSON.parse(body);
      for (const item of json.results ?? []) item.description = HOSTILE;
      return JSON.stringify(json);
    });
    const result = await cli(['search', 'pdf'], proxy.url);
    expect(result.code).toBe(0);
    expectPlain(result.stdout);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines.length).toBe(3);
    for (const line of lines) expect(Array.from(line).length).toBeLessThanOrEqual(80);
    const column = lines[0]?.indexOf('DESCRIPTION');
    for (const line of lines.slice(1)) expect(line.indexOf('one')).toBe(column);
  });

  it('install warnings (deprecation, yank, findings) are plain, one line each', async () => {
    proxy = await startFaultProxy(registry.url, (req) => {
      const path = req.url ?? '';
      if (path.endsWith('/archive.tgz')) return 'forward';
      return (body: string) => {
        const json = JSON.parse(body);
        if (/^\/api\/packages\/@acme\/pdf-tools$/.test(path)) {
          json.status = 'deprecated';
          json.deprecationMessage = HOSTILE;
        }
        if (/\/versions\/[^/]+$/.test(path) && json.files) {
          json.yanked = true;
          json.yankReason = HOSTILE;
          json.risk = 'medium';
          json.findings = [
            { rule: 'r', severity: 'medium', file: HOSTILE, line: 1, excerpt: HOSTILE_SHORT, message: 'm' },
          ];
        }
        return JSON.stringify(json);
      };
    });
    const latest = await fetch(`${registry.url}/api/packages/@acme/pdf-tools/versions/latest`);
    const { version } = VersionDetailSchema.parse(await latest.json());
    const result = await cli(['install', `@acme/pdf-tools@${version}`, '--dir', 'skills'], proxy.url);
    expect(result.code).toBe(0);
    expectPlain(result.stderr);
    const plain = oneLine(HOSTILE);
    expect(result.stderr.split('\n').filter(Boolean)).toEqual([
      `warning: @acme/pdf-tools is deprecated: ${plain}`,
      `warning: @acme/pdf-tools@${version} is yanked by its owner (${plain})`,
      `warning: @acme/pdf-tools@${version} has medium-risk findings:`,
      `  medium r ${plain}:1: excerpt!`,
    ]);
  });

  it("the registry's error message is one plain line on stderr", async () => {
    proxy = await startFaultProxy(registry.url, () => ({
      status: 404,
      body: JSON.stringify({ error: HOSTILE }),
    }));
    for (const args of [
      ['info', '@acme/nothing'],
      ['install', '@acme/nothing'],
    ]) {
      const result = await cli(args, proxy.url);
      expect(result.code).toBe(3);
      expect(result.stderr).toBe(`error: @acme/nothing: ${oneLine(HOSTILE)}\n`);
    }
    const verbose = await cli(['--verbose', 'info', '@acme/nothing'], proxy.url);
    expectPlain(verbose.stderr);
  });
});
