// Finds the markers of the ReAct format ("Action:", "Action Input:", "Final Answer:") in a model's
// text in one pass, a character at a time, resumable across the pieces of a streamed answer. The
// model's text is hostile in size: a regular expression that backtracks over it (LangChain's
// `Action\s*\d*\s*:(.*?)Action\s*\d*\s*Input…`) costs time in the square of its length, so the
// markers are matched by this small automaton instead, in time proportional to the text.

/** Where the markers are, in positions of the text fed so far; each is the first one found. */
export interface ReactMarks {
  /** The first "Action:" (`Action\s*\d*\s*:`): where it starts and where its colon ends. */
  action?: { start: number; end: number };
  /** Where the first "Action:" that begins a line (only whitespace before it on its line) starts. */
  lineAction?: number;
  /** The first "Action Input:" (`Action\s*\d*\s*Input\s*\d*\s*:`) after `action`. */
  input?: { start: number; end: number };
  /** Where the first "Final Answer:" starts. */
  final?: number;
}

export const FINAL_ANSWER = 'Final Answer:';
const ACTION = 'Action';
const INPUT = 'Input';

/** JavaScript's `\s`: the white space and line terminators a regular expression's `\s` matches. */
export function isSpace(code: number): boolean {
  return (
    (code >= 9 && code <= 13) ||
    code === 32 ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

const isDigit = (code: number) => code >= 48 && code <= 57;
const COLON = 58;

// Where the automaton is in `Action \s* \d* \s* (Input \s* \d* \s*)? :`.
const Phase = { Idle: 0, Action: 1, Space1: 2, Digits1: 3, Space2: 4, Input: 5, Space3: 6, Digits2: 7, Space4: 8 } as const;
type Phase = (typeof Phase)[keyof typeof Phase];

/** A scanner fed the model's text piece by piece; `marks` says what was found so far. */
export function createReactScanner() {
  const marks: ReactMarks = {};
  let offset = 0; // characters fed before the current piece
  let phase: Phase = Phase.Idle;
  let matched = 0; // characters of the literal (ACTION or INPUT) matched so far
  let start = 0; // where the current "Action" began
  let startsLine = false; // only whitespace before `start` on its line
  let lineBlank = true; // only whitespace since the last line break (or the beginning)
  let finalMatched = 0; // characters of FINAL_ANSWER matched so far

  /** Moves the automaton on by the character `code` at `at`; false when it does not fit the pattern. */
  function step(code: number, at: number): boolean {
    switch (phase) {
      case Phase.Idle:
        if (code !== ACTION.charCodeAt(0)) return true;
        phase = Phase.Action;
        matched = 1;
        start = at;
        startsLine = lineBlank;
        return true;
      case Phase.Action:
        if (code !== ACTION.charCodeAt(matched)) return false;
        matched += 1;
        if (matched === ACTION.length) phase = Phase.Space1;
        return true;
      case Phase.Input:
        if (code !== INPUT.charCodeAt(matched)) return false;
        matched += 1;
        if (matched === INPUT.length) phase = Phase.Space3;
        return true;
      case Phase.Space1:
      case Phase.Digits1:
      case Phase.Space2:
        if (code === COLON) {
          foundAction(at + 1);
          phase = Phase.Idle;
        } else if (code === INPUT.charCodeAt(0)) {
          phase = Phase.Input;
          matched = 1;
        } else if (isSpace(code)) {
          phase = phase === Phase.Space1 ? Phase.Space1 : Phase.Space2;
        } else if (isDigit(code) && phase !== Phase.Space2) {
          phase = Phase.Digits1;
        } else {
          return false;
        }
        return true;
      default: // Space3, Digits2, Space4
        if (code === COLON) {
          foundInput(at + 1);
          phase = Phase.Idle;
        } else if (isSpace(code)) {
          phase = phase === Phase.Space3 ? Phase.Space3 : Phase.Space4;
        } else if (isDigit(code) && phase !== Phase.Space4) {
          phase = Phase.Digits2;
        } else {
          return false;
        }
        return true;
    }
  }

  function foundAction(end: number): void {
    marks.action ??= { start, end };
    if (startsLine) marks.lineAction ??= start;
  }

  function foundInput(end: number): void {
    // Only an "Action Input:" after the first "Action:" counts (as in LangChain's pattern).
    if (marks.action) marks.input ??= { start, end };
  }

  return {
    marks,
    /** Reads the next piece of the text. */
    feed(piece: string): void {
      for (let i = 0; i < piece.length; i += 1) {
        const code = piece.charCodeAt(i);
        const at = offset + i;
        // A failed partial match holds no other "A" than its first, so it restarts at this character.
        if (!step(code, at)) {
          phase = Phase.Idle;
          step(code, at);
        }
        if (marks.final === undefined) {
          // FINAL_ANSWER repeats none of its beginnings, so a mismatch starts over at this character.
          if (code === FINAL_ANSWER.charCodeAt(finalMatched)) finalMatched += 1;
          else finalMatched = code === FINAL_ANSWER.charCodeAt(0) ? 1 : 0;
          if (finalMatched === FINAL_ANSWER.length) marks.final = at + 1 - FINAL_ANSWER.length;
        }
        if (code === 10) lineBlank = true;
        else if (!isSpace(code)) lineBlank = false;
      }
      offset += piece.length;
    },
  };
}

/** The ReAct markers of a whole text. */
export function scanReact(text: string): ReactMarks {
  const scanner = createReactScanner();
  scanner.feed(text);
  return scanner.marks;
}
