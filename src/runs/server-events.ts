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

/**
 * The events of `body` as they arrive (lines end in \n or \r\n). Throws `tooLarge()` past
 * `maxBytes` in all, and `eventTooLarge()` when a line or an event passes MAX_EVENT_CHARS.
 */
export async function* serverEvents(
  body: AsyncIterable<Uint8Array | string>,
  limits: { maxBytes: number; tooLarge: () => Error; eventTooLarge: () => Error },
): AsyncGenerator<ServerEvent> {
  const decoder = new TextDecoder();
  let bytes = 0;
  let partial: string[] = []; // the pieces of a line not ended yet
  let partialChars = 0;
  let event = '';
  let data: string[] = [];
  let dataChars = 0;

  /** Reads one whole line; the event it ends, if it is the blank line after one. */
  function readLine(line: string): ServerEvent | undefined {
    if (line.charCodeAt(line.length - 1) === 13) line = line.slice(0, -1);
    if (line === '') {
      const ended = data.length > 0 ? { event, data: data.join('\n') } : undefined;
      event = '';
      data = [];
      dataChars = 0;
      return ended;
    }
    const colon = line.indexOf(':');
    if (colon === 0) return undefined; // a comment (a keep-alive)
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(line.charCodeAt(colon + 1) === 32 ? colon + 2 : colon + 1);
    if (field === 'data') {
      dataChars += value.length;
      if (dataChars > MAX_EVENT_CHARS) throw limits.eventTooLarge();
      data.push(value);
    } else if (field === 'event') event = value;
    return undefined;
  }

  for await (const part of body) {
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
      const ended = readLine(line);
      if (ended) yield ended;
    }
    if (from < text.length) {
      partial.push(from === 0 ? text : text.slice(from));
      partialChars += text.length - from;
      if (partialChars > MAX_EVENT_CHARS) throw limits.eventTooLarge();
    }
  }
  // A server that ends without the blank line after its last event still meant it.
  const last = partial.join('') + decoder.decode();
  if (last !== '') {
    const ended = readLine(last);
    if (ended) yield ended;
  }
  if (data.length > 0) yield { event, data: data.join('\n') };
}
