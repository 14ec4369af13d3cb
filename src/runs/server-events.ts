// Reads a `text/event-stream` body (a model server's streamed answer) into its events, in time
// proportional to its length however it is cut into pieces: a line is looked for only in the piece
// that just came, and the start of an unfinished line waits as pieces, joined once it ends. The
// server is hostile in size: a line (or an event) longer than MAX_EVENT_CHARS fails the read.

/** One server-sent event: its `event` field and its data lines joined. */
export interface ServerEvent {
  event: string;
  data: string;
}

/** The most characters one line or one event may hold: far above any chunk of a streamed answer. */
export const MAX_EVENT_CHARS = 4 * 1024 * 1024;

/** What a reader is fed: the body's pieces as they come, then its end. */
export interface ServerEventReader {
  /** Reads one piece; `onEvent` is called for each event it completes, before this returns. */
  push(part: Uint8Array | string): void;
  /** The body ended: the last event, if the server did not end it with a blank line. */
  end(): void;
}

/**
 * A reader of a body's events, handing each to `onEvent` as it completes (synchronously: one
 * callback per event, no promise per piece). Throws `tooLarge()` past `maxBytes` in all, and
 * `eventTooLarge()` when a line or an event passes MAX_EVENT_CHARS.
 */
export function serverEventReader(
  limits: { maxBytes: number; tooLarge: () => Error; eventTooLarge: () => Error },
  onEvent: (event: ServerEvent) => void,
): ServerEventReader {
  const decoder = new TextDecoder();
  let bytes = 0;
  let partial: string[] = []; // the pieces of a line not ended yet
  let partialChars = 0;
  let event = '';
  let data: string[] = [];
  let dataChars = 0;

  /** Reads one whole line; hands on the event it ends, if it is the blank line after one. */
  function readLine(line: string): void {
    if (line.charCodeAt(line.length - 1) === 13) line = line.slice(0, -1);
    if (line === '') {
      const ended = data.length > 0 ? { event, data: data.length === 1 ? data[0] : data.join('\n') } : undefined;
      event = '';
      data = [];
      dataChars = 0;
      if (ended) onEvent(ended);
      return;
    }
    const colon = line.indexOf(':');
    if (colon === 0) return; // a comment (a keep-alive)
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(line.charCodeAt(colon + 1) === 32 ? colon + 2 : colon + 1);
    if (field === 'data') {
      dataChars += value.length;
      if (dataChars > MAX_EVENT_CHARS) throw limits.eventTooLarge();
      data.push(value);
    } else if (field === 'event') event = value;
  }

  return {
    push(part) {
      bytes += part.length;
      if (bytes > limits.maxBytes) throw limits.tooLarge();
      const text = typeof part === 'string' ? part : decoder.decode(part, { stream: true });
      let from = 0;
      for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', from)) {
        let line = text.slice(from, end);
        if (partial.length > 0) {
          partial.push(line);
          line = partial.join('');
          partial = [];
          partialChars = 0;
        }
        from = end + 1;
        readLine(line);
      }
      if (from < text.length) {
        partial.push(from === 0 ? text : text.slice(from));
        partialChars += text.length - from;
        if (partialChars > MAX_EVENT_CHARS) throw limits.eventTooLarge();
      }
    },
    end() {
      // A server that ends without the blank line after its last event still meant it.
      const last = partial.join('') + decoder.decode();
      partial = [];
      if (last !== '') readLine(last);
      if (data.length > 0) readLine('');
    },
  };
}
