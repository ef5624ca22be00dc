package dev.scorewire.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.scorewire.v1.Case;
import dev.scorewire.v1.CheckAggregations;
import dev.scorewire.v1.Job;
import dev.scorewire.v1.JobConfig;
import dev.scorewire.v1.JobState;
import dev.scorewire.v1.ListJobsRequest;
import dev.scorewire.v1.ListJobsResponse;
import dev.scorewire.v1.Run;
import dev.scorewire.v1.Sample;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.Test;

/**
 * The Java client's evaluation-job calls, blocking and asynchronous, against a real server.
 * Each test names its jobs uniquely; waits carry a deadline, so a job that never ends fails
 * the test instead of hanging it.
 */
class JobsTest extends LiveServerTest {
  private static final Duration WAIT = Duration.ofMinutes(1);
  /** A job still open when it is cancelled right after it is created: seconds of scoring, one round trip. */
  private static final int LONG_CASES = 50_000;

  /** {@code n} cases s0..; every fourth output (index divisible by 4) lacks "Paris". */
  private static List<Case> cases(int n) {
    List<Case> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      String text = i % 4 == 0 ? "Lyon" : "Paris " + i;
      out.add(Case.newBuilder().setSample(Sample.newBuilder().setId("s" + i)).setOutput(Values.text(text)).build());
    }
    return out;
  }

  private static List<Case> paris(int n) {
    return Collections.nCopies(n, Case.newBuilder().setOutput(Values.text("Paris")).build());
  }

  private static String unique(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().substring(0, 12);
  }

  private static JobConfig compact(String... lines) {
    return JobConfig.newBuilder().addAllCompact(List.of(lines)).build();
  }

  private static List<Job> all(Iterable<Job> jobs) {
    return StreamSupport.stream(jobs.spliterator(), false).toList();
  }

  private static void assertRefused(ScorewireException e, Status.Code code, String field) {
    assertEquals(code, e.code(), e.getMessage());
    assertTrue(
        e.fieldViolations().stream().anyMatch(v -> v.field().equals(field)),
        field + " not among " + e.fieldViolations());
  }

  @Test
  void cutsCasesIntoMessagesOfAtMost500CasesAnd4MiB() {
    // 1201 small cases go 500 + 500 + 201; cases of 1.5 MiB two a message, one of 5 MiB alone
    assertEquals(List.of(500, 500, 201), JobCalls.chunks(cases(1201)).stream().map(List::size).toList());
    int mib = 1024 * 1024;
    List<Case> big = new ArrayList<>();
    String a = "a".repeat(3 * mib / 2);
    for (String s : List.of(a, a, a, "b".repeat(5 * mib), "c")) {
      big.add(Case.newBuilder().setOutput(Values.text(s)).build());
    }
    List<List<Case>> chunks = JobCalls.chunks(big);
    assertEquals(List.of(2, 1, 1, 1), chunks.stream().map(List::size).toList());
    StringBuilder order = new StringBuilder();
    chunks.forEach(chunk -> chunk.forEach(c -> order.append(c.getOutput().getText().charAt(0))));
    assertEquals("aaabc", order.toString());
  }

  @Test
  void aJobIsWatchedToSuccessWithAggregationsAndItsRun() {
    // 600 cases: two messages; progress only grows; the end has the aggregations
    String name = unique("java-job");
    JobConfig config =
        JobConfig.newBuilder()
            .addChecks(Values.check("contains", Map.of("needles", List.of("Paris"))).toBuilder().setName("has_paris"))
            .addCompact("length:1..20")
            .setName(name)
            .putLabels("team", "qa")
            .build();
    Job job = client.createJob(config, cases(600));
    assertEquals(JobState.JOB_STATE_QUEUED, job.getState());
    assertEquals(600, job.getCasesTotal());
    assertEquals(name, job.getName());
    List<Job> seen = new ArrayList<>();
    try (JobWatch watch = client.watchJob(job.getJobId(), WAIT)) {
      watch.forEach(seen::add);
    }
    for (int i = 1; i < seen.size(); i++) {
      assertTrue(seen.get(i).getCasesDone() >= seen.get(i - 1).getCasesDone(), "progress went back: " + seen);
      assertTrue(seen.get(i).getStateValue() >= seen.get(i - 1).getStateValue(), "state went back: " + seen);
    }
    Job end = seen.get(seen.size() - 1);
    assertEquals(JobState.JOB_STATE_SUCCEEDED, end.getState());
    assertEquals(600, end.getCasesDone());
    assertEquals(
        List.of("has_paris", "length:1..20"),
        end.getAggregationsList().stream().map(CheckAggregations::getName).toList());
    CheckAggregations hasParis = end.getAggregations(0);
    assertEquals(600, hasParis.getCount());
    assertEquals(0.75, hasParis.getAverage());
    assertEquals(1.0, hasParis.getMedian());
    assertEquals(450, end.getSummary().getCasesPassed());
    Run run = client.getRun(end.getRunId());
    assertEquals(name, run.getName());
    assertEquals("qa", run.getLabelsMap().get("team"));
    assertEquals(600, run.getResults());
    // waiting on a job that has ended answers at once, with the same job
    assertEquals(client.getJob(job.getJobId()), client.waitJob(job.getJobId(), WAIT));
  }

  @Test
  void aLongJobIsCancelledAndCancellingItAgainIsRefused() {
    Job job = client.createJob(compact("contains:Paris"), paris(LONG_CASES));
    assertEquals(JobState.JOB_STATE_CANCELLED, client.cancelJob(job.getJobId()).getState());
    Job end = client.waitJob(job.getJobId(), WAIT);
    assertEquals(JobState.JOB_STATE_CANCELLED, end.getState());
    assertTrue(end.getCasesDone() < LONG_CASES, end.getCasesDone() + " cases done");
    ScorewireException e = assertThrows(ScorewireException.class, () -> client.cancelJob(job.getJobId()));
    assertRefused(e, Status.Code.FAILED_PRECONDITION, "job_id");
  }

  @Test
  void jobsAreListedNewestFirstPageByPageAndByState() {
    // page size 1: three jobs can only be found over three pages or more
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      ids.add(client.createJob(compact("contains:Paris"), cases(2)).getJobId());
    }
    List<String> found = new ArrayList<>();
    for (Job job : client.listJobs(ListJobsRequest.newBuilder().setPageSize(1).build())) {
      if (ids.contains(job.getJobId())) {
        found.add(job.getJobId());
      }
      if (found.size() == ids.size()) {
        break;
      }
    }
    List<String> newestFirst = new ArrayList<>(ids);
    Collections.reverse(newestFirst);
    assertEquals(newestFirst, found);
    for (String id : ids) {
      client.waitJob(id, WAIT);
    }
    ListJobsRequest bySucceeded =
        ListJobsRequest.newBuilder().setState(JobState.JOB_STATE_SUCCEEDED).setPageSize(1000).build();
    List<Job> succeeded = all(client.listJobs(bySucceeded));
    assertTrue(succeeded.stream().allMatch(j -> j.getState() == JobState.JOB_STATE_SUCCEEDED));
    assertTrue(succeeded.stream().map(Job::getJobId).toList().containsAll(ids), "every job listed as succeeded");
    ScorewireException e =
        assertThrows(ScorewireException.class, () -> all(client.listJobs(ListJobsRequest.newBuilder().setPageSize(5000).build())));
    assertRefused(e, Status.Code.INVALID_ARGUMENT, "page_size");
  }

  @Test
  void aRefusedJobNamesItsFieldAndIsNotStored() {
    // 50,000 cases: the server refuses while they are still being sent
    record Refusal(JobConfig config, Status.Code code, String field) {}
    for (Refusal r :
        List.of(
            new Refusal(
                compact("contains:Paris").toBuilder().setWebhookUrl("http://127.0.0.1:1/hook").build(),
                Status.Code.FAILED_PRECONDITION,
                "config.webhook_url"),
            new Refusal(
                JobConfig.newBuilder().addChecks(Values.check("contains", Map.of("needlez", List.of("Paris")))).build(),
                Status.Code.INVALID_ARGUMENT,
                "checks[0].params.needlez"))) {
      String name = unique("java-refused");
      JobConfig config = r.config().toBuilder().setName(name).build();
      ScorewireException e = assertThrows(ScorewireException.class, () -> client.createJob(config, paris(LONG_CASES)));
      assertRefused(e, r.code(), r.field());
      assertFalse(
          all(client.listJobs(ListJobsRequest.newBuilder().setPageSize(1000).build())).stream()
              .anyMatch(j -> j.getName().equals(name)),
          "the refused job was stored");
    }
  }

  @Test
  void anUnknownJobIsNotFound() {
    for (Runnable call :
        List.<Runnable>of(
            () -> client.getJob("job_missing"),
            () -> client.cancelJob("job_missing"),
            () -> client.waitJob("job_missing", WAIT))) {
      assertRefused(assertThrows(ScorewireException.class, call::run), Status.Code.NOT_FOUND, "job_id");
    }
  }

  @Test
  void theAsyncClientCreatesWatchesWaitsAndCancels() throws Exception {
    ScorewireAsyncClient async = client.async();
    Job job = async.createJob(compact("contains:Paris"), cases(8)).get(1, TimeUnit.MINUTES);
    List<Job> seen = new CopyOnWriteArrayList<>();
    Job end = async.watchJob(job.getJobId(), seen::add, WAIT).get(1, TimeUnit.MINUTES);
    assertEquals(JobState.JOB_STATE_SUCCEEDED, end.getState());
    assertEquals(end, seen.get(seen.size() - 1));
    assertEquals(0.75, end.getAggregations(0).getAverage());
    assertNotEquals("", end.getRunId());
    assertEquals(end, async.waitJob(job.getJobId()).get(1, TimeUnit.MINUTES));
    assertEquals(end, async.getJob(job.getJobId()).get(1, TimeUnit.MINUTES));

    // Listed once this test has made two jobs: on a server of its own it may be the
    // first test to run, with no other job to page to.
    Job longJob = async.createJob(compact("contains:Paris"), paris(LONG_CASES)).get(1, TimeUnit.MINUTES);
    ListJobsResponse page = async.listJobs(ListJobsRequest.newBuilder().setPageSize(1).build()).get(1, TimeUnit.MINUTES);
    assertEquals(1, page.getJobsCount());
    assertNotEquals("", page.getNextPageToken());
    assertEquals(JobState.JOB_STATE_CANCELLED, async.cancelJob(longJob.getJobId()).get(1, TimeUnit.MINUTES).getState());
    CompletionException failed =
        assertThrows(CompletionException.class, () -> async.cancelJob(longJob.getJobId()).join());
    assertRefused((ScorewireException) failed.getCause(), Status.Code.FAILED_PRECONDITION, "job_id");
    CompletionException refused =
        assertThrows(
            CompletionException.class,
            () -> {
              JobConfig hooked = compact("contains:Paris").toBuilder().setWebhookUrl("https://example.invalid/hook").build();
              async.createJob(hooked, cases(1)).join();
            });
    assertRefused((ScorewireException) refused.getCause(), Status.Code.FAILED_PRECONDITION, "config.webhook_url");
  }
}
