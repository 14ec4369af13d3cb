// Markdown of an agent's answer as Preact elements: paragraphs, headings, fenced code blocks, lists,
// block quotes, rules, inline code, emphasis, links. Never HTML: everything the text holds is drawn
// as text (a `<script>` in an answer shows as those characters), and a link is made only to an
// http(s) address, opened with rel="noopener noreferrer". The model writes the text, so it is read
// in time linear in its length: no regular expression that can backtrack over a line, every search
// for a closing mark moves forward only, and emphasis nests at most one level per kind of mark.
import type { ComponentChildren, VNode } from 'preact';

/** How deep block quotes nest before further `>` are shown as text. */
const MAX_QUOTE_DEPTH = 8;

export function Markdown({ text }: { text: string }) {
  return <div class="markdown">{blocks(text.replace(/\r\n?/g, '\n').split('\n'), 0)}</div>;
}

// ---- Blocks, line by line ---------------------------------------------------------------------

/** Leading spaces (up to `max`), or -1 when there are more. */
function indentOf(line: string, max = 3): number {
  let at = 0;
  while (at < line.length && line[at] === ' ') at += 1;
  return at <= max ? at : -1;
}

/** An opening code fence: three or more ` or ~ after at most three spaces. */
function fenceOf(line: string): { mark: string; length: number; info: string } | undefined {
  const at = indentOf(line);
  if (at < 0) return undefined;
  const mark = line[at];
  if (mark !== '`' && mark !== '~') return undefined;
  let end = at;
  while (line[end] === mark) end += 1;
  if (end - at < 3) return undefined;
  const info = line.slice(end).trim();
  // A backtick fence's info string may not hold a backtick (that line is inline code).
  if (mark === '`' && info.includes('`')) return undefined;
  return { mark, length: end - at, info: info.split(' ')[0] };
}

function closesFence(line: string, fence: { mark: string; length: number }): boolean {
  const trimmed = line.trim();
  if (trimmed.length < fence.length || indentOf(line) < 0) return false;
  for (const char of trimmed) if (char !== fence.mark) return false;
  return true;
}

/** `---`, `***` or `___` (spaces allowed between). */
function isRule(line: string): boolean {
  if (indentOf(line) < 0) return false;
  const trimmed = line.trim();
  const mark = trimmed[0];
  if (mark !== '-' && mark !== '*' && mark !== '_') return false;
  let count = 0;
  for (const char of trimmed) {
    if (char === mark) count += 1;
    else if (char !== ' ' && char !== '\t') return false;
  }
  return count >= 3;
}

function headingOf(line: string): { level: number; text: string } | undefined {
  const at = indentOf(line);
  if (at < 0 || line[at] !== '#') return undefined;
  let end = at;
  while (line[end] === '#') end += 1;
  const level = end - at;
  if (level > 6 || (end < line.length && line[end] !== ' ' && line[end] !== '\t')) return undefined;
  let text = line.slice(end).trim();
  // A closing run of # (after a space) is not part of the heading.
  let cut = text.length;
  while (cut > 0 && text[cut - 1] === '#') cut -= 1;
  if (cut === 0 || text[cut - 1] === ' ' || text[cut - 1] === '\t') text = text.slice(0, cut).trimEnd();
  return { level, text };
}

interface ListItem {
  ordered: boolean;
  /** The number of an ordered item. */
  start: number;
  text: string;
}

/** A list item's marker (`-`, `*`, `+`, `1.`, `1)`) and its text; indentation is not nesting here. */
function listItemOf(line: string): ListItem | undefined {
  let at = 0;
  while (at < line.length && (line[at] === ' ' || line[at] === '\t')) at += 1;
  const mark = line[at];
  if (mark === '-' || mark === '*' || mark === '+') {
    if (line[at + 1] !== ' ' && line[at + 1] !== '\t') return undefined;
    return { ordered: false, start: 1, text: line.slice(at + 2).trim() };
  }
  let end = at;
  while (end < line.length && end - at < 10 && line[end] >= '0' && line[end] <= '9') end += 1;
  if (end === at || end - at > 9 || (line[end] !== '.' && line[end] !== ')')) return undefined;
  if (line[end + 1] !== ' ' && line[end + 1] !== '\t') return undefined;
  return { ordered: true, start: Number(line.slice(at, end)), text: line.slice(end + 2).trim() };
}

function isQuote(line: string): boolean {
  const at = indentOf(line);
  return at >= 0 && line[at] === '>';
}

/** Whether a line starts a block other than a paragraph (so it ends the paragraph before it). */
function startsBlock(line: string): boolean {
  return fenceOf(line) !== undefined || headingOf(line) !== undefined || isRule(line) || isQuote(line) || listItemOf(line) !== undefined;
}

const isBlank = (line: string) => line.trim() === '';

function blocks(lines: string[], depth: number): VNode[] {
  const out: VNode[] = [];
  let at = 0;
  while (at < lines.length) {
    const line = lines[at];
    if (isBlank(line)) {
      at += 1;
      continue;
    }
    const fence = fenceOf(line);
    if (fence) {
      const code: string[] = [];
      at += 1;
      while (at < lines.length && !closesFence(lines[at], fence)) code.push(lines[at++]);
      at += 1;
      out.push(
        <pre class="code" data-language={fence.info || undefined}>
          <code>{code.join('\n')}</code>
        </pre>,
      );
      continue;
    }
    const heading = headingOf(line);
    if (heading) {
      // Below the page's own headings (h1-h3): an answer's # is an h4, ### and smaller an h6.
      const Tag = `h${Math.min(heading.level + 3, 6)}` as 'h4' | 'h5' | 'h6';
      out.push(<Tag class={`md-h${heading.level}`}>{inline(heading.text)}</Tag>);
      at += 1;
      continue;
    }
    if (isRule(line)) {
      out.push(<hr />);
      at += 1;
      continue;
    }
    if (isQuote(line)) {
      const quoted: string[] = [];
      for (; at < lines.length && isQuote(lines[at]); at += 1) {
        const rest = lines[at].slice(indentOf(lines[at]) + 1);
        quoted.push(rest.startsWith(' ') ? rest.slice(1) : rest);
      }
      out.push(<blockquote>{depth < MAX_QUOTE_DEPTH ? blocks(quoted, depth + 1) : paragraph(quoted)}</blockquote>);
      continue;
    }
    const item = listItemOf(line);
    if (item) {
      const items: string[][] = [];
      let current: string[] = [item.text];
      at += 1;
      while (at < lines.length) {
        const next = lines[at];
        const nextItem = listItemOf(next);
        if (nextItem && nextItem.ordered === item.ordered) {
          items.push(current);
          current = [nextItem.text];
        } else if (isBlank(next)) {
          // A blank line ends the list unless another item of it follows.
          const after = at + 1 < lines.length ? listItemOf(lines[at + 1]) : undefined;
          if (!after || after.ordered !== item.ordered) break;
        } else if (!nextItem && !startsBlock(next)) {
          current.push(next.trim());
        } else {
          break;
        }
        at += 1;
      }
      items.push(current);
      const children = items.map((text) => <li>{inline(text.join('\n'))}</li>);
      out.push(item.ordered ? <ol start={item.start === 1 ? undefined : item.start}>{children}</ol> : <ul>{children}</ul>);
      continue;
    }
    const text: string[] = [];
    while (at < lines.length && !isBlank(lines[at]) && (text.length === 0 || !startsBlock(lines[at]))) text.push(lines[at++]);
    out.push(paragraph(text));
  }
  return out;
}

const paragraph = (lines: string[]) => <p>{inline(lines.map((line) => line.trim()).join('\n'))}</p>;

// ---- Inline: code, links, emphasis --------------------------------------------------------------

/** Positions of a character, read forward only: `next(from)` is the first at or after `from`. */
function forwardIndex(text: string, test: (char: string) => boolean) {
  let found = -1;
  return (from: number): number => {
    // Searched again only when the last answer lies behind `from`: each character is read once.
    if (found !== Infinity && found < from) {
      found = Infinity;
      for (let at = from; at < text.length; at += 1) {
        if (test(text[at])) {
          found = at;
          break;
        }
      }
    }
    return found;
  };
}

/** Where each run of backticks starts, by its length, to find a code span's closing run forward only. */
function backtickRuns(text: string) {
  const runs = new Map<number, { starts: number[]; next: number }>();
  for (let at = 0; at < text.length;) {
    if (text[at] !== '`') {
      at += 1;
      continue;
    }
    let end = at;
    while (text[end] === '`') end += 1;
    const length = end - at;
    let entry = runs.get(length);
    if (!entry) runs.set(length, (entry = { starts: [], next: 0 }));
    entry.starts.push(at);
    at = end;
  }
  /** The start of the first run of exactly `length` backticks after `from`, or -1. */
  return (length: number, from: number): number => {
    const entry = runs.get(length);
    if (!entry) return -1;
    while (entry.next < entry.starts.length && entry.starts[entry.next] <= from) entry.next += 1;
    return entry.next < entry.starts.length ? entry.starts[entry.next] : -1;
  };
}

/**
 * Each `(` with its matching `)`, pairs not crossing a space: where a link's address ends, with
 * balanced parentheses inside it (https://en.wikipedia.org/wiki/Otter_(disambiguation)).
 */
function matchParens(text: string): Map<number, number> {
  const matches = new Map<number, number>();
  const open: number[] = [];
  for (let at = 0; at < text.length; at += 1) {
    const char = text[at];
    if (char === '(') open.push(at);
    else if (char === ')' && open.length > 0) matches.set(open.pop()!, at);
    else if (char === ' ' || char === '\t' || char === '\n') open.length = 0;
  }
  return matches;
}

const isSpace = (char: string | undefined) => char === undefined || char === ' ' || char === '\t' || char === '\n';
const isWordChar = (char: string | undefined) => char !== undefined && /[\p{L}\p{N}]/u.test(char);
const PUNCTUATION = '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~';

/** An address a link may point to: http or https only (never javascript:, data: and the like). */
export function safeHref(url: string): string | undefined {
  if (!/^https?:\/\//i.test(url)) return undefined;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}

function link(href: string, children: ComponentChildren): VNode {
  return (
    <a href={href} rel="noopener noreferrer" target="_blank">
      {children}
    </a>
  );
}

/** An open emphasis: its mark (`*`, `**`, `***`, `_`…) and what follows it so far. */
interface Frame {
  mark: string;
  children: ComponentChildren[];
}

function inline(text: string, links = true): ComponentChildren[] {
  let closingRun: ReturnType<typeof backtickRuns> | undefined;
  const nextBracket = forwardIndex(text, (char) => char === ']');
  const parens = links && text.includes('](') ? matchParens(text) : new Map<number, number>();
  const nextSpace = forwardIndex(text, (char) => char === ' ' || char === '\t' || char === '\n');
  const nextAngle = forwardIndex(text, (char) => char === '>');

  const root: Frame = { mark: '', children: [] };
  const stack: Frame[] = [root];
  let plain = '';
  const flush = () => {
    if (plain) stack[stack.length - 1].children.push(plain);
    plain = '';
  };
  const emit = (node: ComponentChildren) => {
    flush();
    stack[stack.length - 1].children.push(node);
  };
  /** Ends the frames above `index` unclosed: their marks become text again. */
  const unwind = (index: number) => {
    flush();
    while (stack.length - 1 > index) {
      const frame = stack.pop()!;
      const parent = stack[stack.length - 1].children;
      parent.push(frame.mark);
      // One by one: spreading a long list into push() would overflow the call stack.
      for (const child of frame.children) parent.push(child);
    }
  };

  let at = 0;
  while (at < text.length) {
    const char = text[at];
    if (char === '\\' && at + 1 < text.length && PUNCTUATION.includes(text[at + 1])) {
      plain += text[at + 1];
      at += 2;
    } else if (char === '\n') {
      emit(<br />);
      at += 1;
    } else if (char === '`') {
      let end = at;
      while (text[end] === '`') end += 1;
      closingRun ??= backtickRuns(text);
      const close = closingRun(end - at, end - 1);
      if (close < 0) {
        plain += text.slice(at, end);
        at = end;
      } else {
        let code = text.slice(end, close).replace(/\n/g, ' ');
        if (code.length > 2 && code.startsWith(' ') && code.endsWith(' ') && code.trim()) code = code.slice(1, -1);
        emit(<code>{code}</code>);
        at = close + (end - at);
      }
    } else if (char === '[' && links) {
      // [text](http://…): the first ] after, then ( and an address up to its ) with no space in it.
      const close = nextBracket(at + 1);
      const parenOpen = close + 1;
      const end = text[parenOpen] === '(' ? (parens.get(parenOpen) ?? -1) : -1;
      if (end >= 0) {
        const label = inline(text.slice(at + 1, close), false);
        const href = safeHref(text.slice(parenOpen + 1, end));
        // Not an http(s) address: the label alone, as text.
        if (href) emit(link(href, label));
        else for (const part of label) emit(part);
        at = end + 1;
      } else {
        plain += char;
        at += 1;
      }
    } else if (char === '<' && links && (text.startsWith('<http://', at) || text.startsWith('<https://', at))) {
      const close = nextAngle(at + 1);
      if (close !== Infinity && close < nextSpace(at + 1)) {
        // Read once: not an address, the whole <…> is text (a second look from inside it would read it again).
        const href = safeHref(text.slice(at + 1, close));
        emit(href ? link(href, text.slice(at + 1, close)) : text.slice(at, close + 1));
        at = close + 1;
      } else {
        plain += char;
        at += 1;
      }
    } else if (char === 'h' && links && !isWordChar(text[at - 1]) && (text.startsWith('http://', at) || text.startsWith('https://', at))) {
      // A bare address, up to the next space, without the punctuation that ends a sentence.
      let end = Math.min(nextSpace(at), text.length);
      while (end > at && '.,;:!?*_)\'"'.includes(text[end - 1])) end -= 1;
      const href = safeHref(text.slice(at, end));
      // Not an address: the whole word is text, read once.
      if (href) emit(link(href, text.slice(at, end)));
      else plain += text.slice(at, Math.max(end, at + 1));
      at = Math.max(end, at + 1);
    } else if (char === '*' || char === '_') {
      let end = at;
      while (text[end] === char) end += 1;
      const mark = text.slice(at, end);
      const before = text[at - 1];
      const after = text[end];
      // `_` inside a word (snake_case) is text; so is a run of more than three marks.
      const intraword = char === '_' && (isWordChar(before) || isWordChar(after));
      const open = stack.findIndex((frame) => frame.mark === mark);
      if (mark.length <= 3 && !intraword && open > 0 && !isSpace(before)) {
        unwind(open);
        const frame = stack.pop()!;
        const content = frame.children;
        const node =
          mark.length === 1 ? (
            <em>{content}</em>
          ) : mark.length === 2 ? (
            <strong>{content}</strong>
          ) : (
            <strong>
              <em>{content}</em>
            </strong>
          );
        stack[stack.length - 1].children.push(node);
      } else if (mark.length <= 3 && !intraword && open < 0 && !isSpace(after)) {
        flush();
        stack.push({ mark, children: [] });
      } else {
        plain += mark;
      }
      at = end;
    } else {
      // Plain text up to the next character that may mean something.
      let end = at + 1;
      while (end < text.length && !'\\\n`[<h*_'.includes(text[end])) end += 1;
      plain += text.slice(at, end);
      at = end;
    }
  }
  unwind(0);
  return root.children;
}
