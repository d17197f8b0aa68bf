import { readdirSync, readFileSync } from 'node:fs';
import { processTree } from '../gateway/index';

/**
 * What a soak watches of the processes under test, from /proc (Linux): the VmRSS of every
 * process of the app's tree (a gateway's primary and its workers) summed, and the open file
 * descriptors (entries of /proc/<pid>/fd) summed, every SAMPLE_MS.
 */
export const SAMPLE_MS = 10_000;

export interface ProcSample {
  /** Seconds since the soak started. */
  atS: number;
  rssMiB: number;
  fds: number;
  processes: number;
}

function rssKiB(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

function fdCount(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return 0;
  }
}

/** RSS and fds of the trees rooted at `roots` (each root and its descendants), now. */
export function sampleTrees(roots: number[], atS: number): ProcSample {
  const pids = roots.flatMap(processTree);
  return {
    atS,
    rssMiB: pids.reduce((sum, pid) => sum + rssKiB(pid), 0) / 1024,
    fds: pids.reduce((sum, pid) => sum + fdCount(pid), 0),
    processes: pids.length,
  };
}

/**
 * Samples the trees at start, every SAMPLE_MS, and once more at stop; or, started with
 * `periodic` false, only when its owner calls `take` (the gateway soak samples inside its load
 * windows only: between two windows the generator's connections are closed).
 */
export class Sampler {
  readonly samples: ProcSample[] = [];
  private timer: NodeJS.Timeout | undefined;
  private startedAt = 0;

  constructor(private readonly roots: number[]) {}

  start(periodic = true): void {
    this.startedAt = performance.now();
    this.take();
    if (periodic) this.timer = setInterval(() => this.take(), SAMPLE_MS);
  }

  /** Seconds since start. */
  elapsedS(): number {
    return (performance.now() - this.startedAt) / 1000;
  }

  stop(): ProcSample[] {
    if (this.timer === undefined) return this.samples;
    clearInterval(this.timer);
    this.take();
    return this.samples;
  }

  /** The sample taken closest to `atS` seconds into the soak. */
  at(atS: number): ProcSample {
    return this.samples.reduce((best, s) =>
      Math.abs(s.atS - atS) < Math.abs(best.atS - atS) ? s : best,
    );
  }

  take(): void {
    this.samples.push(sampleTrees(this.roots, this.elapsedS()));
  }
}

export interface Flatness {
  /** Sample the end is compared with: after the first minute (half-way in shorter soaks). */
  baseline: ProcSample;
  start: ProcSample;
  middle: ProcSample;
  end: ProcSample;
  maxRssMiB: number;
  maxFds: number;
  /** RSS at the end against the baseline (reported; the verdict reads the envelope below). */
  rssGrowth: number;
  /** Highest RSS of the second half against the highest of the first (after the baseline). */
  rssEnvelopeGrowth: number;
  fdGrowth: number;
  flat: boolean;
}

/**
 * Flat = the upper envelope of RSS does not rise (the highest sample of the soak's second half
 * at most 10 % above the highest of its first half, the first minute left out) and fds end at
 * most 16 above the sample after the first minute. The envelope, not the last sample: a
 * collector that lets the heap swing before a full collection (the gateway's, ADR 0206) ends a
 * soak anywhere on a swing, while a soak covering two swings shows the same peak in both halves
 * unless something leaks; a steady process has the two maxima of a flat line.
 */
export const RSS_TOLERANCE = 0.1;
export const FD_TOLERANCE = 16;

export function flatness(sampler: Sampler): Flatness {
  const { samples } = sampler;
  const end = samples.at(-1)!;
  const baseline = sampler.at(Math.min(60, end.atS / 2));
  const half = (baseline.atS + end.atS) / 2;
  const maxOf = (from: number, to: number) =>
    Math.max(...samples.filter((s) => s.atS >= from && s.atS <= to).map((s) => s.rssMiB), 0);
  const firstHalfMax = maxOf(baseline.atS, half);
  const rssEnvelopeGrowth = maxOf(half, end.atS) / (firstHalfMax || baseline.rssMiB) - 1;
  const fdGrowth = end.fds - baseline.fds;
  return {
    baseline,
    start: samples[0]!,
    middle: sampler.at(end.atS / 2),
    end,
    maxRssMiB: Math.max(...samples.map((s) => s.rssMiB)),
    maxFds: Math.max(...samples.map((s) => s.fds)),
    rssGrowth: end.rssMiB / baseline.rssMiB - 1,
    rssEnvelopeGrowth,
    fdGrowth,
    flat: rssEnvelopeGrowth <= RSS_TOLERANCE && fdGrowth <= FD_TOLERANCE,
  };
}

/** A soak's report: one row per minute, then RSS/fds at start, middle, end and max. */
export function renderSoak(options: {
  title: string;
  method: string;
  columns: string[];
  minutes: string[][];
  sampler: Sampler;
  processes: string;
  verdict: string;
}): string {
  const { sampler, columns } = options;
  const f = flatness(sampler);
  const mib = (v: number) => v.toFixed(1);
  const minuteRows = options.minutes.map((cells, i) => {
    const s = sampler.at((i + 1) * 60);
    return `| ${i + 1} | ${cells.join(' | ')} | ${mib(s.rssMiB)} | ${s.fds} |`;
  });
  const at = (s: ProcSample) => `${Math.round(s.atS)} s`;
  return [
    `**${options.title}.** ${options.method}`,
    '',
    `| minute | ${columns.join(' | ')} | RSS MiB at minute's end | fds |`,
    `|---|${columns.map(() => '---|').join('')}---|---|`,
    ...minuteRows,
    '',
    `| ${options.processes}, sampled every ${SAMPLE_MS / 1000} s | start (${at(f.start)}) | after 1 min (${at(f.baseline)}) | middle (${at(f.middle)}) | end (${at(f.end)}) | max |`,
    '|---|---|---|---|---|---|',
    `| RSS MiB (VmRSS, summed) | ${mib(f.start.rssMiB)} | ${mib(f.baseline.rssMiB)} | ${mib(f.middle.rssMiB)} | ${mib(f.end.rssMiB)} | ${mib(f.maxRssMiB)} |`,
    `| open fds (summed) | ${f.start.fds} | ${f.baseline.fds} | ${f.middle.fds} | ${f.end.fds} | ${f.maxFds} |`,
    '',
    options.verdict,
  ].join('\n');
}

/** "RSS and fds flat (RSS peak of the second half +x % vs the first, ≤ +10 %; …)", every verdict's first part. */
export function flatnessText(f: Flatness): string {
  const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;
  return `RSS and fds **${f.flat ? 'flat' : 'NOT flat'}** (highest RSS of the second half ${pct(f.rssEnvelopeGrowth)} against the first half's, ≤ +${RSS_TOLERANCE * 100} %; RSS at the end ${pct(f.rssGrowth)} against after the first minute; fds ${f.fdGrowth >= 0 ? '+' : ''}${f.fdGrowth}, ≤ +${FD_TOLERANCE})`;
}

export const quantile = (values: number[], q: number): number => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};
