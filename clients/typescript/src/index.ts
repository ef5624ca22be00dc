/**
 * TypeScript client of the scorewire.v1 gRPC API: `ScorewireClient` wraps the generated
 * grpc-js stub; the generated message types are re-exported as they are.
 */
export { status as Status, Metadata, credentials } from "@grpc/grpc-js";
export {
  type CallOptions,
  ScoreStream,
  ScorewireClient,
  type ScorewireClientOptions,
  SuiteRun,
  channelOptionsFor,
  normalizeTarget,
} from "./client";
export { type FieldViolation, ScorewireError, fieldViolationsOf, toScorewireError } from "./errors";
export * from "./gen/scorewire/v1/scoring";
