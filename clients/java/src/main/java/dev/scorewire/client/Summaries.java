package dev.scorewire.client;

import dev.scorewire.v1.CheckSummary;
import dev.scorewire.v1.Gate;
import dev.scorewire.v1.MatrixCell;
import dev.scorewire.v1.RunSummary;
import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Merging the RunSummaries of the shards of one batch, and the gate rule: the Go client's
 * {@code MergeSummaries} and {@code GateReasons}, and the Python client's {@code
 * _summary}.
 */
public final class Summaries {
  private Summaries() {}

  /**
   * One RunSummary for the summaries of the shards of one batch (same checks in the same
   * order, same gate).
   *
   * <p>One part is returned unchanged: it is the server's own summary, its gate judged by
   * the server with the server's rule (a checkllm suite's default gate among them, which
   * {@link #gateReasons} would not reproduce), with its generation fields, matrix and
   * {@code run_id} (the recorded run's id) as the server reported them.
   *
   * <p>Several parts: counts, value sums and costs are added, {@code generation_cost_usd},
   * {@code generation_calls} and {@code generation_cached} too; {@code unpriced} and
   * {@code generation_unpriced} are set when any part's is. Every rate is recomputed from
   * the merged totals, never a mean of means: pass_rate = cases_passed / cases, mean_score
   * = value_sum / applied and error_rate = errored / applied, where applied = passed +
   * failed + errored (skipped scores are not applied); mean_value per check likewise. The
   * {@code matrix} cells merge by (prompt, provider), in the order each first appears over
   * the parts in order, their cases, cases_passed, cases_errored and generation_cost_usd
   * added and pass_rate = cases_passed / cases (0 when no cases). The gate is judged again
   * on the merged totals with {@link #gateReasons}. {@code run_id} is left empty: each
   * part was recorded (if at all) as a run of its own.
   *
   * @throws IllegalArgumentException when there are no parts, or they are of different
   *     checks (not shards of one run)
   */
  public static RunSummary merge(List<RunSummary> parts) {
    if (parts.isEmpty()) {
      throw new IllegalArgumentException("no summaries to merge");
    }
    RunSummary first = parts.get(0);
    if (parts.size() == 1) {
      return first;
    }
    RunSummary.Builder out = RunSummary.newBuilder();
    if (first.hasGate()) {
      out.setGate(first.getGate());
    }
    for (CheckSummary c : first.getChecksList()) {
      out.addChecks(CheckSummary.newBuilder().setName(c.getName()).setType(c.getType()));
    }
    for (RunSummary p : parts) {
      if (!sameChecks(first, p)) {
        throw new IllegalArgumentException("the summaries are of different checks: not shards of one run");
      }
      add(out, p);
    }
    out.addAllMatrix(mergeMatrix(parts));
    long applied = out.getPassed() + out.getFailed() + out.getErrored();
    out.setPassRate(ratio(out.getCasesPassed(), out.getCases()));
    out.setMeanScore(ratio(out.getValueSum(), applied));
    out.setErrorRate(ratio(out.getErrored(), applied));
    for (CheckSummary.Builder c : out.getChecksBuilderList()) {
      c.setMeanValue(ratio(c.getValueSum(), c.getPassed() + c.getFailed() + c.getErrored()));
    }
    List<String> reasons = gateReasons(out.getGate(), out.build());
    return out.addAllGateReasons(reasons).setGatePassed(reasons.isEmpty()).build();
  }

  /**
   * Why {@code s} fails {@code gate}, one sentence per unmet threshold (none: it passes).
   * It is the server's rule, sentence for sentence (numbers formatted as Python's {@code
   * .4g}, {@code g} and {@code .4f} do), and the one place of this client where a gate is
   * judged: a run with no cases meets no min_* threshold; max_error_rate always applies
   * (0 unless set).
   */
  public static List<String> gateReasons(Gate gate, RunSummary s) {
    List<String> reasons = new ArrayList<>();
    boolean empty = s.getCases() == 0;
    if (gate.hasMinPassRate() && (empty || s.getPassRate() < gate.getMinPassRate())) {
      reasons.add("pass rate " + g(s.getPassRate(), 4) + " is below min_pass_rate " + g(gate.getMinPassRate(), 6));
    }
    if (gate.hasMinMeanScore() && (empty || s.getMeanScore() < gate.getMinMeanScore())) {
      reasons.add("mean score " + g(s.getMeanScore(), 4) + " is below min_mean_score " + g(gate.getMinMeanScore(), 6));
    }
    if (s.getErrorRate() > gate.getMaxErrorRate()) {
      reasons.add("error rate " + g(s.getErrorRate(), 4) + " is above max_error_rate " + g(gate.getMaxErrorRate(), 6));
    }
    if (gate.hasMaxCostUsd() && s.getCostUsd() > gate.getMaxCostUsd()) {
      String cost = new BigDecimal(s.getCostUsd()).setScale(4, RoundingMode.HALF_EVEN).toPlainString();
      reasons.add("cost $" + cost + " is above max_cost $" + g(gate.getMaxCostUsd(), 6));
    }
    return reasons;
  }

  /**
   * {@code x} as Python formats it with {@code .{digits}g} ({@code g} is {@code .6g}):
   * rounded to that many significant digits of its exact binary value, fixed-point when
   * the exponent is from -4 to digits - 1 and {@code 1.5e-05} otherwise, trailing zeros
   * dropped. Java's {@code %g} keeps the zeros and switches notation elsewhere.
   */
  static String g(double x, int digits) {
    if (Double.isNaN(x) || Double.isInfinite(x)) {
      return Double.isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf";
    }
    if (x == 0) {
      return 1 / x < 0 ? "-0" : "0";
    }
    BigDecimal r = new BigDecimal(x).round(new MathContext(digits, RoundingMode.HALF_EVEN));
    int exp = r.precision() - r.scale() - 1;
    if (exp >= -4 && exp < digits) {
      return strip(r.setScale(Math.max(digits - 1 - exp, 0), RoundingMode.UNNECESSARY).toPlainString());
    }
    String mantissa = strip(r.movePointLeft(exp).toPlainString());
    return mantissa + (exp < 0 ? "e-" : "e+") + (Math.abs(exp) < 10 ? "0" : "") + Math.abs(exp);
  }

  private static String strip(String digits) {
    if (!digits.contains(".")) {
      return digits;
    }
    String s = digits.replaceAll("0+$", "");
    return s.endsWith(".") ? s.substring(0, s.length() - 1) : s;
  }

  private static boolean sameChecks(RunSummary a, RunSummary b) {
    if (a.getChecksCount() != b.getChecksCount()) {
      return false;
    }
    for (int i = 0; i < a.getChecksCount(); i++) {
      CheckSummary c = a.getChecks(i);
      CheckSummary d = b.getChecks(i);
      if (!c.getName().equals(d.getName()) || !c.getType().equals(d.getType())) {
        return false;
      }
    }
    return true;
  }

  private static void add(RunSummary.Builder out, RunSummary p) {
    out.setCases(out.getCases() + p.getCases())
        .setCasesPassed(out.getCasesPassed() + p.getCasesPassed())
        .setPassed(out.getPassed() + p.getPassed())
        .setFailed(out.getFailed() + p.getFailed())
        .setErrored(out.getErrored() + p.getErrored())
        .setSkipped(out.getSkipped() + p.getSkipped())
        .setValueSum(out.getValueSum() + p.getValueSum())
        .setCostUsd(out.getCostUsd() + p.getCostUsd())
        .setUnpriced(out.getUnpriced() || p.getUnpriced())
        .setGenerationCostUsd(out.getGenerationCostUsd() + p.getGenerationCostUsd())
        .setGenerationCalls(out.getGenerationCalls() + p.getGenerationCalls())
        .setGenerationCached(out.getGenerationCached() + p.getGenerationCached())
        .setGenerationUnpriced(out.getGenerationUnpriced() || p.getGenerationUnpriced());
    for (int i = 0; i < p.getChecksCount(); i++) {
      CheckSummary c = p.getChecks(i);
      CheckSummary.Builder t = out.getChecksBuilder(i);
      t.setPassed(t.getPassed() + c.getPassed())
          .setFailed(t.getFailed() + c.getFailed())
          .setErrored(t.getErrored() + c.getErrored())
          .setSkipped(t.getSkipped() + c.getSkipped())
          .setCached(t.getCached() + c.getCached())
          .setValueSum(t.getValueSum() + c.getValueSum())
          .setCostUsd(t.getCostUsd() + c.getCostUsd());
    }
  }

  private record CellKey(int prompt, String provider) {}

  /** The parts' matrix cells merged by (prompt, provider), in order of first appearance. */
  private static List<MatrixCell> mergeMatrix(List<RunSummary> parts) {
    Map<CellKey, MatrixCell.Builder> cells = new LinkedHashMap<>();
    for (RunSummary p : parts) {
      for (MatrixCell c : p.getMatrixList()) {
        MatrixCell.Builder t =
            cells.computeIfAbsent(
                new CellKey(c.getPrompt(), c.getProvider()),
                k -> MatrixCell.newBuilder().setPrompt(k.prompt()).setProvider(k.provider()));
        t.setCases(t.getCases() + c.getCases())
            .setCasesPassed(t.getCasesPassed() + c.getCasesPassed())
            .setCasesErrored(t.getCasesErrored() + c.getCasesErrored())
            .setGenerationCostUsd(t.getGenerationCostUsd() + c.getGenerationCostUsd());
      }
    }
    List<MatrixCell> out = new ArrayList<>(cells.size());
    for (MatrixCell.Builder c : cells.values()) {
      out.add(c.setPassRate(ratio(c.getCasesPassed(), c.getCases())).build());
    }
    return out;
  }

  private static double ratio(double num, long den) {
    return den == 0 ? 0 : num / den;
  }
}
