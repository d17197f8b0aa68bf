import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

export async function readJson<T>(root: string, ...parts: string[]): Promise<T> {
  return JSON.parse(await readFile(join(root, ...parts), 'utf8')) as T;
}

/** Minimal RFC 4180 reader (quoted fields may hold commas, quotes and newlines); first row is the header. */
export async function readCsv(
  root: string,
  ...parts: string[]
): Promise<Array<Record<string, string>>> {
  const text = await readFile(join(root, ...parts), 'utf8');
  const rows = parseCsv(text);
  const header = rows.shift() ?? [];
  return rows
    .filter((row) => row.length > 1 || row[0] !== '')
    .map((row) => Object.fromEntries(header.map((name, i) => [name, row[i] ?? ''])));
}

export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i += 1;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i += 1;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += ch;
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

const EVM = /^0x[0-9a-fA-F]{40}$/;
export const isEvmAddress = (value: string): boolean => EVM.test(value.trim());
export const evmKey = (value: string): string => value.trim().toLowerCase();
