// Tests of the wrapper's pure parts; they need no server.
import assert from "node:assert/strict";
import { test } from "node:test";

import { Metadata, ScorewireError, Status, normalizeTarget, channelOptionsFor, toScorewireError } from "../src";
import { BadRequest } from "../src/gen/google/rpc/error_details";
import { Status as RpcStatus } from "../src/gen/google/rpc/status";

/** Trailers as a server sends them for INVALID_ARGUMENT with a BadRequest detail. */
function trailersWith(violations: { field: string; description: string }[]): Metadata {
  const status = RpcStatus.encode({
    code: Status.INVALID_ARGUMENT,
    message: "bad",
    details: [
      { typeUrl: "type.googleapis.com/google.rpc.RetryInfo", value: Buffer.from([]) },
      {
        typeUrl: "type.googleapis.com/google.rpc.BadRequest",
        value: Buffer.from(BadRequest.encode(BadRequest.fromPartial({ fieldViolations: violations })).finish()),
      },
    ],
  }).finish();
  const md = new Metadata();
  md.set("grpc-status-details-bin", Buffer.from(status));
  return md;
}

test("field violations are decoded from grpc-status-details-bin, other details skipped", () => {
  const serviceError = Object.assign(new Error("3 INVALID_ARGUMENT: bad"), {
    code: Status.INVALID_ARGUMENT,
    details: "bad",
    metadata: trailersWith([
      { field: "checks[2].params.pattern", description: "unbalanced parenthesis" },
      { field: "compact[0]", description: "unknown check" },
    ]),
  });
  const err = toScorewireError(serviceError);
  assert.ok(err instanceof ScorewireError && err instanceof Error);
  assert.equal(err.code, Status.INVALID_ARGUMENT);
  assert.equal(err.codeName, "INVALID_ARGUMENT");
  assert.equal(err.details, "bad");
  assert.deepEqual(err.fieldViolations, [
    { field: "checks[2].params.pattern", description: "unbalanced parenthesis" },
    { field: "compact[0]", description: "unknown check" },
  ]);
});

test("a malformed status trailer leaves the code and no violations", () => {
  const md = new Metadata();
  md.set("grpc-status-details-bin", Buffer.from([0xff, 0xff, 0xff]));
  const err = toScorewireError(Object.assign(new Error("x"), { code: Status.INTERNAL, details: "x", metadata: md }));
  assert.equal(err.code, Status.INTERNAL);
  assert.deepEqual(err.fieldViolations, []);
});

test("a non-gRPC error becomes UNKNOWN", () => {
  assert.equal(toScorewireError(new TypeError("boom")).code, Status.UNKNOWN);
});

test("host:port targets resolve through dns:, schemes are kept", () => {
  // Each row: [address, target].
  const rows: [string, string][] = [
    ["127.0.0.1:50051", "dns:///127.0.0.1:50051"],
    ["localhost:50051", "dns:///localhost:50051"],
    ["scorewire.internal:443", "dns:///scorewire.internal:443"],
    ["[::1]:50051", "dns:///[::1]:50051"],
    ["dns:///scorewire:50051", "dns:///scorewire:50051"],
    ["unix:/tmp/scorewire.sock", "unix:/tmp/scorewire.sock"],
    ["ipv4:10.0.0.1:1,10.0.0.2:1", "ipv4:10.0.0.1:1,10.0.0.2:1"],
  ];
  for (const [address, target] of rows) assert.equal(normalizeTarget(address), target, address);
});

test("channel defaults: round_robin, keepalive, 64 MiB messages; overrides win", () => {
  const opts = channelOptionsFor({});
  assert.deepEqual(JSON.parse(opts["grpc.service_config"] as string), { loadBalancingConfig: [{ round_robin: {} }] });
  assert.equal(opts["grpc.keepalive_time_ms"], 60_000);
  assert.equal(opts["grpc.max_receive_message_length"], 64 * 1024 * 1024);
  assert.equal(channelOptionsFor({ channelOptions: { "grpc.keepalive_time_ms": 5 } })["grpc.keepalive_time_ms"], 5);
});
