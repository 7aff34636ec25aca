// `pnpm bench:pages`' figures and its report: the table of pages, the baseline and the verdict.
import type { PagesBenchConfig } from "./env";

/** Median (the mean of the middle two for an even count) and nearest-rank p95, in ms. */
export function stats(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const at = (i: number) => sorted[Math.min(n - 1, Math.max(0, i))] ?? 0;
  return {
    n,
    min: at(0),
    p50: n % 2 === 1 ? at((n - 1) / 2) : (at(n / 2 - 1) + at(n / 2)) / 2,
    p95: at(Math.ceil(n * 0.95) - 1),
    max: at(n - 1),
  };
}
export type Stats = ReturnType<typeof stats>;

export interface PagesResult {
  machine: Record<string, string | number>;
  settings: PagesBenchConfig;
  minutes: number;
  /** The instance's state when the walk began. */
  instanceState: string;
  /** The machine's 1-minute load average when the run began and ended (other work on it). */
  load: { start: number; end: number };
  /** Every baseline GET of the run. */
  baseline: { path: string; ttfb: Stats };
  pages: {
    shape: string;
    path: string;
    /** The shape of the page whose link led here, or "(start)". */
    from: string;
    /** Every status the page answered (one when all is well). */
    statuses: number[];
    bytes: number;
    ttfb: Stats;
    /** Until the last byte of the body. */
    total: Stats;
    /** The baseline GETs made right after this page's timed GETs. */
    baseline: Stats;
  }[];
  /** Starts that answered 404 (a page this build does not have yet, and no link led there). */
  absent: { path: string; status: number }[];
  /** Links that redirect: not pages, their targets are walked instead. */
  redirects: { shape: string; to: string }[];
  /** Shapes linked but not walked: the walk stopped at --max-pages. */
  notWalked: string[];
}

const ms = (value: number) => value.toFixed(1);

/** The report, and each way the target is missed (none: met). */
export function pagesMarkdown(r: PagesResult): { markdown: string; failures: string[] } {
  const { machine: m, settings: s } = r;
  const limit = s.limitMs;
  const slow = r.pages.filter((page) => page.ttfb.p50 > limit);
  const broken = r.pages.filter((page) => page.statuses.some((status) => status !== 200));
  const failures = [
    ...slow.map((page) => `${page.shape} median ${ms(page.ttfb.p50)} ms > ${limit} ms`),
    ...broken.map((page) => `${page.shape} answered ${page.statuses.join("/")}`),
    ...(r.pages.length === 0 ? ["no page was walked"] : []),
  ];
  const verdict =
    failures.length === 0
      ? `**Met**: all ${r.pages.length} pages answered 200 with a median time to first byte under ${limit} ms (the slowest: ${slowest(r)}).`
      : [
          `**Not met** (${failures.length}):`,
          "",
          ...slow.map(
            (page) =>
              `- \`${page.shape}\`: median ${ms(page.ttfb.p50)} ms, over ${limit} ms (${ratio(page)} the baseline)`,
          ),
          ...broken.map(
            (page) =>
              `- \`${page.shape}\`: answered ${page.statuses.join(", ")}, not 200 (linked from \`${page.from}\`)`,
          ),
          ...(r.pages.length === 0 ? ["- no page was walked"] : []),
        ].join("\n");
  const markdown = [
    `### ${String(m.date).slice(0, 10)} (${String(m.date).slice(11, 16)} UTC), the console's pages: time to first byte`,
    "",
    `Node ${m.node}, ${m.cpus} × ${m.cpuModel}, ${m.memory}; commit ${m.commit}; ${s.database}; instance driver ${s.instanceDriver} (the instance: ${r.instanceState}); ${s.warmup} warm-up and ${s.requests} timed GETs per page, one at a time, each followed by the baseline; ${r.minutes} min in all; load average (1 min) ${r.load.start.toFixed(1)} at the start, ${r.load.end.toFixed(1)} at the end.`,
    "",
    `Baseline: \`GET ${r.baseline.path}\` with the same session cookie (JSON), ${r.baseline.ttfb.n} GETs across the run: median ${ms(r.baseline.ttfb.p50)} ms, p95 ${ms(r.baseline.ttfb.p95)} ms.`,
    "",
    "| Page | Status | Bytes | Median ms | p95 ms | Ratio to baseline | Last byte, median ms |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ...r.pages.map(
      (page) =>
        `| \`${page.shape}\` | ${page.statuses.join(", ")} | ${page.bytes.toLocaleString("en-US")} | ${ms(page.ttfb.p50)} | ${ms(page.ttfb.p95)} | ${ratio(page)} | ${ms(page.total.p50)} |`,
    ),
    "",
    `Time to first byte: until \`fetch\` resolves (status line and headers received). Ratio: the page's median over the median of the baseline GETs made alternately with it.`,
    ...(r.absent.length > 0
      ? [
          "",
          `Not on this build (a start that answered 404, linked from no page): ${r.absent.map((a) => `\`${a.path}\``).join(", ")}.`,
        ]
      : []),
    ...(r.redirects.length > 0
      ? [
          "",
          `Links that redirect (not pages; the target is walked): ${r.redirects.map((x) => `\`${x.shape}\` → \`${x.to}\``).join(", ")}.`,
        ]
      : []),
    ...(r.notWalked.length > 0
      ? [
          "",
          `Linked but not walked (--max-pages=${s.maxPages}): ${r.notWalked.map((shape) => `\`${shape}\``).join(", ")}.`,
        ]
      : []),
    "",
    `Target: every page under ${limit} ms to first byte (median), and 200. ${verdict}`,
    "",
  ].join("\n");
  return { markdown, failures };
}

const ratio = (page: PagesResult["pages"][number]) =>
  page.baseline.p50 > 0 ? `${(page.ttfb.p50 / page.baseline.p50).toFixed(1)} ×` : "–";

function slowest(r: PagesResult): string {
  const page = [...r.pages].sort((a, b) => b.ttfb.p50 - a.ttfb.p50)[0];
  return page ? `\`${page.shape}\`, ${ms(page.ttfb.p50)} ms` : "none";
}
