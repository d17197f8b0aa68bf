/**
 * Finds the raw source text of selected members of already-validated JSON, so ids, params and
 * results can be echoed byte for byte (no precision loss for 12345678901234567890, no
 * reformatting of 1.50 or 1e3) while JSON.parse stays the validator and the fast path.
 *
 * Precondition: `text` was accepted by JSON.parse. The scanner does not validate; it only
 * walks structure, jumping over strings with indexOf.
 */

/** Raw text of the members the JSON-RPC codecs need; absent when the object lacks the member. */
export interface RawMembers {
  id?: string;
  params?: string;
  result?: string;
  error?: string;
}

const QUOTE = 34;
const BACKSLASH = 92;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const COMMA = 44;
const COLON = 58;

function isWhitespace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

export function skipWhitespace(text: string, i: number): number {
  while (isWhitespace(text.charCodeAt(i))) i++;
  return i;
}

/** `i` at an opening quote; returns the index after the closing quote. */
function stringEnd(text: string, i: number): number {
  let from = i + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    let k = quote - 1;
    while (text.charCodeAt(k) === BACKSLASH) k--;
    // An even run of backslashes escapes itself, not the quote.
    if ((quote - 1 - k) % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** `i` at the first character of a value; returns the index after it. */
function valueEnd(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === QUOTE) return stringEnd(text, i);
  if (c === OPEN_BRACE || c === OPEN_BRACKET) {
    let depth = 0;
    for (;;) {
      const d = text.charCodeAt(i);
      if (d === QUOTE) {
        i = stringEnd(text, i);
        continue;
      }
      if (d === OPEN_BRACE || d === OPEN_BRACKET) depth++;
      else if (d === CLOSE_BRACE || d === CLOSE_BRACKET) {
        depth--;
        if (depth === 0) return i + 1;
      }
      i++;
    }
  }
  // number, true, false, null
  for (;;) {
    const d = text.charCodeAt(i);
    if (
      d === COMMA ||
      d === CLOSE_BRACE ||
      d === CLOSE_BRACKET ||
      isWhitespace(d) ||
      Number.isNaN(d)
    )
      return i;
    i++;
  }
}

type Wanted = keyof RawMembers;

/** Which wanted member a key (raw span including quotes) names, if any. */
function memberName(text: string, start: number, end: number): Wanted | undefined {
  const length = end - start;
  switch (length) {
    case 4:
      if (text.startsWith('"id"', start)) return 'id';
      break;
    case 7:
      if (text.startsWith('"error"', start)) return 'error';
      break;
    case 8:
      if (text.startsWith('"params"', start)) return 'params';
      if (text.startsWith('"result"', start)) return 'result';
      break;
  }
  // Escaped spellings ("\u0069d") name the same member for JSON.parse, so they must here too.
  for (let k = start + 1; k < end - 1; k++) {
    if (text.charCodeAt(k) === BACKSLASH) {
      const name: unknown = JSON.parse(text.slice(start, end));
      return name === 'id' || name === 'params' || name === 'result' || name === 'error'
        ? name
        : undefined;
    }
  }
  return undefined;
}

/** `i` at `{`. Later duplicates win, as with JSON.parse. */
function scanObject(text: string, i: number, into: RawMembers): number {
  i = skipWhitespace(text, i + 1);
  if (text.charCodeAt(i) === CLOSE_BRACE) return i + 1;
  for (;;) {
    const keyEnd = stringEnd(text, i);
    const name = memberName(text, i, keyEnd);
    // skip whitespace, the colon, whitespace
    const valueStart = skipWhitespace(text, skipWhitespace(text, keyEnd) + 1);
    const end = valueEnd(text, valueStart);
    if (name !== undefined) into[name] = text.slice(valueStart, end);
    i = skipWhitespace(text, end);
    if (text.charCodeAt(i) === CLOSE_BRACE) return i + 1;
    i = skipWhitespace(text, i + 1);
  }
}

/** Raw members of a top-level object. */
export function scanRawMembers(text: string): RawMembers {
  const members: RawMembers = {};
  const i = skipWhitespace(text, 0);
  if (text.charCodeAt(i) === OPEN_BRACE) scanObject(text, i, members);
  return members;
}

/** Raw members of each element of a top-level array; undefined for elements that are not objects. */
export function scanRawMembersOfElements(text: string): Array<RawMembers | undefined> {
  const out: Array<RawMembers | undefined> = [];
  let i = skipWhitespace(text, 0);
  if (text.charCodeAt(i) !== OPEN_BRACKET) return out;
  i = skipWhitespace(text, i + 1);
  if (text.charCodeAt(i) === CLOSE_BRACKET) return out;
  for (;;) {
    if (text.charCodeAt(i) === OPEN_BRACE) {
      const members: RawMembers = {};
      i = scanObject(text, i, members);
      out.push(members);
    } else {
      i = valueEnd(text, i);
      out.push(undefined);
    }
    i = skipWhitespace(text, i);
    if (text.charCodeAt(i) === CLOSE_BRACKET) return out;
    i = skipWhitespace(text, i + 1);
  }
}

/**
 * What the checks of parsed params cannot see and a node would refuse the call for:
 * - `duplicate_key`: a key twice in one object, decoded as JSON.parse reads it ("a" and
 *   "\u0061" are one key). JSON.parse keeps the last of duplicates while the raw text keeps
 *   both, so a check of the parsed value and a relay of the raw text would see different
 *   requests.
 * - `too_deep`: containers nested deeper than `maxDepth` (the params array itself is level 1).
 *   Nodes refuse deep nesting (serde-based ones at 128 levels of the whole request) with an
 *   answer under no id, which the gateway must not take for a node fault (QA: three such calls
 *   opened every node's breaker).
 * Precondition: JSON.parse accepted `text`. One pass with an explicit stack (no recursion), and
 * none for text without an object whose arrays cannot be that deep.
 */
export type ParamsShapeIssue =
  { kind: 'duplicate_key'; key: string } | { kind: 'too_deep'; maxDepth: number };

export function paramsShapeIssue(text: string, maxDepth: number): ParamsShapeIssue | undefined {
  if (text.indexOf('{') === -1 && bracketsAtMost(text, maxDepth)) return undefined;
  // One entry per open container: the keys of an object, undefined for an array.
  const stack: Array<Set<string> | undefined> = [];
  const length = text.length;
  let i = 0;
  while (i < length) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      const keys = stack.length === 0 ? undefined : stack[stack.length - 1];
      if (keys !== undefined && text.charCodeAt(skipWhitespace(text, end)) === COLON) {
        const slash = text.indexOf('\\', i + 1);
        const key =
          slash !== -1 && slash < end
            ? (JSON.parse(text.slice(i, end)) as string)
            : text.slice(i + 1, end - 1);
        if (keys.has(key)) return { kind: 'duplicate_key', key };
        keys.add(key);
      }
      i = end;
      continue;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (stack.length === maxDepth) return { kind: 'too_deep', maxDepth };
      stack.push(c === OPEN_BRACE ? new Set() : undefined);
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) stack.pop();
    i++;
  }
  return undefined;
}

/** At most `max` '[' in `text` (strings included: an upper bound of the arrays' depth). */
function bracketsAtMost(text: string, max: number): boolean {
  let count = 0;
  for (let at = text.indexOf('['); at !== -1; at = text.indexOf('[', at + 1))
    if (++count > max) return false;
  return true;
}
