package dev.scorewire.client;

import dev.scorewire.v1.CaseResult;
import dev.scorewire.v1.RunSummary;
import java.util.List;

/**
 * A batch run as chunks ({@link ScorewireClient#runSuiteSharded}): every case's result
 * once, the merged summary, and the ids of the runs the server recorded.
 *
 * @param results one result per case, chunk by chunk in completion order; {@code index} is
 *     the case's position in the request's cases
 * @param summary the chunks' summaries merged ({@link Summaries#merge}): a single chunk's
 *     is the server's summary unchanged (its gate verdict, generation cost, matrix and
 *     {@code run_id}); several chunks' are added up, generation fields and matrix cells
 *     included, the gate judged again on the merged totals and {@code run_id} left empty
 *     (each chunk was recorded as a run of its own; see {@code runIds})
 * @param retries chunk attempts that failed and were sent again
 * @param runIds with {@code record(true)}, the run id of each chunk's recorded run (its
 *     summary's non-empty {@code run_id}), in the order of the chunks' cases in the request
 *     (not completion order), for {@link ScorewireClient#getRun} or {@link
 *     ScorewireClient#listRunResults}; a run of one chunk's is exactly {@code
 *     summary().getRunId()}; empty when nothing was recorded. A failed attempt that was
 *     sent again may have left a run of its own on the server, which is not listed.
 */
public record ShardedResult(List<CaseResult> results, RunSummary summary, int retries, List<String> runIds) {
  /** Copies {@code results} and {@code runIds}. */
  public ShardedResult {
    results = List.copyOf(results);
    runIds = List.copyOf(runIds);
  }
}
