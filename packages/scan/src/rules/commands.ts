import { collectVariables, normalizeCode } from '../normalize.js';
import type { Segment } from '../segments.js';
import type { RawFinding, RuleId, Severity } from '../types.js';

// The command rules: remote code run or evaluated, executables downloaded, encoded payloads decoded
// and run, secrets sent away, and (for scripts) network and process use. They read normalized logical
// lines (normalize.ts), so split strings, other shells, variables and continuations look alike.

const src = (re: RegExp) => re.source;

/** Something that fetches from the network. */
const DOWNLOAD = src(
  /(?:\b(?:curl|wget2?|aria2c|fetch|iwr|irm|invoke-webrequest|invoke-restmethod|start-bitstransfer|lwp-download|lwp-request)\b|\bcertutil(?:\.exe)?\s+(?:-\w+\s+)*-urlcache|\bbitsadmin(?:\.exe)?\s+\/transfer|net\.webclient|\.download(?:string|data|file)\b|\burlopen\s*\(|\burlretrieve\s*\(|\brequests\.(?:get|post)\s*\(|\bhttpx\.(?:get|post)\s*\(|\bfetch\s*\()/,
);

/** A shell or shell-like evaluator reading its program from stdin. */
const SHELL = src(
  /(?:(?:sudo|doas)\s+(?:-\S+\s+)*)?(?:env\s+(?:-\S+\s+)*(?:\w+=\S*\s+)*)?(?:\S*\/)?(?:sh|bash|zsh|ksh|mksh|dash|ash|fish|csh|tcsh|yash|pwsh(?:\.exe)?|powershell(?:\.exe)?|cmd(?:\.exe)?|iex|invoke-expression|source)\b(?!\s+-c\b)(?![.\w-])/,
);

/** An interpreter reading its program from stdin (no script or -c/-m/-e argument). */
const INTERPRETER = src(
  /(?:(?:sudo|doas)\s+(?:-\S+\s+)*)?(?:\S*\/)?(?:python[0-9.]*|py|node|nodejs|perl|ruby|php|deno\s+run|bun|osascript|lua|tclsh)(?:\s*$|\s*[;&|)]|\s+-(?:\s|$))/,
);

const PIPE_TO_SHELL = new RegExp(`${DOWNLOAD}.*?\\|\\s*(?:${SHELL}|${INTERPRETER})`);

const EVALUATED: RegExp[] = [
  // eval "$(curl …)", eval `wget …`, sh -c "$(curl …)", bash <(curl …), source <(curl …), . <(…)
  new RegExp(`\\beval\\s*(?:\\$\\(|\\()\\s*.*?${DOWNLOAD}`),
  new RegExp(`\\b(?:sh|bash|zsh|ksh|dash|fish|pwsh|powershell)\\s+(?:-\\S+\\s+)*-c\\s+\\$\\(.*?${DOWNLOAD}`),
  new RegExp(
    `(?:\\b(?:sh|bash|zsh|ksh|dash|fish|source|python[0-9.]*|node|perl|ruby)|(?:^|[;&|]\\s*)\\.)\\s+(?:-\\S+\\s+)*<\\(\\s*.*?${DOWNLOAD}`,
  ),
  // PowerShell: iex (iwr …), Invoke-Expression (New-Object Net.WebClient).DownloadString(…), scriptblocks
  new RegExp(`\\b(?:iex|invoke-expression)\\b.*?${DOWNLOAD}`),
  new RegExp(`\\[scriptblock\\]::create\\(.*?${DOWNLOAD}`),
  // python -c / node -e / code: exec(urlopen(u).read()), eval(await (await fetch(u)).text())
  new RegExp(
    `\\b(?:exec|eval|new\\s+function|function|runinthiscontext|runinnewcontext|compile)\\s*\\(.*?${DOWNLOAD}`,
  ),
  new RegExp(`${DOWNLOAD}.*?\\.then\\(\\s*(?:eval|function|new\\s+function)\\b`),
];

/** Decoders whose output, piped or substituted into a shell, runs hidden code. */
const DECODER = src(
  /(?:\bbase64\s+(?:-\w+\s+)*(?:-d|--decode|-D|-di)\b|\bbase32\s+(?:-d|--decode)\b|\bxxd\s+(?:-\w+\s+)*-r|\bopenssl\s+(?:enc\s+)?(?:-\w+\s+)*-?base64\s+(?:-\w+\s+)*-d\b|\bopenssl\s+enc\s+-d\b|\bgunzip\b|\bgzip\s+-d|\bzcat\b|\buudecode\b|\brev\b|\btr\s+a-za-z\s+n-za-mn-za-m)/,
);

const DECODED_AND_RUN: RegExp[] = [
  new RegExp(`${DECODER}.*?\\|\\s*(?:${SHELL}|${INTERPRETER})`),
  new RegExp(`\\beval\\s*(?:\\$\\(|\\()\\s*.*?${DECODER}`),
  new RegExp(`\\b(?:sh|bash|zsh|ksh|dash|fish)\\s+(?:-\\S+\\s+)*-c\\s+\\$\\(.*?${DECODER}`),
  new RegExp(`(?:\\b(?:sh|bash|zsh|ksh|dash|source)|(?:^|[;&|]\\s*)\\.)\\s+<\\(\\s*.*?${DECODER}`),
  // python: exec(base64.b64decode(…)), exec(zlib.decompress(…)), exec(marshal.loads(…))
  /\b(?:exec|eval|compile)\s*\(.*?(?:b64decode|b32decode|b85decode|a85decode|decodebytes|bytes\.fromhex|unhexlify|codecs\.decode|zlib\.decompress|lzma\.decompress|bz2\.decompress|marshal\.loads)/,
  // JS: eval(atob(…)), new Function(Buffer.from(…, 'base64')), eval(String.fromCharCode(…))
  /\b(?:eval|new\s+function|function|runinthiscontext|runinnewcontext)\s*\(.*?(?:\batob\s*\(|buffer\.from\s*\(.*?(?:base64|hex)|fromcharcode\s*\()/,
  // PowerShell: -EncodedCommand <base64>, iex of FromBase64String
  /\b(?:pwsh|powershell)(?:\.exe)?\b.*?\s-(?:e|ec|en|enc|enco|encod|encode|encoded|encodedc|encodedcommand)\s+[a-z0-9+/]{16,}={0,2}/,
  /(?:\b(?:iex|invoke-expression)\b|\[scriptblock\]::create).*?frombase64string|frombase64string.*?\|\s*(?:iex|invoke-expression)\b/,
];

/** Files written by a download: curl -o NAME, wget -O NAME, -OutFile NAME, > NAME. */
const DOWNLOAD_TARGET =
  /(?:\s(?:-outfile|--output|--output-document|-[a-z]*o)\s*=?\s*|\s>\s*)([^\s;&|)]+)|\b(?:urlretrieve|downloadfile)\s*\([^,]*,\s*([^\s,)]+)/;
const EXECUTABLE_URL =
  /https?:\/\/\S+\.(?:exe|msi|dmg|pkg|deb|rpm|appimage|apk|bin|run|scr|dll|so|dylib|elf|jar|com)\b(?![./-]\w)/;

/** Secrets at rest: credential files, whole-environment dumps, shell histories. */
const SENSITIVE_SOURCE =
  /(?:~|\$home|\$\(\s*home\s*\)|homedir\(\)|expanduser\([^)]*\)|os\.environ\[?.?home|\buserprofile)?[/\\]?\.(?:ssh|aws|gnupg|kube|docker|config\/gh|config\/gcloud|azure)\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\.(?:netrc|npmrc|pypirc|git-credentials|bash_history|zsh_history)\b|\/etc\/(?:shadow|passwd|sudoers)\b|\blogin\s+data\b|\bkeychain\b|\bsecurity\s+find-(?:generic|internet)-password|(?:^|[\s;&|(])(?:env|printenv|set)\s*(?:\||>)|json\.stringify\(\s*process\.env\s*\)|\bprocess\.env\s*(?:[,)]|$)|\b(?:dict|json\.dumps)\(\s*os\.environ\s*\)|\bos\.environ\.copy\(\)|\bos\.environ\s*(?:[,)]|$)|(?:get-childitem|gci|dir|ls)\s+env:|\$env:\*/;
/** Sending data out: uploads, posts, raw sockets. */
const SENDS =
  /\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod)\b.*?(?:\s-d\b|\s--data(?:-\w+)?\b|\s-f\b|\s--form\b|\s-t\b|\s--upload-file\b|\s-x\s*(?:post|put)\b|--post-(?:data|file)|\s-body\b|\s-infile\b|\s-method\s+(?:post|put)\b)|\|\s*(?:nc|ncat|netcat|socat|telnet)\b|\/dev\/tcp\/|\b(?:requests|httpx|axios)\.(?:post|put)\s*\(|\bmethod\s*:\s*(?:post|put)\b|\burlopen\s*\(.*?data\s*=|\.send\s*\(|\bsmtplib\b|\bsendmail\b/;

const NETWORK =
  /\b(?:curl|wget2?|aria2c|iwr|irm|invoke-webrequest|invoke-restmethod|nc|ncat|netcat|socat|telnet|ftp|sftp|scp|rsync)\s|\/dev\/tcp\/|\bfetch\s*\(|\baxios\b|\b(?:http|https|http2|net|tls|dgram)\.(?:request|get|connect|createconnection|createserver)\s*\(|\bnew\s+websocket\s*\(|\bxmlhttprequest\b|\brequests\.\w+\s*\(|\burllib\b|\burlopen\s*\(|\bhttpx\b|\baiohttp\b|\bsocket\.(?:socket|create_connection)\s*\(|\bnet\.webclient\b|\bsystem\.net\.|\bopen-uri\b|\bnet::http\b|\blwp::|\bfile_get_contents\s*\(\s*https?:/i;

const SPAWN =
  /\bchild_process\b|\b(?:execsync|execfilesync|spawnsync)\s*\(|\b(?:cp|childprocess|child_process|proc)\.(?:exec|execfile|spawn|fork)\w*\s*\(|\bsubprocess\.\w+\s*\(|\bos\.(?:system|popen|exec[lv]p?e?|spawn[lv]p?e?)\s*\(|\bpty\.spawn\s*\(|\bcommands\.getoutput\s*\(|\bstart-process\b|\binvoke-item\b|\bruntime\.getruntime\(\)\.exec|\bshell_exec\s*\(|\bproc_open\s*\(|\bpopen\s*\(|\bsystem\s*\(\s*[^)]|\bbun\.spawn\s*\(|\bdeno\.command\s*\(|%x\(|\bopen3\./i;

/** Cheap pre-check: a segment without any of these cannot match the command patterns. */
const INTERESTING =
  /curl|wget|aria2|fetch|iwr|irm|invoke|bits|certutil|webclient|download|urlopen|urlretrieve|requests|httpx|base64|base32|xxd|openssl|gunzip|gzip|zcat|uudecode|\brev\b|\btr\b|eval|exec|iex|scriptblock|function|compile|runin|\benv\b|printenv|\bset\b|environ|ssh|aws|id_|netrc|npmrc|pypirc|credentials|history|shadow|passwd|keychain|security|\.then|chmod|\\x|\$'|join|\|/i;

export interface CommandContext {
  file: string;
  /** Scripts are also checked for network and process use. */
  script: boolean;
  /** Shell scripts run processes on every line: process-spawn says nothing there. */
  shell: boolean;
}

function finding(
  rule: RuleId,
  severity: Severity,
  file: string,
  segment: Segment,
  message: string,
): RawFinding {
  const column = Math.max(0, segment.text.search(ANCHOR));
  return { rule, severity, file, line: segment.line, text: segment.text, column, message };
}

/** Where an excerpt of a long line should start: the first command word the rules care about. */
const ANCHOR =
  /\b(?:curl|wget|iwr|irm|invoke-\w+|iex|eval|exec|base64|chmod|start-process|fetch|urlopen|requests|printf|echo|env|powershell|pwsh|source|bash|sh)\b/i;

/** Network names assigned from a download, and names assigned from a decoder (for exec(name)). */
const ASSIGNED_FROM = /^\s*(?:const\s+|let\s+|var\s+)?\$?([a-z_]\w*)\s*=\s*(?:await\s+)?(.*)$/;
const DECODE_CALL =
  /b64decode|b32decode|bytes\.fromhex|unhexlify|codecs\.decode|zlib\.decompress|marshal\.loads|\batob\s*\(|buffer\.from\s*\(.*?(?:base64|hex)|frombase64string/;
const EXEC_OF_NAME =
  /\b(?:exec|eval|new\s+function|function|runinthiscontext|runinnewcontext|compile|iex|invoke-expression)(?:\s*\(\s*|\s+)\$?([a-z_]\w*)\b/g;

/** Runs the command rules over a file's code segments. */
export function commandFindings(segments: Segment[], ctx: CommandContext): RawFinding[] {
  const out: RawFinding[] = [];
  const vars = collectVariables(segments);
  const fromNetwork = new Set<string>();
  const fromDecoder = new Set<string>();
  const downloaded = new Map<string, Segment>();
  let network: Segment | null = null;
  let spawn: Segment | null = null;
  let sensitive: Segment | null = null;
  let sends: Segment | null = null;
  const downloadRe = new RegExp(DOWNLOAD);

  for (const segment of segments) {
    const raw = segment.text;
    const interesting = INTERESTING.test(raw) || (vars.size > 0 && raw.includes('$'));
    if (ctx.script) {
      if (!network && NETWORK.test(raw)) network = segment;
      if (!ctx.shell && !spawn && SPAWN.test(raw)) spawn = segment;
    }
    const tracked = fromNetwork.size + fromDecoder.size > 0;
    if (!interesting && !tracked) continue;
    const line = normalizeCode(raw, vars);

    const assigned = ASSIGNED_FROM.exec(line);
    if (assigned) {
      const [, name, value] = assigned as unknown as [string, string, string];
      // Names flow: body = await res.text() after res = await fetch(u).
      const uses = (names: Set<string>) => [...names].some((n) => new RegExp(`\\b${n}\\b`).test(value));
      if (downloadRe.test(value) || uses(fromNetwork)) fromNetwork.add(name);
      if (DECODE_CALL.test(value) || uses(fromDecoder)) fromDecoder.add(name);
    }

    let remote = PIPE_TO_SHELL.test(line) || EVALUATED.some((re) => re.test(line));
    let encoded = DECODED_AND_RUN.some((re) => re.test(line));
    for (const match of line.matchAll(EXEC_OF_NAME)) {
      const name = match[1] as string;
      if (fromNetwork.has(name)) remote = true;
      if (fromDecoder.has(name)) encoded = true;
    }
    // A download run once escapes are decoded (printf '\x63\x75rl …' | sh) was hidden by encoding.
    if (
      remote &&
      /\\x[0-9a-f]{2}|\\[0-3][0-7]{2}|\\u[0-9a-f]{4}/i.test(raw) &&
      !PIPE_TO_SHELL.test(raw.toLowerCase())
    ) {
      encoded = true;
    }
    if (encoded) {
      out.push(
        finding(
          'encoded-execution',
          'high',
          ctx.file,
          segment,
          'decodes an encoded payload and runs it (base64, hex, compressed or encoded command)',
        ),
      );
    } else if (remote) {
      out.push(
        finding(
          'remote-code-execution',
          'high',
          ctx.file,
          segment,
          'downloads code and runs it without saving or checking it (piped to a shell or evaluated)',
        ),
      );
    }

    if (downloadRe.test(line)) {
      const target = DOWNLOAD_TARGET.exec(line);
      const name = target?.[1] ?? target?.[2];
      if (name && !/^(?:-|\/dev\/null|nul)$/.test(name)) downloaded.set(baseName(name), segment);
      const url = /https?:\/\/[^\s;&|)]+/.exec(line)?.[0];
      if (!target && url && /^\s*wget\b/.test(line)) {
        downloaded.set(baseName(url.replace(/[?#].*$/, '')), segment);
      }
      if (EXECUTABLE_URL.test(line) && !remote && !encoded) {
        out.push(
          finding(
            'executable-download',
            'medium',
            ctx.file,
            segment,
            'downloads an executable or package file',
          ),
        );
      }
    }
    const runs = runsDownloaded(line, downloaded);
    if (runs) {
      out.push(
        finding(
          'executable-download',
          'high',
          ctx.file,
          segment,
          `makes the downloaded file ${runs} executable or runs it`,
        ),
      );
    }

    if (SENSITIVE_SOURCE.test(line)) {
      sensitive ??= segment;
      if (SENDS.test(line)) {
        out.push(
          finding(
            'secret-exfiltration',
            'high',
            ctx.file,
            segment,
            'sends credentials, keys or the environment over the network',
          ),
        );
        sensitive = null;
        sends = null;
        continue;
      }
    }
    if (SENDS.test(line)) sends ??= segment;
  }
  // Read in one place, sent in another: the same file does both.
  if (sensitive && sends && !out.some((f) => f.rule === 'secret-exfiltration')) {
    out.push(
      finding(
        'secret-exfiltration',
        'high',
        ctx.file,
        sensitive,
        'reads credentials, keys or the whole environment in a file that sends data over the network',
      ),
    );
  }
  if (network) {
    out.push(finding('network-access', 'low', ctx.file, network, 'the script reaches the network'));
  }
  if (spawn) {
    out.push(finding('process-spawn', 'low', ctx.file, spawn, 'the script starts other processes'));
  }
  return out;
}

function baseName(path: string): string {
  return path.replace(/\/+$/, '').split(/[/\\]/).pop() ?? path;
}

const MAKES_EXECUTABLE =
  /\bchmod\s+(?:-\w+\s+)*(?:[ugoa]*\+[rwx]*x[rwx]*|[0-7]?[0-7]*[1357][0-7]{0,2})\s+(.+)/;
/** What may stand before a program's path when it is run: sudo, an interpreter, an installer. */
const RUN_PREFIX =
  /^(?:(?:sudo|doas)\s+(?:-\S+\s+)*)?(?:(?:sh|bash|zsh|fish|ksh|dash|pwsh|powershell|python[0-9.]*|node|perl|ruby|start-process(?:\s+-filepath)?|msiexec(?:\s+\/\w+)*|dpkg\s+-i|rpm\s+-\w+|installer\s+-pkg|hdiutil\s+attach|&)\s+(?:-\S+\s+)*)?/;

/** The name of a downloaded file this line makes executable or runs, if any. */
function runsDownloaded(line: string, downloaded: Map<string, Segment>): string | null {
  if (downloaded.size === 0) return null;
  const chmod = MAKES_EXECUTABLE.exec(line);
  if (chmod) {
    for (const word of (chmod[1] as string).split(/\s+/)) {
      const name = baseName(word.replace(/[;&|)]+$/, ''));
      if (downloaded.has(name)) return name;
    }
  }
  for (const part of line.split(/&&|\|\||[;|(]/)) {
    const program = part.trim().replace(RUN_PREFIX, '').split(' ')[0] ?? '';
    const name = baseName(program);
    if (name && downloaded.has(name)) return name;
  }
  return null;
}

const BASE64_TOKEN = /(?<![A-Za-z0-9+/_-])(?:[A-Za-z0-9+/]{24,}={0,2}|[A-Za-z0-9_-]{40,}={0,2})/g;
const HEX_TOKEN = /\b(?:[0-9a-fA-F]{2}){200,}\b/;
const DECODE_ANYWHERE =
  /b64decode|b32decode|bytes\.fromhex|unhexlify|codecs\.decode|\batob\s*\(|buffer\.from\s*\(|frombase64string|\bbase64\s+(?:-\w+\s+)*(?:-d|--decode|-D)\b|\bxxd\s+-r/i;
/** Blobs this long in a script that decodes at run time are payloads, not data. */
const LONG_BLOB = 400;

/** True when normalized text downloads and runs code, or sends secrets. */
function dangerousText(line: string): boolean {
  return (
    PIPE_TO_SHELL.test(line) ||
    EVALUATED.some((re) => re.test(line)) ||
    (SENSITIVE_SOURCE.test(line) && SENDS.test(line))
  );
}

function decodeBase64(token: string): string | null {
  const bytes = Buffer.from(token.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (bytes.length < 12) return null;
  // PowerShell's -EncodedCommand is UTF-16LE: every other byte zero.
  let zeros = 0;
  for (let i = 1; i < bytes.length; i += 2) if (bytes[i] === 0) zeros += 1;
  const text = zeros > bytes.length / 4 ? bytes.toString('utf16le') : bytes.toString('latin1');
  let printable = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if ((c >= 0x20 && c < 0x7f) || c === 0x0a || c === 0x0d || c === 0x09) printable += 1;
  }
  return printable / text.length >= 0.9 ? text : null;
}

/**
 * Encoded payloads: a base64 token (standard, URL-safe or UTF-16LE) that decodes to a download run or
 * secrets sent is high; a long blob in a script that decodes at run time is medium.
 */
export function payloadFindings(segments: Segment[], ctx: CommandContext, wholeText: string): RawFinding[] {
  const out: RawFinding[] = [];
  let decodesMemo: boolean | undefined;
  const decodes = () => {
    decodesMemo ??= DECODE_ANYWHERE.test(wholeText);
    return decodesMemo;
  };
  let blob: Segment | null = null;
  for (const segment of segments) {
    if (segment.text.length < 24) continue;
    for (const match of segment.text.matchAll(BASE64_TOKEN)) {
      const token = match[0];
      if (!/[0-9+/]/.test(token) && !/[a-z][A-Z]|[A-Z][a-z]/.test(token)) continue;
      if (ctx.script && !blob && token.length >= LONG_BLOB && decodes()) blob = segment;
      const decoded = decodeBase64(token);
      if (decoded && dangerousText(normalizeCode(decoded, new Map()))) {
        out.push(
          finding(
            'encoded-execution',
            'high',
            ctx.file,
            segment,
            `base64 text that decodes to a command downloading and running code: ${decoded.replace(/\s+/g, ' ').slice(0, 60)}`,
          ),
        );
        break;
      }
    }
    if (ctx.script && !blob && segment.text.length >= LONG_BLOB && HEX_TOKEN.test(segment.text) && decodes())
      blob = segment;
  }
  if (blob && !out.some((f) => f.line === blob.line)) {
    out.push(
      finding(
        'encoded-blob',
        'medium',
        ctx.file,
        blob,
        'a long encoded blob in a script that decodes data at run time',
      ),
    );
  }
  return out;
}
