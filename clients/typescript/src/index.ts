/**
 * TypeScript client of the scorewire.v1 gRPC API: `ScorewireClient` wraps the generated
 * grpc-js stubs; the generated message types (scoring, labels, runs and jobs) are re-exported as
 * they are.
 */
export { status as Status, Metadata, credentials } from "@grpc/grpc-js";
export {
  type CallOptions,
  ScoreStream,
  DEFAULT_KEEPALIVE_TIME_MS,
  DEFAULT_KEEPALIVE_TIMEOUT_MS,
  STREAM_CHUNK_CASES,
  ScorewireClient,
  type ScorewireClientOptions,
  SuiteRun,
  channelOptionsFor,
  normalizeTarget,
  outputHash,
} from "./client";
export {
  DEFAULT_CHUNK_ATTEMPTS,
  DEFAULT_CHUNK_CASES,
  type ShardOptions,
  type ShardedResult,
  isRetryable,
} from "./shards";
export { gateReasons, mergeSummaries } from "./summary";
export { JOB_CHUNK_BYTES, JOB_CHUNK_CASES, jobChunks, jobEnded } from "./jobs";
export { DROP_REASONS, type DropReason, Observer, type ObserverOptions, type ObserverStats } from "./observe";
export { type FieldViolation, ScorewireError, fieldViolationsOf, toScorewireError } from "./errors";
export * from "./gen/scorewire/v1/scoring";
export {
  Label,
  LabelServiceClient,
  ListLabelsRequest,
  ListLabelsResponse,
  PutLabelsRequest,
  PutLabelsResponse,
} from "./gen/scorewire/v1/labels";
export {
  CaseChange,
  CheckDelta,
  CompareRunsRequest,
  CompareRunsResponse,
  DeleteRunRequest,
  DeleteRunResponse,
  GetRunRequest,
  GetRunResponse,
  ListRunResultsRequest,
  ListRunResultsResponse,
  ListRunsRequest,
  ListRunsResponse,
  Outcome,
  Run,
  RunCaseResult,
  RunServiceClient,
  RunStatus,
  outcomeFromJSON,
  outcomeToJSON,
  runStatusFromJSON,
  runStatusToJSON,
} from "./gen/scorewire/v1/runs";
export {
  ListRulesRequest,
  ListRulesResponse,
  Observation,
  ObservationAck,
  ObservationMetadata,
  ObservationStatus,
  ObserveRequest,
  ObserveResponse,
  ObserveServiceClient,
  Rule,
  TraceContext,
} from "./gen/scorewire/v1/observe";
export {
  CancelJobRequest,
  CancelJobResponse,
  CheckAggregations,
  CreateJobRequest,
  CreateJobResponse,
  GetJobRequest,
  GetJobResponse,
  Job,
  JobCases,
  JobConfig,
  JobServiceClient,
  JobState,
  ListJobsRequest,
  ListJobsResponse,
  WatchJobRequest,
  WatchJobResponse,
  jobStateFromJSON,
  jobStateToJSON,
} from "./gen/scorewire/v1/jobs";
