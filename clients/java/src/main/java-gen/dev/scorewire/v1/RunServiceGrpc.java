package dev.scorewire.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * RunService lists, reads, compares and deletes recorded runs, and opens and closes runs
 * sent in parts.
 * Every RPC returns INVALID_ARGUMENT with a google.rpc.BadRequest naming each offending
 * field, NOT_FOUND for a run id that does not exist (or that the caller may not see),
 * and UNAVAILABLE when the run store does not answer or none is configured.
 * </pre>
 */
@javax.annotation.Generated(
    value = "by gRPC proto compiler",
    comments = "Source: scorewire/v1/runs.proto")
@io.grpc.stub.annotations.GrpcGenerated
public final class RunServiceGrpc {

  private RunServiceGrpc() {}

  public static final String SERVICE_NAME = "scorewire.v1.RunService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<dev.scorewire.v1.ListRunsRequest,
      dev.scorewire.v1.ListRunsResponse> getListRunsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListRuns",
      requestType = dev.scorewire.v1.ListRunsRequest.class,
      responseType = dev.scorewire.v1.ListRunsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.scorewire.v1.ListRunsRequest,
      dev.scorewire.v1.ListRunsResponse> getListRunsMethod() {
    io.grpc.MethodDescriptor<dev.scorewire.v1.ListRunsRequest, dev.scorewire.v1.ListRunsResponse> getListRunsMethod;
    if ((getListRunsMethod = RunServiceGrpc.getListRunsMethod) == null) {
      synchronized (RunServiceGrpc.class) {
        if ((getListRunsMethod = RunServiceGrpc.getListRunsMethod) == null) {
          RunServiceGrpc.getListRunsMethod = getListRunsMethod =
              io.grpc.MethodDescriptor.<dev.scorewire.v1.ListRunsRequest, dev.scorewire.v1.ListRunsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListRuns"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.ListRunsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.ListRunsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new RunServiceMethodDescriptorSupplier("ListRuns"))
              .build();
        }
      }
    }
    return getListRunsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.scorewire.v1.GetRunRequest,
      dev.scorewire.v1.GetRunResponse> getGetRunMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetRun",
      requestType = dev.scorewire.v1.GetRunRequest.class,
      responseType = dev.scorewire.v1.GetRunResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.scorewire.v1.GetRunRequest,
      dev.scorewire.v1.GetRunResponse> getGetRunMethod() {
    io.grpc.MethodDescriptor<dev.scorewire.v1.GetRunRequest, dev.scorewire.v1.GetRunResponse> getGetRunMethod;
    if ((getGetRunMethod = RunServiceGrpc.getGetRunMethod) == null) {
      synchronized (RunServiceGrpc.class) {
        if ((getGetRunMethod = RunServiceGrpc.getGetRunMethod) == null) {
          RunServiceGrpc.getGetRunMethod = getGetRunMethod =
              io.grpc.MethodDescriptor.<dev.scorewire.v1.GetRunRequest, dev.scorewire.v1.GetRunResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetRun"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.GetRunRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.GetRunResponse.getDefaultInstance()))
              .setSchemaDescriptor(new RunServiceMethodDescriptorSupplier("GetRun"))
              .build();
        }
      }
    }
    return getGetRunMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.scorewire.v1.ListRunResultsRequest,
      dev.scorewire.v1.ListRunResultsResponse> getListRunResultsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListRunResults",
      requestType = dev.scorewire.v1.ListRunResultsRequest.class,
      responseType = dev.scorewire.v1.ListRunResultsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.scorewire.v1.ListRunResultsRequest,
      dev.scorewire.v1.ListRunResultsResponse> getListRunResultsMethod() {
    io.grpc.MethodDescriptor<dev.scorewire.v1.ListRunResultsRequest, dev.scorewire.v1.ListRunResultsResponse> getListRunResultsMethod;
    if ((getListRunResultsMethod = RunServiceGrpc.getListRunResultsMethod) == null) {
      synchronized (RunServiceGrpc.class) {
        if ((getListRunResultsMethod = RunServiceGrpc.getListRunResultsMethod) == null) {
          RunServiceGrpc.getListRunResultsMethod = getListRunResultsMethod =
              io.grpc.MethodDescriptor.<dev.scorewire.v1.ListRunResultsRequest, dev.scorewire.v1.ListRunResultsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListRunResults"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.ListRunResultsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.ListRunResultsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new RunServiceMethodDescriptorSupplier("ListRunResults"))
              .build();
        }
      }
    }
    return getListRunResultsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.scorewire.v1.CompareRunsRequest,
      dev.scorewire.v1.CompareRunsResponse> getCompareRunsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "CompareRuns",
      requestType = dev.scorewire.v1.CompareRunsRequest.class,
      responseType = dev.scorewire.v1.CompareRunsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.scorewire.v1.CompareRunsRequest,
      dev.scorewire.v1.CompareRunsResponse> getCompareRunsMethod() {
    io.grpc.MethodDescriptor<dev.scorewire.v1.CompareRunsRequest, dev.scorewire.v1.CompareRunsResponse> getCompareRunsMethod;
    if ((getCompareRunsMethod = RunServiceGrpc.getCompareRunsMethod) == null) {
      synchronized (RunServiceGrpc.class) {
        if ((getCompareRunsMethod = RunServiceGrpc.getCompareRunsMethod) == null) {
          RunServiceGrpc.getCompareRunsMethod = getCompareRunsMethod =
              io.grpc.MethodDescriptor.<dev.scorewire.v1.CompareRunsRequest, dev.scorewire.v1.CompareRunsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "CompareRuns"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.CompareRunsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.CompareRunsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new RunServiceMethodDescriptorSupplier("CompareRuns"))
              .build();
        }
      }
    }
    return getCompareRunsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.scorewire.v1.DeleteRunRequest,
      dev.scorewire.v1.DeleteRunResponse> getDeleteRunMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeleteRun",
      requestType = dev.scorewire.v1.DeleteRunRequest.class,
      responseType = dev.scorewire.v1.DeleteRunResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.scorewire.v1.DeleteRunRequest,
      dev.scorewire.v1.DeleteRunResponse> getDeleteRunMethod() {
    io.grpc.MethodDescriptor<dev.scorewire.v1.DeleteRunRequest, dev.scorewire.v1.DeleteRunResponse> getDeleteRunMethod;
    if ((getDeleteRunMethod = RunServiceGrpc.getDeleteRunMethod) == null) {
      synchronized (RunServiceGrpc.class) {
        if ((getDeleteRunMethod = RunServiceGrpc.getDeleteRunMethod) == null) {
          RunServiceGrpc.getDeleteRunMethod = getDeleteRunMethod =
              io.grpc.MethodDescriptor.<dev.scorewire.v1.DeleteRunRequest, dev.scorewire.v1.DeleteRunResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeleteRun"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.DeleteRunRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.DeleteRunResponse.getDefaultInstance()))
              .setSchemaDescriptor(new RunServiceMethodDescriptorSupplier("DeleteRun"))
              .build();
        }
      }
    }
    return getDeleteRunMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.scorewire.v1.OpenRunRequest,
      dev.scorewire.v1.OpenRunResponse> getOpenRunMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "OpenRun",
      requestType = dev.scorewire.v1.OpenRunRequest.class,
      responseType = dev.scorewire.v1.OpenRunResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.scorewire.v1.OpenRunRequest,
      dev.scorewire.v1.OpenRunResponse> getOpenRunMethod() {
    io.grpc.MethodDescriptor<dev.scorewire.v1.OpenRunRequest, dev.scorewire.v1.OpenRunResponse> getOpenRunMethod;
    if ((getOpenRunMethod = RunServiceGrpc.getOpenRunMethod) == null) {
      synchronized (RunServiceGrpc.class) {
        if ((getOpenRunMethod = RunServiceGrpc.getOpenRunMethod) == null) {
          RunServiceGrpc.getOpenRunMethod = getOpenRunMethod =
              io.grpc.MethodDescriptor.<dev.scorewire.v1.OpenRunRequest, dev.scorewire.v1.OpenRunResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "OpenRun"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.OpenRunRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.OpenRunResponse.getDefaultInstance()))
              .setSchemaDescriptor(new RunServiceMethodDescriptorSupplier("OpenRun"))
              .build();
        }
      }
    }
    return getOpenRunMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.scorewire.v1.CloseRunRequest,
      dev.scorewire.v1.CloseRunResponse> getCloseRunMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "CloseRun",
      requestType = dev.scorewire.v1.CloseRunRequest.class,
      responseType = dev.scorewire.v1.CloseRunResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.scorewire.v1.CloseRunRequest,
      dev.scorewire.v1.CloseRunResponse> getCloseRunMethod() {
    io.grpc.MethodDescriptor<dev.scorewire.v1.CloseRunRequest, dev.scorewire.v1.CloseRunResponse> getCloseRunMethod;
    if ((getCloseRunMethod = RunServiceGrpc.getCloseRunMethod) == null) {
      synchronized (RunServiceGrpc.class) {
        if ((getCloseRunMethod = RunServiceGrpc.getCloseRunMethod) == null) {
          RunServiceGrpc.getCloseRunMethod = getCloseRunMethod =
              io.grpc.MethodDescriptor.<dev.scorewire.v1.CloseRunRequest, dev.scorewire.v1.CloseRunResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "CloseRun"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.CloseRunRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.CloseRunResponse.getDefaultInstance()))
              .setSchemaDescriptor(new RunServiceMethodDescriptorSupplier("CloseRun"))
              .build();
        }
      }
    }
    return getCloseRunMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static RunServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<RunServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<RunServiceStub>() {
        @java.lang.Override
        public RunServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new RunServiceStub(channel, callOptions);
        }
      };
    return RunServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static RunServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<RunServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<RunServiceBlockingStub>() {
        @java.lang.Override
        public RunServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new RunServiceBlockingStub(channel, callOptions);
        }
      };
    return RunServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static RunServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<RunServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<RunServiceFutureStub>() {
        @java.lang.Override
        public RunServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new RunServiceFutureStub(channel, callOptions);
        }
      };
    return RunServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * RunService lists, reads, compares and deletes recorded runs, and opens and closes runs
   * sent in parts.
   * Every RPC returns INVALID_ARGUMENT with a google.rpc.BadRequest naming each offending
   * field, NOT_FOUND for a run id that does not exist (or that the caller may not see),
   * and UNAVAILABLE when the run store does not answer or none is configured.
   * </pre>
   */
  public static abstract class RunServiceImplBase implements io.grpc.BindableService {

    /**
     * <pre>
     * ListRuns returns recorded runs, newest first, filtered and paged.
     * </pre>
     */
    public void listRuns(dev.scorewire.v1.ListRunsRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.ListRunsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListRunsMethod(), responseObserver);
    }

    /**
     * <pre>
     * GetRun returns one run's metadata and summary.
     * </pre>
     */
    public void getRun(dev.scorewire.v1.GetRunRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.GetRunResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetRunMethod(), responseObserver);
    }

    /**
     * <pre>
     * ListRunResults returns a run's case results in the order they were recorded,
     * filtered by check and outcome, and paged.
     * </pre>
     */
    public void listRunResults(dev.scorewire.v1.ListRunResultsRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.ListRunResultsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListRunResultsMethod(), responseObserver);
    }

    /**
     * <pre>
     * CompareRuns compares a run with a base run: per-check pass-rate and mean deltas, and
     * the cases that regressed, improved or changed output, matched by sample id (cases
     * without one by their index).
     * </pre>
     */
    public void compareRuns(dev.scorewire.v1.CompareRunsRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.CompareRunsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getCompareRunsMethod(), responseObserver);
    }

    /**
     * <pre>
     * DeleteRun deletes a run and its results.
     * </pre>
     */
    public void deleteRun(dev.scorewire.v1.DeleteRunRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.DeleteRunResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeleteRunMethod(), responseObserver);
    }

    /**
     * <pre>
     * OpenRun opens a run its caller sends in parts: several ScoringService.RunSuite calls
     * (one per test of a checkllm file, or shards of a batch), each naming the run in
     * `RunSuiteRequest.part`, then one CloseRun with the run's own summary. The run is
     * recorded as one run, and counted once in `scorewire_suite_runs_total` with the gate
     * verdict CloseRun reports; the parts are neither recorded nor counted as runs of their
     * own. A recorded run stays running while its parts are scored, on any replica, and
     * ends incomplete when no part has reached the server for three run-store heartbeats
     * (`SCOREWIRE_RUNS_HEARTBEAT_S`): its caller died. A run that is not recorded gets no
     * id and touches no store. Returns UNAVAILABLE when the run is to be recorded and the
     * store fails, INVALID_ARGUMENT or RESOURCE_EXHAUSTED naming a bad or oversized field.
     * </pre>
     */
    public void openRun(dev.scorewire.v1.OpenRunRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.OpenRunResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getOpenRunMethod(), responseObserver);
    }

    /**
     * <pre>
     * CloseRun ends a run opened with OpenRun: complete with the caller's summary, or
     * incomplete (`interrupted`, no summary). Returns NOT_FOUND for a run id that does not
     * exist or that the caller may not see, FAILED_PRECONDITION for a run that is not
     * running or was not opened with OpenRun, INVALID_ARGUMENT naming a bad field of the
     * summary or of the cases.
     * </pre>
     */
    public void closeRun(dev.scorewire.v1.CloseRunRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.CloseRunResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getCloseRunMethod(), responseObserver);
    }

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return io.grpc.ServerServiceDefinition.builder(getServiceDescriptor())
          .addMethod(
            getListRunsMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                dev.scorewire.v1.ListRunsRequest,
                dev.scorewire.v1.ListRunsResponse>(
                  this, METHODID_LIST_RUNS)))
          .addMethod(
            getGetRunMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                dev.scorewire.v1.GetRunRequest,
                dev.scorewire.v1.GetRunResponse>(
                  this, METHODID_GET_RUN)))
          .addMethod(
            getListRunResultsMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                dev.scorewire.v1.ListRunResultsRequest,
                dev.scorewire.v1.ListRunResultsResponse>(
                  this, METHODID_LIST_RUN_RESULTS)))
          .addMethod(
            getCompareRunsMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                dev.scorewire.v1.CompareRunsRequest,
                dev.scorewire.v1.CompareRunsResponse>(
                  this, METHODID_COMPARE_RUNS)))
          .addMethod(
            getDeleteRunMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                dev.scorewire.v1.DeleteRunRequest,
                dev.scorewire.v1.DeleteRunResponse>(
                  this, METHODID_DELETE_RUN)))
          .addMethod(
            getOpenRunMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                dev.scorewire.v1.OpenRunRequest,
                dev.scorewire.v1.OpenRunResponse>(
                  this, METHODID_OPEN_RUN)))
          .addMethod(
            getCloseRunMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                dev.scorewire.v1.CloseRunRequest,
                dev.scorewire.v1.CloseRunResponse>(
                  this, METHODID_CLOSE_RUN)))
          .build();
    }
  }

  /**
   * <pre>
   * RunService lists, reads, compares and deletes recorded runs, and opens and closes runs
   * sent in parts.
   * Every RPC returns INVALID_ARGUMENT with a google.rpc.BadRequest naming each offending
   * field, NOT_FOUND for a run id that does not exist (or that the caller may not see),
   * and UNAVAILABLE when the run store does not answer or none is configured.
   * </pre>
   */
  public static final class RunServiceStub extends io.grpc.stub.AbstractAsyncStub<RunServiceStub> {
    private RunServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected RunServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new RunServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * ListRuns returns recorded runs, newest first, filtered and paged.
     * </pre>
     */
    public void listRuns(dev.scorewire.v1.ListRunsRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.ListRunsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListRunsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * GetRun returns one run's metadata and summary.
     * </pre>
     */
    public void getRun(dev.scorewire.v1.GetRunRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.GetRunResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetRunMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * ListRunResults returns a run's case results in the order they were recorded,
     * filtered by check and outcome, and paged.
     * </pre>
     */
    public void listRunResults(dev.scorewire.v1.ListRunResultsRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.ListRunResultsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListRunResultsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * CompareRuns compares a run with a base run: per-check pass-rate and mean deltas, and
     * the cases that regressed, improved or changed output, matched by sample id (cases
     * without one by their index).
     * </pre>
     */
    public void compareRuns(dev.scorewire.v1.CompareRunsRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.CompareRunsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getCompareRunsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * DeleteRun deletes a run and its results.
     * </pre>
     */
    public void deleteRun(dev.scorewire.v1.DeleteRunRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.DeleteRunResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeleteRunMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * OpenRun opens a run its caller sends in parts: several ScoringService.RunSuite calls
     * (one per test of a checkllm file, or shards of a batch), each naming the run in
     * `RunSuiteRequest.part`, then one CloseRun with the run's own summary. The run is
     * recorded as one run, and counted once in `scorewire_suite_runs_total` with the gate
     * verdict CloseRun reports; the parts are neither recorded nor counted as runs of their
     * own. A recorded run stays running while its parts are scored, on any replica, and
     * ends incomplete when no part has reached the server for three run-store heartbeats
     * (`SCOREWIRE_RUNS_HEARTBEAT_S`): its caller died. A run that is not recorded gets no
     * id and touches no store. Returns UNAVAILABLE when the run is to be recorded and the
     * store fails, INVALID_ARGUMENT or RESOURCE_EXHAUSTED naming a bad or oversized field.
     * </pre>
     */
    public void openRun(dev.scorewire.v1.OpenRunRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.OpenRunResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getOpenRunMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * CloseRun ends a run opened with OpenRun: complete with the caller's summary, or
     * incomplete (`interrupted`, no summary). Returns NOT_FOUND for a run id that does not
     * exist or that the caller may not see, FAILED_PRECONDITION for a run that is not
     * running or was not opened with OpenRun, INVALID_ARGUMENT naming a bad field of the
     * summary or of the cases.
     * </pre>
     */
    public void closeRun(dev.scorewire.v1.CloseRunRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.CloseRunResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getCloseRunMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * <pre>
   * RunService lists, reads, compares and deletes recorded runs, and opens and closes runs
   * sent in parts.
   * Every RPC returns INVALID_ARGUMENT with a google.rpc.BadRequest naming each offending
   * field, NOT_FOUND for a run id that does not exist (or that the caller may not see),
   * and UNAVAILABLE when the run store does not answer or none is configured.
   * </pre>
   */
  public static final class RunServiceBlockingStub extends io.grpc.stub.AbstractBlockingStub<RunServiceBlockingStub> {
    private RunServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected RunServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new RunServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * ListRuns returns recorded runs, newest first, filtered and paged.
     * </pre>
     */
    public dev.scorewire.v1.ListRunsResponse listRuns(dev.scorewire.v1.ListRunsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListRunsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * GetRun returns one run's metadata and summary.
     * </pre>
     */
    public dev.scorewire.v1.GetRunResponse getRun(dev.scorewire.v1.GetRunRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetRunMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ListRunResults returns a run's case results in the order they were recorded,
     * filtered by check and outcome, and paged.
     * </pre>
     */
    public dev.scorewire.v1.ListRunResultsResponse listRunResults(dev.scorewire.v1.ListRunResultsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListRunResultsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * CompareRuns compares a run with a base run: per-check pass-rate and mean deltas, and
     * the cases that regressed, improved or changed output, matched by sample id (cases
     * without one by their index).
     * </pre>
     */
    public dev.scorewire.v1.CompareRunsResponse compareRuns(dev.scorewire.v1.CompareRunsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getCompareRunsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * DeleteRun deletes a run and its results.
     * </pre>
     */
    public dev.scorewire.v1.DeleteRunResponse deleteRun(dev.scorewire.v1.DeleteRunRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeleteRunMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * OpenRun opens a run its caller sends in parts: several ScoringService.RunSuite calls
     * (one per test of a checkllm file, or shards of a batch), each naming the run in
     * `RunSuiteRequest.part`, then one CloseRun with the run's own summary. The run is
     * recorded as one run, and counted once in `scorewire_suite_runs_total` with the gate
     * verdict CloseRun reports; the parts are neither recorded nor counted as runs of their
     * own. A recorded run stays running while its parts are scored, on any replica, and
     * ends incomplete when no part has reached the server for three run-store heartbeats
     * (`SCOREWIRE_RUNS_HEARTBEAT_S`): its caller died. A run that is not recorded gets no
     * id and touches no store. Returns UNAVAILABLE when the run is to be recorded and the
     * store fails, INVALID_ARGUMENT or RESOURCE_EXHAUSTED naming a bad or oversized field.
     * </pre>
     */
    public dev.scorewire.v1.OpenRunResponse openRun(dev.scorewire.v1.OpenRunRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getOpenRunMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * CloseRun ends a run opened with OpenRun: complete with the caller's summary, or
     * incomplete (`interrupted`, no summary). Returns NOT_FOUND for a run id that does not
     * exist or that the caller may not see, FAILED_PRECONDITION for a run that is not
     * running or was not opened with OpenRun, INVALID_ARGUMENT naming a bad field of the
     * summary or of the cases.
     * </pre>
     */
    public dev.scorewire.v1.CloseRunResponse closeRun(dev.scorewire.v1.CloseRunRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getCloseRunMethod(), getCallOptions(), request);
    }
  }

  /**
   * <pre>
   * RunService lists, reads, compares and deletes recorded runs, and opens and closes runs
   * sent in parts.
   * Every RPC returns INVALID_ARGUMENT with a google.rpc.BadRequest naming each offending
   * field, NOT_FOUND for a run id that does not exist (or that the caller may not see),
   * and UNAVAILABLE when the run store does not answer or none is configured.
   * </pre>
   */
  public static final class RunServiceFutureStub extends io.grpc.stub.AbstractFutureStub<RunServiceFutureStub> {
    private RunServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected RunServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new RunServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * ListRuns returns recorded runs, newest first, filtered and paged.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.scorewire.v1.ListRunsResponse> listRuns(
        dev.scorewire.v1.ListRunsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListRunsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * GetRun returns one run's metadata and summary.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.scorewire.v1.GetRunResponse> getRun(
        dev.scorewire.v1.GetRunRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetRunMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * ListRunResults returns a run's case results in the order they were recorded,
     * filtered by check and outcome, and paged.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.scorewire.v1.ListRunResultsResponse> listRunResults(
        dev.scorewire.v1.ListRunResultsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListRunResultsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * CompareRuns compares a run with a base run: per-check pass-rate and mean deltas, and
     * the cases that regressed, improved or changed output, matched by sample id (cases
     * without one by their index).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.scorewire.v1.CompareRunsResponse> compareRuns(
        dev.scorewire.v1.CompareRunsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getCompareRunsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * DeleteRun deletes a run and its results.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.scorewire.v1.DeleteRunResponse> deleteRun(
        dev.scorewire.v1.DeleteRunRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeleteRunMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * OpenRun opens a run its caller sends in parts: several ScoringService.RunSuite calls
     * (one per test of a checkllm file, or shards of a batch), each naming the run in
     * `RunSuiteRequest.part`, then one CloseRun with the run's own summary. The run is
     * recorded as one run, and counted once in `scorewire_suite_runs_total` with the gate
     * verdict CloseRun reports; the parts are neither recorded nor counted as runs of their
     * own. A recorded run stays running while its parts are scored, on any replica, and
     * ends incomplete when no part has reached the server for three run-store heartbeats
     * (`SCOREWIRE_RUNS_HEARTBEAT_S`): its caller died. A run that is not recorded gets no
     * id and touches no store. Returns UNAVAILABLE when the run is to be recorded and the
     * store fails, INVALID_ARGUMENT or RESOURCE_EXHAUSTED naming a bad or oversized field.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.scorewire.v1.OpenRunResponse> openRun(
        dev.scorewire.v1.OpenRunRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getOpenRunMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * CloseRun ends a run opened with OpenRun: complete with the caller's summary, or
     * incomplete (`interrupted`, no summary). Returns NOT_FOUND for a run id that does not
     * exist or that the caller may not see, FAILED_PRECONDITION for a run that is not
     * running or was not opened with OpenRun, INVALID_ARGUMENT naming a bad field of the
     * summary or of the cases.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.scorewire.v1.CloseRunResponse> closeRun(
        dev.scorewire.v1.CloseRunRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getCloseRunMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_LIST_RUNS = 0;
  private static final int METHODID_GET_RUN = 1;
  private static final int METHODID_LIST_RUN_RESULTS = 2;
  private static final int METHODID_COMPARE_RUNS = 3;
  private static final int METHODID_DELETE_RUN = 4;
  private static final int METHODID_OPEN_RUN = 5;
  private static final int METHODID_CLOSE_RUN = 6;

  private static final class MethodHandlers<Req, Resp> implements
      io.grpc.stub.ServerCalls.UnaryMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ServerStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ClientStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.BidiStreamingMethod<Req, Resp> {
    private final RunServiceImplBase serviceImpl;
    private final int methodId;

    MethodHandlers(RunServiceImplBase serviceImpl, int methodId) {
      this.serviceImpl = serviceImpl;
      this.methodId = methodId;
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public void invoke(Req request, io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        case METHODID_LIST_RUNS:
          serviceImpl.listRuns((dev.scorewire.v1.ListRunsRequest) request,
              (io.grpc.stub.StreamObserver<dev.scorewire.v1.ListRunsResponse>) responseObserver);
          break;
        case METHODID_GET_RUN:
          serviceImpl.getRun((dev.scorewire.v1.GetRunRequest) request,
              (io.grpc.stub.StreamObserver<dev.scorewire.v1.GetRunResponse>) responseObserver);
          break;
        case METHODID_LIST_RUN_RESULTS:
          serviceImpl.listRunResults((dev.scorewire.v1.ListRunResultsRequest) request,
              (io.grpc.stub.StreamObserver<dev.scorewire.v1.ListRunResultsResponse>) responseObserver);
          break;
        case METHODID_COMPARE_RUNS:
          serviceImpl.compareRuns((dev.scorewire.v1.CompareRunsRequest) request,
              (io.grpc.stub.StreamObserver<dev.scorewire.v1.CompareRunsResponse>) responseObserver);
          break;
        case METHODID_DELETE_RUN:
          serviceImpl.deleteRun((dev.scorewire.v1.DeleteRunRequest) request,
              (io.grpc.stub.StreamObserver<dev.scorewire.v1.DeleteRunResponse>) responseObserver);
          break;
        case METHODID_OPEN_RUN:
          serviceImpl.openRun((dev.scorewire.v1.OpenRunRequest) request,
              (io.grpc.stub.StreamObserver<dev.scorewire.v1.OpenRunResponse>) responseObserver);
          break;
        case METHODID_CLOSE_RUN:
          serviceImpl.closeRun((dev.scorewire.v1.CloseRunRequest) request,
              (io.grpc.stub.StreamObserver<dev.scorewire.v1.CloseRunResponse>) responseObserver);
          break;
        default:
          throw new AssertionError();
      }
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public io.grpc.stub.StreamObserver<Req> invoke(
        io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        default:
          throw new AssertionError();
      }
    }
  }

  private static abstract class RunServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    RunServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return dev.scorewire.v1.RunsProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("RunService");
    }
  }

  private static final class RunServiceFileDescriptorSupplier
      extends RunServiceBaseDescriptorSupplier {
    RunServiceFileDescriptorSupplier() {}
  }

  private static final class RunServiceMethodDescriptorSupplier
      extends RunServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final String methodName;

    RunServiceMethodDescriptorSupplier(String methodName) {
      this.methodName = methodName;
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.MethodDescriptor getMethodDescriptor() {
      return getServiceDescriptor().findMethodByName(methodName);
    }
  }

  private static volatile io.grpc.ServiceDescriptor serviceDescriptor;

  public static io.grpc.ServiceDescriptor getServiceDescriptor() {
    io.grpc.ServiceDescriptor result = serviceDescriptor;
    if (result == null) {
      synchronized (RunServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new RunServiceFileDescriptorSupplier())
              .addMethod(getListRunsMethod())
              .addMethod(getGetRunMethod())
              .addMethod(getListRunResultsMethod())
              .addMethod(getCompareRunsMethod())
              .addMethod(getDeleteRunMethod())
              .addMethod(getOpenRunMethod())
              .addMethod(getCloseRunMethod())
              .build();
        }
      }
    }
    return result;
  }
}
