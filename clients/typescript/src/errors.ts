import { Metadata, status as Status } from "@grpc/grpc-js";

import { BadRequest } from "./gen/google/rpc/error_details";
import { Status as RpcStatus } from "./gen/google/rpc/status";

/** The trailer in which gRPC servers send a serialized google.rpc.Status. */
const STATUS_DETAILS_KEY = "grpc-status-details-bin";
const BAD_REQUEST_TYPE_URL = "type.googleapis.com/google.rpc.BadRequest";

/** One offending field of a rejected request, such as `checks[2].params.pattern`. */
export interface FieldViolation {
  /** The path of the field inside the request. */
  readonly field: string;
  /** What is wrong with it. */
  readonly description: string;
}

/**
 * A failed scorewire call. `code` is the gRPC status code; for INVALID_ARGUMENT,
 * `fieldViolations` lists every offending field decoded from the google.rpc.BadRequest
 * detail in the `grpc-status-details-bin` trailer (empty when the server sent none).
 */
export class ScorewireError extends Error {
  /** The gRPC status code (compare with `Status.INVALID_ARGUMENT` and friends). */
  readonly code: Status;
  /** The status code's name, such as `INVALID_ARGUMENT`. */
  readonly codeName: string;
  /** The server's message, without the code prefix grpc-js adds to `Error.message`. */
  readonly details: string;
  /** Field violations of a google.rpc.BadRequest detail, in the server's order. */
  readonly fieldViolations: readonly FieldViolation[];
  /** The call's trailers. */
  readonly metadata: Metadata;

  constructor(
    code: Status,
    details: string,
    fieldViolations: readonly FieldViolation[] = [],
    metadata: Metadata = new Metadata(),
    options?: { cause?: unknown },
  ) {
    const codeName = Status[code] ?? `CODE_${code}`;
    super(`${codeName}: ${details}`, options);
    this.name = "ScorewireError";
    this.code = code;
    this.codeName = codeName;
    this.details = details;
    this.fieldViolations = fieldViolations;
    this.metadata = metadata;
  }
}

/** Whether `err` looks like a grpc-js ServiceError (an Error carrying a status). */
function isServiceError(err: unknown): err is Error & { code: Status; details: string; metadata: Metadata } {
  return (
    err instanceof Error &&
    typeof (err as { code?: unknown }).code === "number" &&
    (err as { metadata?: unknown }).metadata instanceof Metadata
  );
}

/** Decodes the BadRequest field violations from a call's trailers, if any. */
export function fieldViolationsOf(metadata: Metadata): FieldViolation[] {
  const out: FieldViolation[] = [];
  for (const raw of metadata.get(STATUS_DETAILS_KEY)) {
    if (typeof raw === "string") continue;
    let status: RpcStatus;
    try {
      status = RpcStatus.decode(raw);
    } catch {
      continue; // A malformed trailer must not hide the status code itself.
    }
    for (const detail of status.details) {
      if (detail.typeUrl !== BAD_REQUEST_TYPE_URL) continue;
      for (const v of BadRequest.decode(detail.value).fieldViolations) {
        out.push({ field: v.field, description: v.description });
      }
    }
  }
  return out;
}

/** Converts whatever a grpc-js call failed with into a ScorewireError. */
export function toScorewireError(err: unknown): ScorewireError {
  if (err instanceof ScorewireError) return err;
  if (isServiceError(err)) {
    return new ScorewireError(err.code, err.details, fieldViolationsOf(err.metadata), err.metadata, {
      cause: err,
    });
  }
  const message = err instanceof Error ? err.message : String(err);
  return new ScorewireError(Status.UNKNOWN, message, [], new Metadata(), { cause: err });
}
