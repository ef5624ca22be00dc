/**
 * Merging the RunSummaries of several shards of one batch, and the gate rule.
 *
 * A shard's summary carries counts, sums and costs (`passed`, `failed`, `errored`,
 * `skipped`, `cached`, `valueSum`, `costUsd` per check and overall; `cases`,
 * `casesPassed`; the generation spending and the checkllm matrix's cells) and the gate
 * it was judged against. The merged summary adds those and recomputes every rate from
 * the merged totals, never a mean of means, as the Go and Python clients do; one shard's
 * summary is the merged one as it is.
 */
import { Gate, MatrixCell, RunSummary } from "./gen/scorewire/v1/scoring";

/**
 * One RunSummary for the summaries of the shards of one batch (same checks in the same
 * order, same gate).
 *
 * One part is returned as it is (a copy): it is the server's own summary, its gate judged
 * by the server with the server's rule (a checkllm suite's default gate included), its
 * generation spending, matrix and runId kept.
 *
 * Several parts: counts, value sums and costs are added (generationCostUsd,
 * generationCalls and generationCached too; unpriced and generationUnpriced when any
 * part's is); every rate is recomputed from the merged totals: passRate = casesPassed /
 * cases, meanScore = valueSum / applied and errorRate = errored / applied, where applied
 * = passed + failed + errored (skipped scores are not applied); meanValue per check
 * likewise. The matrix cells merge by (prompt, provider), in the order they first appear
 * over the parts in order, their cases, casesPassed, casesErrored and generationCostUsd
 * added and passRate = casesPassed / cases. runId is empty: each chunk was recorded as a
 * run of its own. The gate is judged again on the merged totals with gateReasons.
 *
 * Throws when there is nothing to merge or the summaries are of different checks (not
 * shards of one run).
 */
export function mergeSummaries(parts: readonly RunSummary[]): RunSummary {
  const first = parts[0];
  if (first === undefined) throw new Error("scorewire: no summaries to merge");
  if (parts.length === 1) return RunSummary.fromPartial(first);
  const out = RunSummary.fromPartial({
    gate: first.gate === undefined ? undefined : Gate.fromPartial(first.gate),
    checks: first.checks.map((c) => ({ name: c.name, type: c.type })),
  });
  // A cell's key: its prompt and provider (JSON, so that no provider's name can collide).
  const cells = new Map<string, MatrixCell>();
  for (const p of parts) {
    if (!sameChecks(first, p)) {
      throw new Error("scorewire: the summaries are of different checks: not shards of one run");
    }
    addSummary(out, p);
    for (const m of p.matrix) {
      const key = JSON.stringify([m.prompt, m.provider]);
      let cell = cells.get(key);
      if (cell === undefined) {
        cell = MatrixCell.fromPartial({ prompt: m.prompt, provider: m.provider });
        cells.set(key, cell);
        out.matrix.push(cell);
      }
      cell.cases += m.cases;
      cell.casesPassed += m.casesPassed;
      cell.casesErrored += m.casesErrored;
      cell.generationCostUsd += m.generationCostUsd;
    }
  }
  for (const cell of out.matrix) cell.passRate = ratio(cell.casesPassed, cell.cases);
  const applied = out.passed + out.failed + out.errored;
  out.passRate = ratio(out.casesPassed, out.cases);
  out.meanScore = ratio(out.valueSum, applied);
  out.errorRate = ratio(out.errored, applied);
  for (const c of out.checks) c.meanValue = ratio(c.valueSum, c.passed + c.failed + c.errored);
  out.gateReasons = gateReasons(out.gate, out);
  out.gatePassed = out.gateReasons.length === 0;
  return out;
}

/**
 * Why `summary` fails `gate`, one sentence per unmet threshold (none: it passes). It is
 * the server's rule, sentence for sentence (its numbers formatted as Python's `.4g`,
 * `g` and `.4f` format them), and the one place of this client where a gate is judged:
 * a run with no cases meets no min* threshold; maxErrorRate always applies (0 unless
 * set).
 */
export function gateReasons(gate: Gate | undefined, summary: RunSummary): string[] {
  const reasons: string[] = [];
  const empty = summary.cases === 0;
  const { minPassRate, minMeanScore, maxCostUsd } = gate ?? {};
  const maxErrorRate = gate?.maxErrorRate ?? 0;
  if (minPassRate !== undefined && (empty || summary.passRate < minPassRate)) {
    reasons.push(`pass rate ${formatG(summary.passRate, 4)} is below min_pass_rate ${formatG(minPassRate)}`);
  }
  if (minMeanScore !== undefined && (empty || summary.meanScore < minMeanScore)) {
    reasons.push(`mean score ${formatG(summary.meanScore, 4)} is below min_mean_score ${formatG(minMeanScore)}`);
  }
  if (summary.errorRate > maxErrorRate) {
    reasons.push(`error rate ${formatG(summary.errorRate, 4)} is above max_error_rate ${formatG(maxErrorRate)}`);
  }
  if (maxCostUsd !== undefined && summary.costUsd > maxCostUsd) {
    reasons.push(`cost $${formatFixed(summary.costUsd, 4)} is above max_cost $${formatG(maxCostUsd)}`);
  }
  return reasons;
}

function sameChecks(a: RunSummary, b: RunSummary): boolean {
  return (
    a.checks.length === b.checks.length &&
    a.checks.every((c, i) => c.name === b.checks[i]!.name && c.type === b.checks[i]!.type)
  );
}

function addSummary(out: RunSummary, p: RunSummary): void {
  out.cases += p.cases;
  out.casesPassed += p.casesPassed;
  out.passed += p.passed;
  out.failed += p.failed;
  out.errored += p.errored;
  out.skipped += p.skipped;
  out.valueSum += p.valueSum;
  out.costUsd += p.costUsd;
  out.unpriced = out.unpriced || p.unpriced;
  out.generationCostUsd += p.generationCostUsd;
  out.generationCalls += p.generationCalls;
  out.generationCached += p.generationCached;
  out.generationUnpriced = out.generationUnpriced || p.generationUnpriced;
  p.checks.forEach((c, i) => {
    const t = out.checks[i]!;
    t.passed += c.passed;
    t.failed += c.failed;
    t.errored += c.errored;
    t.skipped += c.skipped;
    t.cached += c.cached;
    t.valueSum += c.valueSum;
    t.costUsd += c.costUsd;
  });
}

function ratio(num: number, den: number): number {
  return den === 0 ? 0 : num / den;
}

// Python's float formatting, which the server's gate reasons use. JavaScript's
// toPrecision and toFixed round an exact tie up (0.28125 -> "0.2813") where Python
// rounds it to even ("0.2812"), and print exponents and trailing zeros otherwise, so
// these round the double's exact decimal value themselves.

/** `x` as Python's `format(x, ".{precision}g")`; precision 6 is Python's plain `g`. */
export function formatG(x: number, precision = 6): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf";
  const sign = x < 0 || Object.is(x, -0) ? "-" : "";
  if (x === 0) return `${sign}0`;
  const exact = exactDecimal(Math.abs(x));
  // The exponent of the first significant digit, then of the value rounded to `precision` digits.
  let exponent = exact.digits.length - exact.scale - 1;
  const rounded = roundAt(exact, precision - 1 - exponent).toString();
  if (rounded.length > precision) exponent += 1;
  if (exponent >= -4 && exponent < precision) {
    return sign + stripZeros(formatFixed(Math.abs(x), precision - 1 - exponent));
  }
  const mantissa = stripZeros(`${rounded[0]}.${rounded.slice(1, precision)}`);
  const e = Math.abs(exponent).toString().padStart(2, "0");
  return `${sign}${mantissa}e${exponent < 0 ? "-" : "+"}${e}`;
}

/** `x` as Python's `format(x, ".{digits}f")`. */
export function formatFixed(x: number, digits: number): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf";
  const sign = x < 0 || Object.is(x, -0) ? "-" : "";
  const n = roundAt(exactDecimal(Math.abs(x)), digits).toString().padStart(digits + 1, "0");
  return digits === 0 ? sign + n : `${sign}${n.slice(0, -digits)}.${n.slice(-digits)}`;
}

/** The exact value of a finite non-negative double: BigInt(digits) / 10 ** scale. */
function exactDecimal(x: number): { digits: string; scale: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const biased = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  // x = mantissa * 2 ** power exactly (subnormals have no implicit leading bit).
  const mantissa = biased === 0 ? fraction : fraction | (1n << 52n);
  const power = (biased === 0 ? 1 : biased) - 1075;
  if (power >= 0) return { digits: (mantissa << BigInt(power)).toString(), scale: 0 };
  // m / 2**k = m * 5**k / 10**k.
  return { digits: (mantissa * 5n ** BigInt(-power)).toString(), scale: -power };
}

/** The value rounded half to even to `digits` decimals (negative: to tens, hundreds...), times 10 ** digits. */
function roundAt(value: { digits: string; scale: number }, digits: number): bigint {
  const n = BigInt(value.digits);
  if (digits >= value.scale) return n * 10n ** BigInt(digits - value.scale);
  const divisor = 10n ** BigInt(value.scale - digits);
  const quotient = n / divisor;
  const twice = 2n * (n % divisor);
  return twice > divisor || (twice === divisor && quotient % 2n === 1n) ? quotient + 1n : quotient;
}

/** Drops a fraction's trailing zeros, and its point when nothing is left after it. */
function stripZeros(s: string): string {
  return s.includes(".") ? s.replace(/0+$/, "").replace(/\.$/, "") : s;
}
