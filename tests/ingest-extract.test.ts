// extractText per document type, on small fixtures made here (the PDFs by tests/fixtures/ingest/pdf.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { extractText, htmlToText } from '../src/ingest/extract.js';
import { makePdf } from './fixtures/ingest/pdf.js';
import { rejection } from './helpers.js';

const utf8 = (text: string) => Buffer.from(text, 'utf8');

describe('TXT', () => {
  it('decodes UTF-8, strips the BOM and normalises line endings', async () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8('Grüße\r\n\r\nzweiter Absatz\rEnde')]);
    assert.deepEqual(await extractText('TXT', bytes, 'text/plain'), { text: 'Grüße\n\nzweiter Absatz\nEnde' });
  });

  it('honours a declared charset and a UTF-16 byte-order mark', async () => {
    assert.equal((await extractText('TXT', Buffer.from('café \x80', 'latin1'), 'text/plain; charset=ISO-8859-1')).text, 'café €');
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('naïve text', 'utf16le')]);
    assert.equal((await extractText('TXT', utf16, null)).text, 'naïve text');
  });

  it('decodes UTF-16 declared by its charset without a byte-order mark, and still refuses binary content so declared', async () => {
    const le = Buffer.from('naïve text', 'utf16le');
    assert.equal((await extractText('TXT', le, 'text/plain; charset=utf-16le')).text, 'naïve text');
    assert.equal((await extractText('TXT', le, 'text/plain; charset="UTF-16"')).text, 'naïve text');
    const be = Buffer.from(le).swap16();
    assert.equal((await extractText('TXT', be, 'text/plain; charset=utf-16be')).text, 'naïve text');
    const csv = Buffer.from('name,kind\nOtter,mammal', 'utf16le');
    assert.equal((await extractText('CSV', csv, 'text/csv; charset=utf-16le')).text, 'name: Otter\nkind: mammal');
    const binary = await rejection(extractText('TXT', Buffer.from([0x41, 0, 0, 0, 0x42, 0]), 'text/plain; charset=utf-16le'));
    assert.equal(binary.message, 'the text file is not text (it holds binary data)');
  });

  it('refuses binary content', async () => {
    const binary = await rejection(extractText('TXT', Buffer.from([1, 2, 0, 3, 0, 0]), 'text/plain'));
    assert.equal(binary.message, 'the text file is not text (it holds binary data)');
    const pdf = await rejection(extractText('TXT', makePdf([['x']]), 'application/pdf'));
    assert.equal(pdf.message, 'the text file is a PDF; give the document type PDF');
    const image = await rejection(extractText('TXT', utf8('GIF89a'), 'image/gif'));
    assert.equal(image.message, 'the text file is not text (the URL answered image/gif)');
  });

  it('refuses a web page (served as HTML, or unlabelled and reading as HTML) and says to use type URL', async () => {
    const page = '<!-- built --><html><body><script>track()</script><p>Hi</p></body></html>';
    for (const [type, contentType] of [
      ['TXT', 'text/html'],
      ['CSV', 'application/xhtml+xml; charset=utf-8'],
      ['TXT', null],
      ['CSV', 'application/octet-stream'],
    ] as const) {
      const refused = await rejection(extractText(type, utf8(page), contentType));
      assert.equal(refused.message, 'the URL answered a web page (HTML); use the document type URL', `${type} as ${contentType}`);
    }
    // Text the server calls text stays text, markup and all; text that does not begin like a page too.
    assert.equal((await extractText('TXT', utf8(page), 'text/plain')).text, page);
    assert.equal((await extractText('TXT', utf8('a < b and <p> is a tag'), null)).text, 'a < b and <p> is a tag');
    assert.equal((await extractText('CSV', utf8('tag,meaning\n<p>,paragraph\n'), 'text/csv')).text, 'tag: <p>\nmeaning: paragraph');
  });
});

describe('CSV', () => {
  it('renders each row as header: value lines, rows separated by a blank line', async () => {
    const csv = '\ufeffname,city,note\r\nAnn,Oslo,"likes ""fjords"", and skiing"\r\nBob,,"two\nlines"\r\n\r\n,,\r\nCid,Rome\r\n';
    assert.equal(
      (await extractText('CSV', utf8(csv), 'text/csv')).text,
      'name: Ann\ncity: Oslo\nnote: likes "fjords", and skiing\n\nname: Bob\nnote: two\nlines\n\nname: Cid\ncity: Rome',
    );
  });

  it('detects semicolons and tabs, and names extra or unnamed columns', async () => {
    assert.equal((await extractText('CSV', utf8('a;b\n1,5;2\n'), 'text/csv')).text, 'a: 1,5\nb: 2');
    assert.equal((await extractText('CSV', utf8('a\tb\nx\ty\n'), 'text/tab-separated-values')).text, 'a: x\nb: y');
    assert.equal((await extractText('CSV', utf8('id,\n1,2,3\n'), 'text/csv')).text, 'id: 1\ncolumn 2: 2\ncolumn 3: 3');
  });

  it('accepts the content types CSV files are often served with', async () => {
    for (const type of ['application/vnd.ms-excel', 'application/octet-stream', 'text/plain', null]) {
      assert.equal((await extractText('CSV', utf8('a,b\n1,2\n'), type)).text, 'a: 1\nb: 2', String(type));
    }
  });

  it('cuts a column name longer than 200 characters before repeating it with each value', async () => {
    const long = `${'w'.repeat(199)}😀 and more`;
    const { text } = await extractText('CSV', utf8(`${long},short\n1,2\n`), 'text/csv');
    assert.equal(text, `${'w'.repeat(199)}…: 1\nshort: 2`);
    const exact = 'n'.repeat(200);
    assert.equal((await extractText('CSV', utf8(`${exact}\nx\n`), 'text/csv')).text, `${exact}: x`);
  });

  it('gives a header-only file no text', async () => {
    assert.equal((await extractText('CSV', utf8('a,b,c\n'), 'text/csv')).text, '');
  });

  it('reports a file it cannot parse', async () => {
    const error = await rejection(extractText('CSV', utf8('a,b\n"unclosed,2\n'), 'text/csv'));
    assert.equal(error.code, 'parse');
    assert.match(error.message, /^the CSV file could not be parsed: .*Quote Not Closed/i);
  });
});

describe('URL (HTML)', () => {
  const page = `<!doctype html>
<html><head><title>Page title</title><style>p { color: red }</style>
<script>document.write("<p>scripted</p>")</script></head>
<body>
<header><a href="/">Logo</a><nav><a href="/a">About</a> <a href="/b">Blog</a></nav></header>
<main>
  <h1>The   Heading</h1>
  <p>First paragraph with <b>bold</b> and <a href="#x">a link</a>.<br>Same paragraph, next line &amp; an&nbsp;entity.</p>
  <h2>Lists and tables</h2>
  <ul><li>one</li><li>two <em>2</em></li></ul>
  <table><tr><th>Name</th><th>Age</th></tr><tr><td>Ann</td><td>31</td></tr></table>
  <pre>  indented   code
  second line</pre>
  <p hidden>hidden paragraph</p><p style="display: none">invisible</p><div aria-hidden="true">decorative</div>
  <div role="navigation">breadcrumbs</div>
  <form><label>Search</label><input name="q"><button>Go</button></form>
  <svg><text>drawing text</text></svg><noscript>enable JavaScript</noscript>
  <img src="cat.png" alt="A sleeping cat">
</main>
<aside>Related posts</aside>
<footer>Copyright</footer>
</body></html>`;

  it('keeps the readable text with headings and paragraph breaks, drops the rest', async () => {
    const { text } = await extractText('URL', utf8(page), 'text/html; charset=utf-8');
    assert.equal(
      text,
      [
        'The Heading',
        'First paragraph with bold and a link.\nSame paragraph, next line & an entity.',
        'Lists and tables',
        'one',
        'two 2',
        'Name | Age',
        'Ann | 31',
        '  indented   code\n  second line',
        'A sleeping cat',
      ].join('\n\n'),
    );
    for (const dropped of [
      'Page title',
      'scripted',
      'color',
      'Logo',
      'About',
      'hidden',
      'invisible',
      'decorative',
      'breadcrumbs',
      'Search',
      'drawing',
      'JavaScript',
      'Related',
      'Copyright',
    ]) {
      assert.ok(!text.includes(dropped), dropped);
    }
  });

  it('reads the charset from a meta tag', async () => {
    const cp1252 = Buffer.concat([
      Buffer.from('<html><head><meta charset="windows-1252"></head><body><p>Caf\xe9 ', 'latin1'),
      Buffer.from([0x93, 0x71, 0x94]),
      Buffer.from('</p></body></html>'),
    ]);
    assert.equal((await extractText('URL', cp1252, 'text/html')).text, 'Café “q”');
  });

  it('takes a text/plain answer as it is and refuses a PDF or an image', async () => {
    assert.equal((await extractText('URL', utf8('just <text>\r\nhere\n'), 'text/plain')).text, 'just <text>\nhere');
    const pdf = await rejection(extractText('URL', makePdf([['x']]), 'application/pdf'));
    assert.equal(pdf.message, 'the URL answered a PDF, not a web page; give the document type PDF');
    const image = await rejection(extractText('URL', Buffer.from([0x89, 0x50, 0x4e, 0x47]), 'image/png'));
    assert.equal(image.message, 'the URL answered image/png, not a web page');
  });

  it('tells a page from text in linear time, however many comments it begins with', async () => {
    // Comments with no tag after them: a backtracking sniff took time exponential in their number.
    const comments = '<!---->'.repeat(27);
    let started = performance.now();
    assert.equal((await extractText('URL', utf8(`${comments}plain words`), null)).text, `${comments}plain words`);
    assert.ok(performance.now() - started < 1000, `${Math.round(performance.now() - started)} ms`);
    started = performance.now();
    assert.equal((await extractText('TXT', utf8(`${'<!-- -->'.repeat(200_000)}x`), null)).text.length, 8 * 200_000 + 1);
    await rejection(extractText('TXT', utf8(`${comments}<html><p>page</p></html>`), null));
    assert.ok(performance.now() - started < 1000, `${Math.round(performance.now() - started)} ms`);
  });

  it('parses HTML without a content type and survives broken markup', async () => {
    assert.equal((await extractText('URL', utf8('<p>one<p>two<div>three'), null)).text, 'one\n\ntwo\n\nthree');
    assert.equal(await htmlToText('<body><p>unclosed <b>bold <i>both</p>after'), 'unclosed bold both\n\nafter');
  });
});

describe('PDF', () => {
  const pdf = makePdf([
    ['Page one says hello.', 'It has a second line.', '', 'And a second paragraph.'],
    ['Page two is about zebras.'],
    ['Page three is about yaks.'],
  ]);

  it('reads the text of every page, with the page count', async () => {
    const got = await extractText('PDF', pdf, 'application/pdf');
    assert.equal(got.pages, 3);
    assert.equal(got.pagesRead, 3);
    assert.equal(
      got.text,
      'Page one says hello.\nIt has a second line.\n\nAnd a second paragraph.\n\nPage two is about zebras.\n\nPage three is about yaks.',
    );
    assert.deepEqual(
      got.parts?.map((part) => part.page),
      [1, 2, 3],
    );
  });

  it('honours from_page and to_page, inclusive', async () => {
    const got = await extractText('PDF', pdf, 'application/pdf', { fromPage: 2, toPage: 3 });
    assert.deepEqual(got, {
      text: 'Page two is about zebras.\n\nPage three is about yaks.',
      pages: 3,
      pagesRead: 2,
      parts: [
        { page: 2, text: 'Page two is about zebras.' },
        { page: 3, text: 'Page three is about yaks.' },
      ],
    });
    const one = await extractText('PDF', pdf, null, { fromPage: 2, toPage: 2 });
    assert.equal(one.text, 'Page two is about zebras.');
    assert.equal(one.pagesRead, 1);
    const rest = await extractText('PDF', pdf, null, { fromPage: 3, toPage: null });
    assert.equal(rest.text, 'Page three is about yaks.');
  });

  it('says so when the page range is beyond the document', async () => {
    const from = await rejection(extractText('PDF', pdf, 'application/pdf', { fromPage: 4 }));
    assert.equal(from.code, 'page_range');
    assert.equal(from.message, 'from_page 4 is beyond the end of the document, which has 3 pages');
    const to = await rejection(extractText('PDF', pdf, 'application/pdf', { fromPage: 1, toPage: 7 }));
    assert.equal(to.message, 'to_page 7 is beyond the end of the document, which has 3 pages');
  });

  it('refuses what is not a PDF, a broken PDF, and one without text', async () => {
    const html = await rejection(extractText('PDF', utf8('<html>login page</html>'), 'text/html'));
    assert.equal(html.message, 'the document is not a PDF (the URL answered text/html)');
    const broken = await rejection(extractText('PDF', Buffer.from('%PDF-1.4\ngarbage with no objects\n'), 'application/pdf'));
    assert.equal(broken.code, 'parse');
    assert.match(broken.message, /^the PDF could not be read: /);
    const blank = await rejection(extractText('PDF', makePdf([[], []]), 'application/pdf'));
    assert.equal(blank.code, 'no_text');
    assert.equal(blank.message, 'the PDF has no text on pages 1–2 (a scanned PDF needs OCR, which is not done here)');
  });
});

describe('VIDEO (captions)', () => {
  it('reduces WebVTT to the spoken text', async () => {
    const vtt = `WEBVTT - a talk
Kind: captions

NOTE written by hand
over two lines

STYLE
::cue { color: lime }

intro
00:00:01.000 --> 00:00:04.000 align:start position:10%
<v Ann>Welcome to the <b>talk</b> &amp; thanks</v>

00:00:04.000 --> 00:00:06.500
<c.yellow>Today:</c> <00:00:05.000>zebras

2
00:01:02.000 --> 00:01:05.000
Today: zebras

3
01:00:00.000 --> 01:00:02.000
Goodbye.
`;
    const { text } = await extractText('VIDEO', utf8(vtt), 'text/vtt');
    assert.equal(text, 'Welcome to the talk & thanks\n\nToday: zebras\n\nGoodbye.');
  });

  it('reduces SRT to the spoken text', async () => {
    const srt =
      '\ufeff1\r\n00:00:01,000 --> 00:00:03,000\r\n<i>Hello</i> there,\r\nfriend.\r\n\r\n2\r\n00:00:03,500 --> 00:00:05,000\r\n{\\an8}Second cue\r\n';
    const { text } = await extractText('VIDEO', utf8(srt), 'application/x-subrip');
    assert.equal(text, 'Hello there,\nfriend.\n\nSecond cue');
  });

  it('recognises captions by their content whatever the content type', async () => {
    assert.equal(
      (await extractText('VIDEO', utf8('WEBVTT\n\n00:01.000 --> 00:02.000\nshort form\n'), 'application/octet-stream')).text,
      'short form',
    );
  });

  it('refuses anything but captions', async () => {
    const mp4 = await rejection(extractText('VIDEO', Buffer.from([0, 0, 0, 0x20, 0x66, 0x74, 0x79, 0x70]), 'video/mp4'));
    assert.equal(mp4.code, 'unsupported');
    assert.equal(mp4.message, 'transcripts must be given as WebVTT or SRT captions; the URL answered video/mp4');
    const page = await rejection(extractText('VIDEO', utf8('<html>a video player</html>'), 'text/html'));
    assert.equal(page.message, 'transcripts must be given as WebVTT or SRT captions; the URL answered text/html');
    const text = await rejection(extractText('VIDEO', utf8('just a transcript without timings'), 'text/plain'));
    assert.equal(text.message, 'transcripts must be given as WebVTT or SRT captions');
  });
});

describe('hostile shapes are read in linear time', () => {
  /**
   * Runs `work` and checks it took under 5 s: linear reading takes milliseconds, the quadratic code
   * took 4-70 s for each; generous, as the machine may be busy with other work (1 s failed once).
   */
  async function quick<T>(what: string, work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    const result = await work();
    const ms = performance.now() - started;
    assert.ok(ms < 5000, `${what}: ${Math.round(ms)} ms`);
    return result;
  }

  it('a page of 20,000 table cells, of 40,000 line breaks, and a <pre> of 50,000 spaces', async () => {
    const cells = await quick('cells', () => htmlToText(`<table><tr>${'<td>a</td>'.repeat(20_000)}</tr></table>`));
    assert.equal(cells, Array(20_000).fill('a').join(' | '));
    const breaks = await quick('breaks', () => htmlToText(`<p>${'a <br>'.repeat(40_000)}</p>`));
    assert.equal(breaks, Array(40_000).fill('a').join('\n'));
    const pre = await quick('pre', () => htmlToText(`<pre>a${' '.repeat(50_000)}b</pre>`));
    assert.equal(pre, `a${' '.repeat(50_000)}b`);
  });

  it('a <pre> of 200,000 spaces between two words, then a line break', async () => {
    // The spaces before a <br> are dropped: read from the end, not by a pattern tried at every space.
    const pre = await quick('pre and br', () => htmlToText(`<pre>a${' '.repeat(200_000)}b <br>c</pre>`));
    assert.equal(pre, `a${' '.repeat(200_000)}b\nc`);
    const cells = await quick('cells after spaces', () =>
      htmlToText(`<pre><table><tr><td>a${' '.repeat(200_000)}b </td><td>c</td></tr></table></pre>`),
    );
    assert.equal(cells, `a${' '.repeat(200_000)}b | c`);
  });

  it('a page nested 100,000 deep is refused at once with the reason; 1,500 deep is read', async () => {
    const nested = (depth: number) => `${'<div>'.repeat(depth)}deep text${'</div>'.repeat(depth)}`;
    const refused = await rejection(quick('100,000 deep', () => htmlToText(nested(100_000))));
    assert.equal(refused.code, 'parse');
    assert.equal(refused.message, 'the page nests its elements more than 2000 deep');
    assert.equal(await quick('1,500 deep', () => htmlToText(nested(1_500))), 'deep text');
    // Implied closes (unclosed <p> and <td>) do not count as depth.
    assert.equal((await htmlToText(`<table><tr>${'<td>a'.repeat(5_000)}</table>`)).split(' | ').length, 5_000);
  });

  it("captions with a 200,000-character line of '<' or '{\\', or 50,000 leading spaces", async () => {
    const cue = (text: string) => utf8(`WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n${text}\n`);
    assert.equal((await quick('<', () => extractText('VIDEO', cue('<'.repeat(200_000)), 'text/vtt'))).text, '<'.repeat(200_000));
    assert.equal((await quick('{\\', () => extractText('VIDEO', cue('{\\'.repeat(100_000)), 'text/vtt'))).text, '{\\'.repeat(100_000));
    const spaces = await rejection(quick('spaces', () => extractText('VIDEO', utf8(' '.repeat(50_000)), 'text/plain')));
    assert.equal(spaces.message, 'transcripts must be given as WebVTT or SRT captions');
  });
});
