package dev.scorewire.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * ScoringService scores outputs against checks: one sample at a time, a whole suite as a
 * stream of results, or a bidirectional stream of cases as the caller produces them.
 * </pre>
 */
@javax.annotation.Generated(
    value = "by gRPC proto compiler",
    comments = "Source: scorewire/v1/scoring.proto")
@io.grpc.stub.annotations.GrpcGenerated
public final class ScoringServiceGrpc {

  private ScoringServiceGrpc() {}

  public static final String SERVICE_NAME = "scorewire.v1.ScoringService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<dev.scorewire.v1.ScoreRequest,
      dev.scorewire.v1.ScoreResponse> getScoreMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Score",
      requestType = dev.scorewire.v1.ScoreRequest.class,
      responseType = dev.scorewire.v1.ScoreResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.scorewire.v1.ScoreRequest,
      dev.scorewire.v1.ScoreResponse> getScoreMethod() {
    io.grpc.MethodDescriptor<dev.scorewire.v1.ScoreRequest, dev.scorewire.v1.ScoreResponse> getScoreMethod;
    if ((getScoreMethod = ScoringServiceGrpc.getScoreMethod) == null) {
      synchronized (ScoringServiceGrpc.class) {
        if ((getScoreMethod = ScoringServiceGrpc.getScoreMethod) == null) {
          ScoringServiceGrpc.getScoreMethod = getScoreMethod =
              io.grpc.MethodDescriptor.<dev.scorewire.v1.ScoreRequest, dev.scorewire.v1.ScoreResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Score"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.ScoreRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.ScoreResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ScoringServiceMethodDescriptorSupplier("Score"))
              .build();
        }
      }
    }
    return getScoreMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.scorewire.v1.RunSuiteRequest,
      dev.scorewire.v1.RunSuiteResponse> getRunSuiteMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "RunSuite",
      requestType = dev.scorewire.v1.RunSuiteRequest.class,
      responseType = dev.scorewire.v1.RunSuiteResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
  public static io.grpc.MethodDescriptor<dev.scorewire.v1.RunSuiteRequest,
      dev.scorewire.v1.RunSuiteResponse> getRunSuiteMethod() {
    io.grpc.MethodDescriptor<dev.scorewire.v1.RunSuiteRequest, dev.scorewire.v1.RunSuiteResponse> getRunSuiteMethod;
    if ((getRunSuiteMethod = ScoringServiceGrpc.getRunSuiteMethod) == null) {
      synchronized (ScoringServiceGrpc.class) {
        if ((getRunSuiteMethod = ScoringServiceGrpc.getRunSuiteMethod) == null) {
          ScoringServiceGrpc.getRunSuiteMethod = getRunSuiteMethod =
              io.grpc.MethodDescriptor.<dev.scorewire.v1.RunSuiteRequest, dev.scorewire.v1.RunSuiteResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "RunSuite"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.RunSuiteRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.RunSuiteResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ScoringServiceMethodDescriptorSupplier("RunSuite"))
              .build();
        }
      }
    }
    return getRunSuiteMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.scorewire.v1.RunSuiteStreamRequest,
      dev.scorewire.v1.RunSuiteStreamResponse> getRunSuiteStreamMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "RunSuiteStream",
      requestType = dev.scorewire.v1.RunSuiteStreamRequest.class,
      responseType = dev.scorewire.v1.RunSuiteStreamResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.BIDI_STREAMING)
  public static io.grpc.MethodDescriptor<dev.scorewire.v1.RunSuiteStreamRequest,
      dev.scorewire.v1.RunSuiteStreamResponse> getRunSuiteStreamMethod() {
    io.grpc.MethodDescriptor<dev.scorewire.v1.RunSuiteStreamRequest, dev.scorewire.v1.RunSuiteStreamResponse> getRunSuiteStreamMethod;
    if ((getRunSuiteStreamMethod = ScoringServiceGrpc.getRunSuiteStreamMethod) == null) {
      synchronized (ScoringServiceGrpc.class) {
        if ((getRunSuiteStreamMethod = ScoringServiceGrpc.getRunSuiteStreamMethod) == null) {
          ScoringServiceGrpc.getRunSuiteStreamMethod = getRunSuiteStreamMethod =
              io.grpc.MethodDescriptor.<dev.scorewire.v1.RunSuiteStreamRequest, dev.scorewire.v1.RunSuiteStreamResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.BIDI_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "RunSuiteStream"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.RunSuiteStreamRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.RunSuiteStreamResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ScoringServiceMethodDescriptorSupplier("RunSuiteStream"))
              .build();
        }
      }
    }
    return getRunSuiteStreamMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.scorewire.v1.ScoreStreamRequest,
      dev.scorewire.v1.ScoreStreamResponse> getScoreStreamMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ScoreStream",
      requestType = dev.scorewire.v1.ScoreStreamRequest.class,
      responseType = dev.scorewire.v1.ScoreStreamResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.BIDI_STREAMING)
  public static io.grpc.MethodDescriptor<dev.scorewire.v1.ScoreStreamRequest,
      dev.scorewire.v1.ScoreStreamResponse> getScoreStreamMethod() {
    io.grpc.MethodDescriptor<dev.scorewire.v1.ScoreStreamRequest, dev.scorewire.v1.ScoreStreamResponse> getScoreStreamMethod;
    if ((getScoreStreamMethod = ScoringServiceGrpc.getScoreStreamMethod) == null) {
      synchronized (ScoringServiceGrpc.class) {
        if ((getScoreStreamMethod = ScoringServiceGrpc.getScoreStreamMethod) == null) {
          ScoringServiceGrpc.getScoreStreamMethod = getScoreStreamMethod =
              io.grpc.MethodDescriptor.<dev.scorewire.v1.ScoreStreamRequest, dev.scorewire.v1.ScoreStreamResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.BIDI_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ScoreStream"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.ScoreStreamRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.ScoreStreamResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ScoringServiceMethodDescriptorSupplier("ScoreStream"))
              .build();
        }
      }
    }
    return getScoreStreamMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.scorewire.v1.ListChecksRequest,
      dev.scorewire.v1.ListChecksResponse> getListChecksMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListChecks",
      requestType = dev.scorewire.v1.ListChecksRequest.class,
      responseType = dev.scorewire.v1.ListChecksResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.scorewire.v1.ListChecksRequest,
      dev.scorewire.v1.ListChecksResponse> getListChecksMethod() {
    io.grpc.MethodDescriptor<dev.scorewire.v1.ListChecksRequest, dev.scorewire.v1.ListChecksResponse> getListChecksMethod;
    if ((getListChecksMethod = ScoringServiceGrpc.getListChecksMethod) == null) {
      synchronized (ScoringServiceGrpc.class) {
        if ((getListChecksMethod = ScoringServiceGrpc.getListChecksMethod) == null) {
          ScoringServiceGrpc.getListChecksMethod = getListChecksMethod =
              io.grpc.MethodDescriptor.<dev.scorewire.v1.ListChecksRequest, dev.scorewire.v1.ListChecksResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListChecks"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.ListChecksRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.ListChecksResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ScoringServiceMethodDescriptorSupplier("ListChecks"))
              .build();
        }
      }
    }
    return getListChecksMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.scorewire.v1.ValidateSuiteRequest,
      dev.scorewire.v1.ValidateSuiteResponse> getValidateSuiteMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ValidateSuite",
      requestType = dev.scorewire.v1.ValidateSuiteRequest.class,
      responseType = dev.scorewire.v1.ValidateSuiteResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.scorewire.v1.ValidateSuiteRequest,
      dev.scorewire.v1.ValidateSuiteResponse> getValidateSuiteMethod() {
    io.grpc.MethodDescriptor<dev.scorewire.v1.ValidateSuiteRequest, dev.scorewire.v1.ValidateSuiteResponse> getValidateSuiteMethod;
    if ((getValidateSuiteMethod = ScoringServiceGrpc.getValidateSuiteMethod) == null) {
      synchronized (ScoringServiceGrpc.class) {
        if ((getValidateSuiteMethod = ScoringServiceGrpc.getValidateSuiteMethod) == null) {
          ScoringServiceGrpc.getValidateSuiteMethod = getValidateSuiteMethod =
              io.grpc.MethodDescriptor.<dev.scorewire.v1.ValidateSuiteRequest, dev.scorewire.v1.ValidateSuiteResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ValidateSuite"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.ValidateSuiteRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.ValidateSuiteResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ScoringServiceMethodDescriptorSupplier("ValidateSuite"))
              .build();
        }
      }
    }
    return getValidateSuiteMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static ScoringServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<ScoringServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<ScoringServiceStub>() {
        @java.lang.Override
        public ScoringServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new ScoringServiceStub(channel, callOptions);
        }
      };
    return ScoringServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static ScoringServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<ScoringServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<ScoringServiceBlockingStub>() {
        @java.lang.Override
        public ScoringServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new ScoringServiceBlockingStub(channel, callOptions);
        }
      };
    return ScoringServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static ScoringServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<ScoringServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<ScoringServiceFutureStub>() {
        @java.lang.Override
        public ScoringServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new ScoringServiceFutureStub(channel, callOptions);
        }
      };
    return ScoringServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * ScoringService scores outputs against checks: one sample at a time, a whole suite as a
   * stream of results, or a bidirectional stream of cases as the caller produces them.
   * </pre>
   */
  public static abstract class ScoringServiceImplBase implements io.grpc.BindableService {

    /**
     * <pre>
     * Score scores one sample's output against a list of checks and returns one score per
     * check, in request order (structured checks first, then compact checks).
     * Returns INVALID_ARGUMENT for a malformed check or sample, RESOURCE_EXHAUSTED when the
     * request is over a server limit, and DEADLINE_EXCEEDED when the deadline expires.
     * Returns FAILED_PRECONDITION, before any judge call, when a check needs a judge this
     * server has no backend, credentials or price for (a google.rpc.PreconditionFailure
     * and a BadRequest name the field and the setting to set).
     * </pre>
     */
    public void score(dev.scorewire.v1.ScoreRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.ScoreResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getScoreMethod(), responseObserver);
    }

    /**
     * <pre>
     * RunSuite scores a batch of cases against a suite and streams results as cases
     * complete, batched several results per message, then exactly one summary event.
     * Every case yields exactly one result. Returns INVALID_ARGUMENT for a bad suite
     * (every problem listed with its path) and RESOURCE_EXHAUSTED for too many cases.
     * Returns FAILED_PRECONDITION, before any call, when the suite names a judge this server
     * cannot call (no backend, no credentials, or no price in a budgeted run), as Score.
     * </pre>
     */
    public void runSuite(dev.scorewire.v1.RunSuiteRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.RunSuiteResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getRunSuiteMethod(), responseObserver);
    }

    /**
     * <pre>
     * RunSuiteStream is RunSuite with the cases sent in chunks, so the server checks and
     * scores the first ones while the caller still builds and sends the rest. The first
     * message carries `config` (a RunSuiteRequest, whose own `cases` come first, and how
     * many cases the call sends in all); every later message carries a `cases` chunk. The
     * answers are RunSuite's: no result before every case has arrived and passed its
     * checks, then results and exactly one summary (a RunSuiteStreamResponse is a
     * RunSuiteResponse field for field). Besides RunSuite's errors, returns
     * INVALID_ARGUMENT when the first message is not a config, a later one is, or the
     * cases sent are not `config.case_count`; RESOURCE_EXHAUSTED naming the setting when
     * `case_count` is over the per-request case limit or the messages together are over
     * the per-message byte limit.
     * </pre>
     */
    public io.grpc.stub.StreamObserver<dev.scorewire.v1.RunSuiteStreamRequest> runSuiteStream(
        io.grpc.stub.StreamObserver<dev.scorewire.v1.RunSuiteStreamResponse> responseObserver) {
      return io.grpc.stub.ServerCalls.asyncUnimplementedStreamingCall(getRunSuiteStreamMethod(), responseObserver);
    }

    /**
     * <pre>
     * ScoreStream scores cases as they arrive. The first request must carry `config`
     * (the checks); every later request carries one case, and each response echoes that
     * case's `request_id`. Responses arrive in completion order, not request order.
     * Returns INVALID_ARGUMENT when the first message is not a config or a case is bad,
     * and FAILED_PRECONDITION after the config when it names a judge that cannot be called.
     * </pre>
     */
    public io.grpc.stub.StreamObserver<dev.scorewire.v1.ScoreStreamRequest> scoreStream(
        io.grpc.stub.StreamObserver<dev.scorewire.v1.ScoreStreamResponse> responseObserver) {
      return io.grpc.stub.ServerCalls.asyncUnimplementedStreamingCall(getScoreStreamMethod(), responseObserver);
    }

    /**
     * <pre>
     * ListChecks returns the catalog: every canonical check type with its description,
     * the JSON Schema of its parameters and its aliases. Types that only work in the
     * in-process Python API (`python`, which takes a function) are left out.
     * </pre>
     */
    public void listChecks(dev.scorewire.v1.ListChecksRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.ListChecksResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListChecksMethod(), responseObserver);
    }

    /**
     * <pre>
     * ValidateSuite loads a suite (or structured checks) without running anything and
     * returns every problem found, each with its field path. It does not fail with
     * INVALID_ARGUMENT for an invalid suite: the problems are the answer. A suite that loads
     * but could not run on this server (preflight) is answered with `preconditions`.
     * </pre>
     */
    public void validateSuite(dev.scorewire.v1.ValidateSuiteRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.ValidateSuiteResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getValidateSuiteMethod(), responseObserver);
    }

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return io.grpc.ServerServiceDefinition.builder(getServiceDescriptor())
          .addMethod(
            getScoreMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                dev.scorewire.v1.ScoreRequest,
                dev.scorewire.v1.ScoreResponse>(
                  this, METHODID_SCORE)))
          .addMethod(
            getRunSuiteMethod(),
            io.grpc.stub.ServerCalls.asyncServerStreamingCall(
              new MethodHandlers<
                dev.scorewire.v1.RunSuiteRequest,
                dev.scorewire.v1.RunSuiteResponse>(
                  this, METHODID_RUN_SUITE)))
          .addMethod(
            getRunSuiteStreamMethod(),
            io.grpc.stub.ServerCalls.asyncBidiStreamingCall(
              new MethodHandlers<
                dev.scorewire.v1.RunSuiteStreamRequest,
                dev.scorewire.v1.RunSuiteStreamResponse>(
                  this, METHODID_RUN_SUITE_STREAM)))
          .addMethod(
            getScoreStreamMethod(),
            io.grpc.stub.ServerCalls.asyncBidiStreamingCall(
              new MethodHandlers<
                dev.scorewire.v1.ScoreStreamRequest,
                dev.scorewire.v1.ScoreStreamResponse>(
                  this, METHODID_SCORE_STREAM)))
          .addMethod(
            getListChecksMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                dev.scorewire.v1.ListChecksRequest,
                dev.scorewire.v1.ListChecksResponse>(
                  this, METHODID_LIST_CHECKS)))
          .addMethod(
            getValidateSuiteMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                dev.scorewire.v1.ValidateSuiteRequest,
                dev.scorewire.v1.ValidateSuiteResponse>(
                  this, METHODID_VALIDATE_SUITE)))
          .build();
    }
  }

  /**
   * <pre>
   * ScoringService scores outputs against checks: one sample at a time, a whole suite as a
   * stream of results, or a bidirectional stream of cases as the caller produces them.
   * </pre>
   */
  public static final class ScoringServiceStub extends io.grpc.stub.AbstractAsyncStub<ScoringServiceStub> {
    private ScoringServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected ScoringServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new ScoringServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * Score scores one sample's output against a list of checks and returns one score per
     * check, in request order (structured checks first, then compact checks).
     * Returns INVALID_ARGUMENT for a malformed check or sample, RESOURCE_EXHAUSTED when the
     * request is over a server limit, and DEADLINE_EXCEEDED when the deadline expires.
     * Returns FAILED_PRECONDITION, before any judge call, when a check needs a judge this
     * server has no backend, credentials or price for (a google.rpc.PreconditionFailure
     * and a BadRequest name the field and the setting to set).
     * </pre>
     */
    public void score(dev.scorewire.v1.ScoreRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.ScoreResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getScoreMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * RunSuite scores a batch of cases against a suite and streams results as cases
     * complete, batched several results per message, then exactly one summary event.
     * Every case yields exactly one result. Returns INVALID_ARGUMENT for a bad suite
     * (every problem listed with its path) and RESOURCE_EXHAUSTED for too many cases.
     * Returns FAILED_PRECONDITION, before any call, when the suite names a judge this server
     * cannot call (no backend, no credentials, or no price in a budgeted run), as Score.
     * </pre>
     */
    public void runSuite(dev.scorewire.v1.RunSuiteRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.RunSuiteResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncServerStreamingCall(
          getChannel().newCall(getRunSuiteMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * RunSuiteStream is RunSuite with the cases sent in chunks, so the server checks and
     * scores the first ones while the caller still builds and sends the rest. The first
     * message carries `config` (a RunSuiteRequest, whose own `cases` come first, and how
     * many cases the call sends in all); every later message carries a `cases` chunk. The
     * answers are RunSuite's: no result before every case has arrived and passed its
     * checks, then results and exactly one summary (a RunSuiteStreamResponse is a
     * RunSuiteResponse field for field). Besides RunSuite's errors, returns
     * INVALID_ARGUMENT when the first message is not a config, a later one is, or the
     * cases sent are not `config.case_count`; RESOURCE_EXHAUSTED naming the setting when
     * `case_count` is over the per-request case limit or the messages together are over
     * the per-message byte limit.
     * </pre>
     */
    public io.grpc.stub.StreamObserver<dev.scorewire.v1.RunSuiteStreamRequest> runSuiteStream(
        io.grpc.stub.StreamObserver<dev.scorewire.v1.RunSuiteStreamResponse> responseObserver) {
      return io.grpc.stub.ClientCalls.asyncBidiStreamingCall(
          getChannel().newCall(getRunSuiteStreamMethod(), getCallOptions()), responseObserver);
    }

    /**
     * <pre>
     * ScoreStream scores cases as they arrive. The first request must carry `config`
     * (the checks); every later request carries one case, and each response echoes that
     * case's `request_id`. Responses arrive in completion order, not request order.
     * Returns INVALID_ARGUMENT when the first message is not a config or a case is bad,
     * and FAILED_PRECONDITION after the config when it names a judge that cannot be called.
     * </pre>
     */
    public io.grpc.stub.StreamObserver<dev.scorewire.v1.ScoreStreamRequest> scoreStream(
        io.grpc.stub.StreamObserver<dev.scorewire.v1.ScoreStreamResponse> responseObserver) {
      return io.grpc.stub.ClientCalls.asyncBidiStreamingCall(
          getChannel().newCall(getScoreStreamMethod(), getCallOptions()), responseObserver);
    }

    /**
     * <pre>
     * ListChecks returns the catalog: every canonical check type with its description,
     * the JSON Schema of its parameters and its aliases. Types that only work in the
     * in-process Python API (`python`, which takes a function) are left out.
     * </pre>
     */
    public void listChecks(dev.scorewire.v1.ListChecksRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.ListChecksResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListChecksMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * ValidateSuite loads a suite (or structured checks) without running anything and
     * returns every problem found, each with its field path. It does not fail with
     * INVALID_ARGUMENT for an invalid suite: the problems are the answer. A suite that loads
     * but could not run on this server (preflight) is answered with `preconditions`.
     * </pre>
     */
    public void validateSuite(dev.scorewire.v1.ValidateSuiteRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.ValidateSuiteResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getValidateSuiteMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * <pre>
   * ScoringService scores outputs against checks: one sample at a time, a whole suite as a
   * stream of results, or a bidirectional stream of cases as the caller produces them.
   * </pre>
   */
  public static final class ScoringServiceBlockingStub extends io.grpc.stub.AbstractBlockingStub<ScoringServiceBlockingStub> {
    private ScoringServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected ScoringServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new ScoringServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * Score scores one sample's output against a list of checks and returns one score per
     * check, in request order (structured checks first, then compact checks).
     * Returns INVALID_ARGUMENT for a malformed check or sample, RESOURCE_EXHAUSTED when the
     * request is over a server limit, and DEADLINE_EXCEEDED when the deadline expires.
     * Returns FAILED_PRECONDITION, before any judge call, when a check needs a judge this
     * server has no backend, credentials or price for (a google.rpc.PreconditionFailure
     * and a BadRequest name the field and the setting to set).
     * </pre>
     */
    public dev.scorewire.v1.ScoreResponse score(dev.scorewire.v1.ScoreRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getScoreMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * RunSuite scores a batch of cases against a suite and streams results as cases
     * complete, batched several results per message, then exactly one summary event.
     * Every case yields exactly one result. Returns INVALID_ARGUMENT for a bad suite
     * (every problem listed with its path) and RESOURCE_EXHAUSTED for too many cases.
     * Returns FAILED_PRECONDITION, before any call, when the suite names a judge this server
     * cannot call (no backend, no credentials, or no price in a budgeted run), as Score.
     * </pre>
     */
    public java.util.Iterator<dev.scorewire.v1.RunSuiteResponse> runSuite(
        dev.scorewire.v1.RunSuiteRequest request) {
      return io.grpc.stub.ClientCalls.blockingServerStreamingCall(
          getChannel(), getRunSuiteMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ListChecks returns the catalog: every canonical check type with its description,
     * the JSON Schema of its parameters and its aliases. Types that only work in the
     * in-process Python API (`python`, which takes a function) are left out.
     * </pre>
     */
    public dev.scorewire.v1.ListChecksResponse listChecks(dev.scorewire.v1.ListChecksRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListChecksMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ValidateSuite loads a suite (or structured checks) without running anything and
     * returns every problem found, each with its field path. It does not fail with
     * INVALID_ARGUMENT for an invalid suite: the problems are the answer. A suite that loads
     * but could not run on this server (preflight) is answered with `preconditions`.
     * </pre>
     */
    public dev.scorewire.v1.ValidateSuiteResponse validateSuite(dev.scorewire.v1.ValidateSuiteRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getValidateSuiteMethod(), getCallOptions(), request);
    }
  }

  /**
   * <pre>
   * ScoringService scores outputs against checks: one sample at a time, a whole suite as a
   * stream of results, or a bidirectional stream of cases as the caller produces them.
   * </pre>
   */
  public static final class ScoringServiceFutureStub extends io.grpc.stub.AbstractFutureStub<ScoringServiceFutureStub> {
    private ScoringServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected ScoringServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new ScoringServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * Score scores one sample's output against a list of checks and returns one score per
     * check, in request order (structured checks first, then compact checks).
     * Returns INVALID_ARGUMENT for a malformed check or sample, RESOURCE_EXHAUSTED when the
     * request is over a server limit, and DEADLINE_EXCEEDED when the deadline expires.
     * Returns FAILED_PRECONDITION, before any judge call, when a check needs a judge this
     * server has no backend, credentials or price for (a google.rpc.PreconditionFailure
     * and a BadRequest name the field and the setting to set).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.scorewire.v1.ScoreResponse> score(
        dev.scorewire.v1.ScoreRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getScoreMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * ListChecks returns the catalog: every canonical check type with its description,
     * the JSON Schema of its parameters and its aliases. Types that only work in the
     * in-process Python API (`python`, which takes a function) are left out.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.scorewire.v1.ListChecksResponse> listChecks(
        dev.scorewire.v1.ListChecksRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListChecksMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * ValidateSuite loads a suite (or structured checks) without running anything and
     * returns every problem found, each with its field path. It does not fail with
     * INVALID_ARGUMENT for an invalid suite: the problems are the answer. A suite that loads
     * but could not run on this server (preflight) is answered with `preconditions`.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.scorewire.v1.ValidateSuiteResponse> validateSuite(
        dev.scorewire.v1.ValidateSuiteRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getValidateSuiteMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_SCORE = 0;
  private static final int METHODID_RUN_SUITE = 1;
  private static final int METHODID_LIST_CHECKS = 2;
  private static final int METHODID_VALIDATE_SUITE = 3;
  private static final int METHODID_RUN_SUITE_STREAM = 4;
  private static final int METHODID_SCORE_STREAM = 5;

  private static final class MethodHandlers<Req, Resp> implements
      io.grpc.stub.ServerCalls.UnaryMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ServerStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ClientStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.BidiStreamingMethod<Req, Resp> {
    private final ScoringServiceImplBase serviceImpl;
    private final int methodId;

    MethodHandlers(ScoringServiceImplBase serviceImpl, int methodId) {
      this.serviceImpl = serviceImpl;
      this.methodId = methodId;
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public void invoke(Req request, io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        case METHODID_SCORE:
          serviceImpl.score((dev.scorewire.v1.ScoreRequest) request,
              (io.grpc.stub.StreamObserver<dev.scorewire.v1.ScoreResponse>) responseObserver);
          break;
        case METHODID_RUN_SUITE:
          serviceImpl.runSuite((dev.scorewire.v1.RunSuiteRequest) request,
              (io.grpc.stub.StreamObserver<dev.scorewire.v1.RunSuiteResponse>) responseObserver);
          break;
        case METHODID_LIST_CHECKS:
          serviceImpl.listChecks((dev.scorewire.v1.ListChecksRequest) request,
              (io.grpc.stub.StreamObserver<dev.scorewire.v1.ListChecksResponse>) responseObserver);
          break;
        case METHODID_VALIDATE_SUITE:
          serviceImpl.validateSuite((dev.scorewire.v1.ValidateSuiteRequest) request,
              (io.grpc.stub.StreamObserver<dev.scorewire.v1.ValidateSuiteResponse>) responseObserver);
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
        case METHODID_RUN_SUITE_STREAM:
          return (io.grpc.stub.StreamObserver<Req>) serviceImpl.runSuiteStream(
              (io.grpc.stub.StreamObserver<dev.scorewire.v1.RunSuiteStreamResponse>) responseObserver);
        case METHODID_SCORE_STREAM:
          return (io.grpc.stub.StreamObserver<Req>) serviceImpl.scoreStream(
              (io.grpc.stub.StreamObserver<dev.scorewire.v1.ScoreStreamResponse>) responseObserver);
        default:
          throw new AssertionError();
      }
    }
  }

  private static abstract class ScoringServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    ScoringServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return dev.scorewire.v1.ScoringProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("ScoringService");
    }
  }

  private static final class ScoringServiceFileDescriptorSupplier
      extends ScoringServiceBaseDescriptorSupplier {
    ScoringServiceFileDescriptorSupplier() {}
  }

  private static final class ScoringServiceMethodDescriptorSupplier
      extends ScoringServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final String methodName;

    ScoringServiceMethodDescriptorSupplier(String methodName) {
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
      synchronized (ScoringServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new ScoringServiceFileDescriptorSupplier())
              .addMethod(getScoreMethod())
              .addMethod(getRunSuiteMethod())
              .addMethod(getRunSuiteStreamMethod())
              .addMethod(getScoreStreamMethod())
              .addMethod(getListChecksMethod())
              .addMethod(getValidateSuiteMethod())
              .build();
        }
      }
    }
    return result;
  }
}
