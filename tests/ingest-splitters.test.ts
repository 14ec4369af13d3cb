// The splitters against exact chunks: LangChain JS's own test cases (libs/langchain-textsplitters,
// text_splitter.test.ts) and outputs of @langchain/textsplitters 1.0.2 for the service's settings.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  DEFAULT_SPLITTER,
  SplitLimitError,
  characterTextSplitter,
  mergeSplits,
  recursiveCharacterTextSplitter,
  splitOnSeparator,
  splitText,
  splitTextInSlices,
} from '../src/ingest/splitters.js';

/** LangChain's test helper: `length - 1` copies of `char`, then a newline. */
function textLine(char: string, length: number): string {
  return `${new Array(length).join(char)}\n`;
}

describe('CharacterTextSplitter (LangChain test cases)', () => {
  it('splits by character count', () => {
    assert.deepEqual(characterTextSplitter('foo bar baz 123', { separator: ' ', chunkSize: 7, chunkOverlap: 3 }), [
      'foo bar',
      'bar baz',
      'baz 123',
    ]);
  });

  it('does not create empty documents', () => {
    assert.deepEqual(characterTextSplitter('foo  bar', { separator: ' ', chunkSize: 2, chunkOverlap: 0 }), ['foo', 'bar']);
  });

  it('splits on long words', () => {
    assert.deepEqual(characterTextSplitter('foo bar baz a a', { separator: ' ', chunkSize: 3, chunkOverlap: 1 }), [
      'foo',
      'bar',
      'baz',
      'a a',
    ]);
  });

  it('splits when shorter words come first', () => {
    assert.deepEqual(characterTextSplitter('a a foo bar baz', { separator: ' ', chunkSize: 3, chunkOverlap: 1 }), [
      'a a',
      'foo',
      'bar',
      'baz',
    ]);
  });

  it('splits when splits are not found easily', () => {
    assert.deepEqual(characterTextSplitter('foo bar baz 123', { separator: ' ', chunkSize: 1, chunkOverlap: 0 }), [
      'foo',
      'bar',
      'baz',
      '123',
    ]);
  });

  it('refuses an overlap not below the chunk size', () => {
    assert.throws(() => characterTextSplitter('x', { chunkSize: 2, chunkOverlap: 4 }), RangeError);
    assert.throws(() => splitText('x', { type: 'character', chunk_size: 5, chunk_overlap: 5 }), /chunk_overlap must be smaller/);
    assert.throws(() => splitText('x', { type: 'recursive', chunk_size: 0, chunk_overlap: 0 }), /chunk_size/);
  });
});

describe('RecursiveCharacterTextSplitter (LangChain test cases)', () => {
  it('splits iteratively', () => {
    const text = `Hi.\n\nI'm Harrison.\n\nHow? Are? You?\nOkay then f f f f.
This is a weird text to write, but gotta test the splittingggg some how.\n\n
Bye!\n\n-H.`;
    assert.deepEqual(recursiveCharacterTextSplitter(text, { chunkSize: 10, chunkOverlap: 1 }), [
      'Hi.',
      "I'm",
      'Harrison.',
      'How? Are?',
      'You?',
      'Okay then',
      'f f f f.',
      'This is a',
      'weird',
      'text to',
      'write,',
      'but gotta',
      'test the',
      'splitting',
      'gggg',
      'some how.',
      'Bye!',
      '-H.',
    ]);
  });

  it('keeps one unique chunk whole', () => {
    const content = textLine('A', 70);
    assert.deepEqual(splitText(content, { type: 'recursive', chunk_size: 100, chunk_overlap: 0 }), [content.trim()]);
  });

  it('splits a basic document and one starting with new lines', () => {
    const a = textLine('A', 70);
    const b = textLine('B', 70);
    assert.deepEqual(splitText(a + b, { type: 'recursive', chunk_size: 100, chunk_overlap: 0 }), [a.trim(), b.trim()]);
    const content = textLine('\n', 2) + a + textLine('\n', 4) + b + textLine('\n', 4);
    assert.deepEqual(splitText(content, { type: 'recursive', chunk_size: 100, chunk_overlap: 0 }), [a.trim(), b.trim()]);
  });

  it('overlaps chunks, new lines kept inside them', () => {
    const [a, b, c] = [textLine('A', 70), textLine('B', 20), textLine('C', 70)];
    assert.deepEqual(splitText(a + b + c, { type: 'recursive', chunk_size: 100, chunk_overlap: 30 }), [a + b.trim(), b + c.trim()]);
    const [d, e, f, g] = [textLine('A', 70), textLine('B', 10), textLine('C', 10), textLine('D', 70)];
    assert.deepEqual(splitText(d + e + f + g, { type: 'recursive', chunk_size: 100, chunk_overlap: 30 }), [
      d + e + f.trim(),
      e + f + g.trim(),
    ]);
  });

  it('counts the separator toward the chunk size when separators are not kept', () => {
    assert.deepEqual(recursiveCharacterTextSplitter('aa ab ac ba bb', { keepSeparator: false, chunkSize: 7, chunkOverlap: 3 }), [
      'aa ab',
      'ab ac',
      'ac ba',
      'ba bb',
    ]);
  });
});

describe('splitText with the service settings (outputs of @langchain/textsplitters 1.0.2)', () => {
  const text = 'Alpha beta gamma.\n\nDelta epsilon.\n\nZeta eta theta iota.\n\nKappa.\n\n\n\nLambda mu nu xi omicron pi rho sigma tau.';

  it('character: paragraphs merged with overlap; an oversize paragraph is a chunk of its own', () => {
    assert.deepEqual(splitText(text, { type: 'character', chunk_size: 40, chunk_overlap: 20 }), [
      'Alpha beta gamma.\n\nDelta epsilon.',
      'Delta epsilon.\n\nZeta eta theta iota.',
      'Zeta eta theta iota.\n\nKappa.',
      'Lambda mu nu xi omicron pi rho sigma tau.',
    ]);
  });

  it('recursive: falls back to lines, then words', () => {
    assert.deepEqual(splitText(text, { type: 'recursive', chunk_size: 40, chunk_overlap: 20 }), [
      'Alpha beta gamma.\n\nDelta epsilon.',
      'Delta epsilon.\n\nZeta eta theta iota.',
      'Kappa.',
      'Lambda mu nu xi omicron pi rho sigma',
      'pi rho sigma tau.',
    ]);
    assert.deepEqual(splitText(text, { type: 'recursive', chunk_size: 20, chunk_overlap: 5 }), [
      'Alpha beta gamma.',
      'Delta epsilon.',
      'Zeta eta theta',
      'iota.',
      'Kappa.',
      'Lambda mu nu xi',
      'xi omicron pi rho',
      'rho sigma tau.',
    ]);
  });

  it('defaults to the character splitter, 1000/200, and warns about nothing', () => {
    assert.deepEqual(DEFAULT_SPLITTER, { type: 'character', chunk_size: 1000, chunk_overlap: 200 });
    const paragraphs = Array.from({ length: 30 }, (_, i) => `Paragraph ${i} ${'word '.repeat(40).trim()}`);
    const warn = console.warn;
    let warned = 0;
    console.warn = () => {
      warned += 1;
    };
    try {
      const chunks = splitText(paragraphs.join('\n\n'), null);
      assert.deepEqual(chunks, splitText(paragraphs.join('\n\n'), DEFAULT_SPLITTER));
      for (const chunk of chunks) assert.ok(chunk.length <= 1000);
      // each chunk but the first starts with the paragraphs the one before ended with
      assert.ok(chunks.length > 1 && chunks[1].startsWith(paragraphs[4]));
      splitText('x'.repeat(3000), DEFAULT_SPLITTER); // one piece over chunk_size: a chunk of its own
    } finally {
      console.warn = warn;
    }
    assert.equal(warned, 0);
  });

  it('returns no chunk for empty or blank text', () => {
    assert.deepEqual(splitText('', DEFAULT_SPLITTER), []);
    assert.deepEqual(splitText(' \n\n \n', { type: 'recursive', chunk_size: 10, chunk_overlap: 2 }), []);
  });

  it('never cuts a character outside the BMP in half', () => {
    const chunks = splitText('😀😀😀😀😀', { type: 'recursive', chunk_size: 3, chunk_overlap: 0 });
    assert.deepEqual(chunks, ['😀', '😀', '😀', '😀', '😀']);
  });

  it('splits a long unbroken text in linear time', () => {
    const started = Date.now();
    const chunks = splitText('x'.repeat(500_000), { type: 'recursive', chunk_size: 1000, chunk_overlap: 200 });
    assert.ok(Date.now() - started < 5000);
    assert.equal(chunks[0].length, 1000);
    assert.equal(chunks[1].length, 1000);
    assert.equal(chunks.length, Math.ceil((500_000 - 200) / 800));
  });
});

describe('mergeSplits', () => {
  it('is LangChain’s merge with overlap (its output for these splits)', () => {
    assert.deepEqual(mergeSplits(['a', 'b', 'c', 'd', 'e'], ' ', { chunkSize: 5, chunkOverlap: 2 }), ['a b c', 'b c d', 'c d e']);
  });
});

describe('splitting on a separator (kept before the piece after it)', () => {
  it('splits before every place the separator starts, overlapping ones included, as split(/(?=sep)/) does', () => {
    const text = 'one\n\n\ntwo\n\n\n\nthree';
    assert.deepEqual(splitOnSeparator(text, '\n\n', true), text.split(/(?=\n\n)/));
    assert.deepEqual(splitOnSeparator(text, '\n\n', true), ['one', '\n', '\n\ntwo', '\n', '\n', '\n\nthree']);
    assert.deepEqual(recursiveCharacterTextSplitter(text, { chunkSize: 6, chunkOverlap: 0, separators: ['\n\n', ''] }), [
      'one',
      'two',
      'thre',
      'e',
    ]);
    assert.deepEqual(characterTextSplitter('aaaa b aa', { chunkSize: 3, chunkOverlap: 1, separator: 'aa', keepSeparator: true }), [
      'aa',
      'aa b',
      'aa',
    ]);
  });
});

describe('limits', () => {
  // LangChain's overlap counts the pieces' characters, not the separators between them: with
  // one-letter paragraphs each chunk of 20,000 characters moves on by one paragraph (3 characters).
  const tinyParagraphs = 'a\n\n'.repeat(60_000);
  const overlapping = { type: 'character', chunk_size: 20_000, chunk_overlap: 7_000 } as const;

  it('stops as soon as a chunk would pass the most chunks or characters, without splitting the rest', () => {
    assert.throws(
      () => splitText(tinyParagraphs, overlapping, { maxChunks: 10_000, maxCharacters: Infinity }),
      (error) => error instanceof SplitLimitError && error.limit === 'chunks' && error.max === 10_000,
    );
    assert.throws(
      () => splitText(tinyParagraphs, overlapping, { maxChunks: 10_000, maxCharacters: 4 * tinyParagraphs.length }),
      (error) => error instanceof SplitLimitError && error.limit === 'characters' && error.max === 4 * tinyParagraphs.length,
    );
  });

  it('changes nothing for a split within them', () => {
    const text = Array.from({ length: 300 }, (_, i) => `Paragraph ${i} ${'word '.repeat(i % 50)}`).join('\n\n');
    const exactly = { maxChunks: splitText(text).length, maxCharacters: splitText(text).join('').length };
    assert.deepEqual(splitText(text, DEFAULT_SPLITTER, exactly), splitText(text));
    assert.throws(() => splitText(text, DEFAULT_SPLITTER, { ...exactly, maxChunks: exactly.maxChunks - 1 }), SplitLimitError);
    assert.throws(() => splitText(text, DEFAULT_SPLITTER, { ...exactly, maxCharacters: exactly.maxCharacters - 1 }), SplitLimitError);
  });
});

describe('splitTextInSlices', () => {
  it('makes the same chunks as splitText, and lets other callbacks run while it splits a long text', async () => {
    const text = 'a\n\n'.repeat(1_000_000);
    const splitter = { type: 'character', chunk_size: 100_000, chunk_overlap: 0 } as const;
    let ticks = 0;
    let splitting = true;
    const tick = () => {
      ticks += 1;
      if (splitting) setImmediate(tick);
    };
    setImmediate(tick);
    const chunks = await splitTextInSlices(text, splitter);
    splitting = false;
    assert.ok(ticks >= 2, `callbacks run during the split: ${ticks}`);
    assert.deepEqual(chunks, splitText(text, splitter));
  });

  it('stops when its signal aborts, and at the limits', async () => {
    const aborter = new AbortController();
    const splitting = splitTextInSlices(
      'a\n\n'.repeat(1_000_000),
      { type: 'recursive', chunk_size: 100_000, chunk_overlap: 0 },
      undefined,
      aborter.signal,
    );
    aborter.abort(new Error('superseded'));
    await assert.rejects(splitting, /superseded/);
    await assert.rejects(
      splitTextInSlices(
        'a\n\n'.repeat(60_000),
        { type: 'character', chunk_size: 20_000, chunk_overlap: 7_000 },
        { maxChunks: 10, maxCharacters: Infinity },
      ),
      SplitLimitError,
    );
  });
});
