// Reads a text/event-stream response body (EventSource can neither POST nor send our Authorization
// header, so invoke and a run's event log are read with fetch).

export interface ServerEvent {
  event: string;
  data: string;
  /** The last `id:` the stream gave (a run's log numbers every event: resume after it). */
  id?: string;
}

/** Yields each event of the stream as it completes; comment lines (keep-alives) are skipped. */
export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let event = 'message';
  let data: string[] = [];
  let id: string | undefined;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let newline: number;
      while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
        if (line === '') {
          if (data.length > 0) yield { event, data: data.join('\n'), id };
          event = 'message';
          data = [];
        } else if (!line.startsWith(':')) {
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'event') event = value;
          else if (field === 'data') data.push(value);
          else if (field === 'id' && !value.includes('\0')) id = value;
        }
      }
    }
    if (data.length > 0) yield { event, data: data.join('\n'), id };
  } finally {
    reader.releaseLock();
  }
}
