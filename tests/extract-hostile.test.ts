// Hostile documents: what a small file can make extraction do (inflate a PDF's streams, fill a
// PDF reader's memory, repeat long CSV column names) stays within limits, and past one the
// document fails saying which; through the service, and per limit through extractText with the
// limits lowered (so that the files stay small).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import zlib from 'node:zlib';
import { EXTRACT_LIMITS, extractText, type ExtractLimits } from '../src/ingest/extract.js';
import { makePdf } from './fixtures/ingest/pdf.js';
import { rejection, startService, testConfig } from './helpers.js';

const MiB = 1024 * 1024;

/** A PDF of `objects`, numbered from 1 (a stream given as its dictionary's entries and its bytes). */
function rawPdf(objects: (string | { dict: string; data: Uint8Array })[]): Buffer {
  const parts = [Buffer.from('%PDF-1.7\n')];
  let length = parts[0].length;
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(length);
    const body =
      typeof object === 'string'
        ? Buffer.from(`${i + 1} 0 obj\n${object}\nendobj\n`, 'latin1')
        : Buffer.concat([
            Buffer.from(`${i + 1} 0 obj\n<< ${object.dict} /Length ${object.data.length} >>\nstream\n`, 'latin1'),
            object.data,
            Buffer.from('\nendstream\nendobj\n'),
          ]);
    parts.push(body);
    length += body.length;
  });
  const xref = offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('');
  parts.push(
    Buffer.from(
      `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`,
    ),
  );
  return Buffer.concat(parts);
}

/** One page showing its contents (objects 5 on) in Helvetica as /F1, with `resources` besides. */
function onePage(contents: string, more: (string | { dict: string; data: Uint8Array })[], resources = ''): Buffer {
  return rawPdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ${contents} /Resources << /Font << /F1 4 0 R >> ${resources} >> >>`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    ...more,
  ]);
}

/** Page contents that show "Hello otter", then `mib` MiB of spaces (what pdf.js reads past without a pause). */
const helloAndSpaces = (mib: number) =>
  Buffer.concat([Buffer.from('BT /F1 12 Tf 72 712 Td (Hello otter) Tj ET\n'), Buffer.alloc(mib * MiB, ' ')]);

/** RunLengthDecode data: 128 spaces in two bytes (the end of data marker last). */
const runsOfSpaces = (mib: number) => Buffer.concat([Buffer.alloc((mib * MiB) / 64).fill(Buffer.from([129, 0x20])), Buffer.from([128])]);

const service = await startService({ ingestion: testConfig({ INGEST: 'on' }).ingestion });
const { token } = await service.signUp();

describe('through the service', () => {
  async function ingested(content: string | Uint8Array, filename: string, type: string): Promise<any> {
    const form = new FormData();
    form.append('file', new Blob([typeof content === 'string' ? content : new Uint8Array(content)], { type }), filename);
    const response = await fetch(`${service.url}/api/v1/documents`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}` },
      body: form,
    });
    const created = (await response.json()) as any;
    assert.equal(response.status, 201, JSON.stringify(created));
    const reply = await service.request('GET', `/api/v1/documents/${created.data.id}?wait=30`, { token });
    assert.ok(['ready', 'failed'].includes(reply.body.data.status), JSON.stringify(reply.body));
    return reply.body.data;
  }

  test('a PDF of 64 KiB whose page contents inflate to 64 MiB fails as too large', async () => {
    const pdf = onePage('5 0 R', [{ dict: '/Filter /FlateDecode', data: zlib.deflateSync(helloAndSpaces(64)) }]);
    const { status, error } = await ingested(pdf, 'report.pdf', 'application/pdf');
    assert.equal(status, 'failed');
    assert.equal(error, 'the PDF holds a stream or page that decompresses to more than 32 MiB');
  });

  test("a CSV's long column names are cut before each value; past the text limit the file fails as it is read", async () => {
    // 1,000 columns named with 2,000 characters, 12 rows of 1s: 24 M characters with the whole names.
    const names = Array.from({ length: 1000 }, (_, i) => `c${String(i).padStart(1999, 'x')}`);
    const rows = (columns: number, count: number) => `${Array(columns).fill('1').join(',')}\n`.repeat(count);
    const cut = await ingested(`${names.join(',')}\n${rows(1000, 12)}`, 'data.csv', 'text/csv');
    assert.equal(cut.status, 'ready', cut.error);
    // Each value as "<the name's first 200 characters>…: 1".
    const row = 1000 * (201 + 3) + 999;
    assert.equal(cut.index.characters, 12 * row + 11 * 2);

    // 100 columns of 200-character names and 1,100 rows of 1s: 22 M characters of text from 300 KB.
    const long = await ingested(
      `${names
        .slice(0, 100)
        .map((name) => name.slice(0, 200))
        .join(',')}\n${rows(100, 1100)}`,
      'long.csv',
      'text/csv',
    );
    assert.equal(long.status, 'failed');
    assert.equal(long.error, "the CSV file's text is longer than 20,971,520 characters");
  });
});

describe('each limit of PDF reading', () => {
  const limits = (lower: Partial<ExtractLimits>): ExtractLimits => ({ ...EXTRACT_LIMITS, ...lower });
  const read = (pdf: Uint8Array, lower: Partial<ExtractLimits>) => extractText('PDF', pdf, 'application/pdf', {}, limits(lower));

  test('every way pdf.js decompresses a stream stops at its limit', async () => {
    const form = (filter: string, data: Uint8Array) =>
      onePage(
        '5 0 R',
        [
          { dict: '', data: Buffer.from('/X1 Do') },
          { dict: `/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Filter ${filter}`, data },
        ],
        '/XObject << /X1 6 0 R >>',
      );
    const shapes: Record<string, (mib: number) => Buffer> = {
      Flate: (mib) => onePage('5 0 R', [{ dict: '/Filter /FlateDecode', data: zlib.deflateSync(helloAndSpaces(mib)) }]),
      'Flate twice': (mib) =>
        onePage('5 0 R', [{ dict: '/Filter [/FlateDecode /FlateDecode]', data: zlib.deflateSync(zlib.deflateSync(helloAndSpaces(mib))) }]),
      Brotli: (mib) => onePage('5 0 R', [{ dict: '/Filter /BrotliDecode', data: zlib.brotliCompressSync(helloAndSpaces(mib)) }]),
      // Decoded by pdf.js's own decoder, byte by byte, as the contents are read.
      RunLength: (mib) =>
        onePage('[5 0 R 6 0 R]', [
          { dict: '', data: Buffer.from('BT /F1 12 Tf 72 712 Td (Hello otter) Tj ET\n') },
          { dict: '/Filter /RunLengthDecode', data: runsOfSpaces(mib) },
        ]),
      'a form XObject': (mib) => form('/FlateDecode', zlib.deflateSync(helloAndSpaces(mib))),
      'a form XObject, RunLength': (mib) => {
        const hello = Buffer.from('BT /F1 12 Tf 72 712 Td (Hello) Tj ET ');
        return form('/RunLengthDecode', Buffer.concat([Buffer.from([hello.length - 1]), hello, runsOfSpaces(mib)]));
      },
      // Each stream of the page within the limit, the page's contents not.
      'contents in 4 streams': (mib) =>
        onePage('[5 0 R 5 0 R 5 0 R 5 0 R]', [{ dict: '/Filter /FlateDecode', data: zlib.deflateSync(helloAndSpaces(mib / 4)) }]),
    };
    for (const [name, pdf] of Object.entries(shapes)) {
      const refused = await rejection(read(pdf(2), { streamBytes: MiB }));
      assert.equal(refused.code, 'too_large', name);
      assert.equal(refused.message, 'the PDF holds a stream or page that decompresses to more than 1 MiB', name);
    }
    // Within the limit, each is read.
    for (const [name, pdf] of Object.entries(shapes)) {
      assert.match((await read(pdf(0.25), { streamBytes: MiB })).text, /Hello/, name);
    }
  });

  test('the decompressed data held at once is bounded', async () => {
    const pdf = onePage('5 0 R', [{ dict: '/Filter /FlateDecode', data: zlib.deflateSync(helloAndSpaces(16)) }]);
    const refused = await rejection(read(pdf, { bufferBytes: 8 * MiB }));
    assert.equal(refused.code, 'too_large');
    assert.equal(refused.message, 'reading the PDF needs more than 8 MiB of memory');
  });

  test('a font whose map names 16 million codes (1 KB) stops at the heap limit', async () => {
    const cmap =
      '/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Bomb def 1 begincodespacerange <000000> <FFFFFF> ' +
      'endcodespacerange 1 beginbfrange <000000> <FFFFFE> <0041> endbfrange endcmap CMapName currentdict /CMap defineresource pop end end';
    const pdf = rawPdf([
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 6 0 R /Resources << /Font << /F1 4 0 R >> >> >>',
      '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 5 0 R >>',
      { dict: '', data: Buffer.from(cmap) },
      { dict: '', data: Buffer.from('BT /F1 12 Tf 72 712 Td (A) Tj ET') },
    ]);
    const refused = await rejection(read(pdf, { heapMb: 64 }));
    assert.equal(refused.code, 'too_large');
    assert.equal(refused.message, 'reading the PDF needs more than 64 MiB of memory');
  });

  test('the text of the pages read is counted as they give it; fewer pages fit', async () => {
    const pdf = makePdf([['Page one says hello.'], ['Page two.'], ['Page three says goodbye.']]);
    const refused = await rejection(read(pdf, { textCharacters: 40 }));
    assert.equal(refused.code, 'too_large');
    assert.equal(refused.message, "the PDF's text is longer than 40 characters; read fewer pages with from_page and to_page");
    const some = await extractText('PDF', pdf, 'application/pdf', { fromPage: 2 }, limits({ textCharacters: 40 }));
    assert.equal(some.text, 'Page two.\n\nPage three says goodbye.');
  });

  test('a PDF that takes longer than the limit is ended', async () => {
    const refused = await rejection(read(makePdf([['Quick.']]), { timeoutMs: 1 }));
    assert.equal(refused.code, 'timeout');
    assert.equal(refused.message, 'reading the PDF took longer than 1 ms; read fewer pages with from_page and to_page');
  });
});

describe('the text limit of the other types', () => {
  const small = { ...EXTRACT_LIMITS, textCharacters: 20 };
  const refusal = async (type: 'TXT' | 'CSV' | 'URL' | 'VIDEO', text: string, contentType: string) =>
    (await rejection(extractText(type, Buffer.from(text), contentType, {}, small))).message;

  test('TXT, CSV, web pages, text answered for a URL and captions', async () => {
    assert.equal(await refusal('TXT', 'x'.repeat(21), 'text/plain'), 'the text file is longer than 20 characters');
    assert.equal(await refusal('CSV', 'name,kind\nOtter,mammal\n', 'text/csv'), "the CSV file's text is longer than 20 characters");
    assert.equal(await refusal('URL', `<p>${'x'.repeat(21)}</p>`, 'text/html'), "the page's text is longer than 20 characters");
    assert.equal(await refusal('URL', 'x'.repeat(21), 'text/plain'), "the URL's answer is longer than 20 characters");
    const captions = 'WEBVTT\n\n00:01.000 --> 00:02.000\nOtters hold hands\n\n00:02.000 --> 00:03.000\nwhile they sleep\n';
    assert.equal(await refusal('VIDEO', captions, 'text/vtt'), "the captions' text is longer than 20 characters");
    // At the limit, each is read.
    assert.equal((await extractText('TXT', Buffer.from('x'.repeat(20)), 'text/plain', {}, small)).text, 'x'.repeat(20));
    assert.equal((await extractText('CSV', Buffer.from('n\nOtters\nBeaver\n'), 'text/csv', {}, small)).text, 'n: Otters\n\nn: Beaver');
    assert.equal(
      (await extractText('URL', Buffer.from('<p>Otters</p><p>Otters, more</p>'), 'text/html', {}, small)).text,
      'Otters\n\nOtters, more',
    );
  });
});
