// Progress goes to stderr so stdout carries only results. On a terminal one line is redrawn in place
// and erased at the end; anywhere else (CI logs, pipes) each step is a plain line. A download of many
// files or bytes shows a bar instead, on a terminal only.
import { oneLine } from './terminal-text.js';

const FRAMES = ['|', '/', '-', '\\'];
const CLEAR_LINE = '\r\x1b[2K';

/** A download at least this big (skill bytes, or files) gets a bar. */
export const BAR_MIN_BYTES = 1_048_576;
export const BAR_MIN_FILES = 200;

export interface Progress {
  /** The next of the counted steps. */
  step(label: string): void;
  /** What is happening between steps (a terminal shows it; logs do not). */
  status(label: string): void;
  /** Prints a line above the progress line (warnings) without tearing it. */
  note(line: string): void;
  done(): void;
}

export function createProgress(total: number, stream: NodeJS.WriteStream = process.stderr): Progress {
  let index = 0;
  let label = '';
  let frame = 0;
  const tty = stream.isTTY === true;
  let timer: NodeJS.Timeout | undefined;

  function onInterrupt(): void {
    stream.write(CLEAR_LINE);
    process.exit(130);
  }

  function render(): void {
    const counter = index > 0 ? ` [${index}/${total}]` : '';
    const text = `${FRAMES[frame % FRAMES.length]}${counter} ${oneLine(label)}`;
    // Never let the line wrap: a wrapped line cannot be erased with one \r.
    const width = Math.max(10, (stream.columns ?? 80) - 1);
    stream.write(`${CLEAR_LINE}${text.slice(0, width)}`);
  }

  function show(next: string): void {
    label = next;
    render();
    if (!timer) {
      // Ctrl-C mid-install: erase the progress line so the shell prompt starts on a clean line.
      process.once('SIGINT', onInterrupt);
    }
    timer ??= setInterval(() => {
      frame += 1;
      render();
    }, 80).unref();
  }

  return {
    step(next) {
      index += 1;
      if (!tty) {
        stream.write(`[${index}/${total}] ${oneLine(next)}\n`);
        return;
      }
      show(next);
    },
    status(next) {
      if (tty) show(next);
    },
    note(line) {
      // Notes quote the registry (deprecation and yank reasons, findings): one safe line each.
      if (tty && timer) {
        stream.write(`${CLEAR_LINE}${oneLine(line)}\n`);
        render();
      } else {
        stream.write(`${oneLine(line)}\n`);
      }
    },
    done() {
      process.off('SIGINT', onInterrupt);
      if (timer) {
        clearInterval(timer);
        stream.write(CLEAR_LINE);
      }
      timer = undefined;
    },
  };
}

/** A counter for several packages; one package needs none. */
export function progressFor(count: number): Progress {
  return count > 1 ? createProgress(count) : silentProgress();
}

/** A Progress that says nothing except notes (one package: no counter needed). */
export function silentProgress(stream: NodeJS.WriteStream = process.stderr): Progress {
  return {
    step() {},
    status() {},
    note(line) {
      stream.write(`${oneLine(line)}\n`);
    },
    done() {},
  };
}

export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const units = ['kB', 'MB', 'GB'];
  let value = bytes / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

export interface DownloadBar {
  /** Skill bytes downloaded so far (all packages), and what is being downloaded. */
  update(done: number, label: string): void;
  /** Prints a line above the bar. */
  note(line: string): void;
  /** Erases the bar. */
  stop(): void;
}

/**
 * A bar for a download of at least BAR_MIN_BYTES or BAR_MIN_FILES, on a terminal; undefined otherwise
 * (small downloads finish before a bar would say anything, and logs need no bar).
 */
export async function createDownloadBar(
  totalBytes: number,
  totalFiles: number,
  stream: NodeJS.WriteStream = process.stderr,
): Promise<DownloadBar | undefined> {
  if (stream.isTTY !== true || (totalBytes < BAR_MIN_BYTES && totalFiles < BAR_MIN_FILES)) return undefined;
  const { MultiBar } = await import('cli-progress');
  const bars = new MultiBar({
    stream,
    format: 'downloading {bar} {percentage}% | {done} of {size} | {label}',
    barCompleteChar: '█',
    barIncompleteChar: '░',
    barsize: 24,
    clearOnComplete: true,
    hideCursor: false,
    linewrap: false,
    fps: 12,
  });
  const size = formatBytes(totalBytes);
  const bar = bars.create(Math.max(1, totalBytes), 0, { done: formatBytes(0), size, label: '' });
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    process.off('SIGINT', onInterrupt);
    bars.stop();
  };
  function onInterrupt(): void {
    stop();
    process.exit(130);
  }
  process.once('SIGINT', onInterrupt);
  return {
    update(done, label) {
      const value = Math.min(done, totalBytes);
      bar.update(value, { done: formatBytes(value), size, label });
    },
    note(line) {
      bars.log(`${oneLine(line)}\n`);
    },
    stop,
  };
}
