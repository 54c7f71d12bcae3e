// Progress goes to stderr so stdout carries only results. On a terminal one line is redrawn in place
// and erased at the end; anywhere else (CI logs, pipes) each step is a plain line.
const FRAMES = ['|', '/', '-', '\\'];
const CLEAR_LINE = '\r\x1b[2K';

export interface Progress {
  step(label: string): void;
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
    const text = `${FRAMES[frame % FRAMES.length]} [${index}/${total}] ${label}`;
    // Never let the line wrap: a wrapped line cannot be erased with one \r.
    const width = Math.max(10, (stream.columns ?? 80) - 1);
    stream.write(`${CLEAR_LINE}${text.slice(0, width)}`);
  }

  return {
    step(next) {
      index += 1;
      label = next;
      if (!tty) {
        stream.write(`[${index}/${total}] ${label}\n`);
        return;
      }
      render();
      if (!timer) {
        // Ctrl-C mid-install: erase the progress line so the shell prompt starts on a clean line.
        process.once('SIGINT', onInterrupt);
      }
      timer ??= setInterval(() => {
        frame += 1;
        render();
      }, 80).unref();
    },
    note(line) {
      if (tty && timer) {
        stream.write(`${CLEAR_LINE}${line}\n`);
        render();
      } else {
        stream.write(`${line}\n`);
      }
    },
    done() {
      process.off('SIGINT', onInterrupt);
      if (timer) clearInterval(timer);
      timer = undefined;
      if (tty && index > 0) stream.write(CLEAR_LINE);
    },
  };
}

/** A Progress that says nothing except notes (one package: no counter needed). */
export function silentProgress(stream: NodeJS.WriteStream = process.stderr): Progress {
  return {
    step() {},
    note(line) {
      stream.write(`${line}\n`);
    },
    done() {},
  };
}
