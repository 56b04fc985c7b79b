/**
 * Progress of long work on stderr: one line rewritten in place on a terminal, at most ten times a
 * second; elsewhere (a log, CI) a line now and then, so the output stays readable.
 */
export function progressLine(stream: NodeJS.WriteStream = process.stderr) {
  const tty = stream.isTTY === true;
  // Off a terminal the first line waits five seconds: short work prints nothing.
  let last = tty ? 0 : Date.now();
  let shown = false;
  return {
    show(text: string): void {
      const now = Date.now();
      if (now - last < (tty ? 100 : 5_000)) return;
      last = now;
      shown = true;
      stream.write(tty ? `\r\x1b[2K${text}` : `${text}\n`);
    },
    done(): void {
      if (tty && shown) stream.write('\r\x1b[2K');
    },
  };
}
