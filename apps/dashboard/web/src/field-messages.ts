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
  const located = /^(?:body|query|params)(?:[.[][^:]*)?: (.*)$/s.exec(message);
  const rest = located ? located[1]! : message;
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
  return { text: message };
}
