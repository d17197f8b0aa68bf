/**
 * A field message in words. The APIs validate with zod and pass its wording on, located
 * (`body.confirm_depth: Too big: expected number to be <=96`); under the field the location says
 * nothing and the comparison reads like code, so those are said plainly ("must be at most 96").
 * Any other message (the APIs' own, written for people) is left as it is.
 */
const BOUND: Record<string, string> = {
  '<=': 'at most',
  '<': 'less than',
  '>=': 'at least',
  '>': 'more than',
};

const UNIT: Record<string, [string, string]> = {
  string: ['character', 'characters'],
  array: ['item', 'items'],
  set: ['item', 'items'],
};

/**
 * The APIs' own messages that name their request fields in code (`filters`, `list_refs`): said
 * as the form says them. Matched on the message after its location.
 */
const JARGON: Array<[RegExp, string]> = [
  [
    /^give `filters`, `addresses` or `list_refs`$/,
    'enter at least one address, or pick an address list',
  ],
  [/needs a `tx_hash` leaf$/, 'enter at least one transaction hash to watch'],
];

/** A location before the message (`filters: …`, `filters.tx_hash.in[1]: …`, `q: …`). */
const LOCATION =
  /^(?:(?:body|query|params)(?:[.[][^:]*)?|[a-z][a-z0-9_]*(?:\.[a-z0-9_]+|\[\d+\])*): (.*)$/s;

export function plainFieldMessage(message: string): string {
  // zod may report several issues of one value (`body.cu: Too big: expected int to be <=…;
  // body.cu: Too big: expected number to be <=…`): each said plainly, the tightest bound kept.
  const parts = message.split(/; (?=(?:body|query|params)[.[:])/).map(plainIssue);
  if (parts.length === 1) return parts[0]!.text;
  const tightest = (upper: boolean) =>
    parts
      .filter((p) => p.bound?.upper === upper)
      .sort((a, b) => (upper ? a.bound!.n - b.bound!.n : b.bound!.n - a.bound!.n))[0];
  const kept = parts.filter((p) => !p.bound || p === tightest(p.bound.upper));
  return [...new Set(kept.map((p) => p.text))].join('; ');
}

function plainIssue(message: string): { text: string; bound?: { upper: boolean; n: number } } {
  // Under its field a location says nothing: it is left out.
  const located = LOCATION.exec(message);
  const rest = located ? located[1]! : message;
  for (const [pattern, words] of JARGON) if (pattern.test(rest)) return { text: words };
  const size =
    /^Too (?:big|small): expected (\w+) to (?:be|have) (<=|<|>=|>)(-?[\d.]+)(?: \w+)?$/.exec(rest);
  if (size) {
    const [, kind, op, limit] = size;
    const n = Number(limit);
    const unit = UNIT[kind!]?.[n === 1 ? 0 : 1];
    return {
      text: `must be ${BOUND[op!]} ${n.toLocaleString('en-US')}${unit ? ` ${unit}` : ''}`,
      bound: { upper: op!.startsWith('<'), n },
    };
  }
  const type = /^Invalid input: expected (\w+), received \w+$/.exec(rest);
  if (type) return { text: `must be ${type[1] === 'int' ? 'a whole number' : `a ${type[1]}`}` };
  return { text: rest };
}
