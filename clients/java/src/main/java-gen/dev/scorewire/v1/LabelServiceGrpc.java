package dev.scorewire.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * LabelService stores human labels and lists them. The server keeps them in SQLite (one
 * file that survives restarts) or, when `SCOREWIRE_LABELS_URL` names one, in PostgreSQL
 * shared by every replica.
 * </pre>
 */
@javax.annotation.Generated(
    value = "by gRPC proto compiler",
    comments = "Source: scorewire/v1/labels.proto")
@io.grpc.stub.annotations.GrpcGenerated
public final class LabelServiceGrpc {

  private LabelServiceGrpc() {}

  public static final String SERVICE_NAME = "scorewire.v1.LabelService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<dev.scorewire.v1.PutLabelsRequest,
      dev.scorewire.v1.PutLabelsResponse> getPutLabelsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "PutLabels",
      requestType = dev.scorewire.v1.PutLabelsRequest.class,
      responseType = dev.scorewire.v1.PutLabelsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.scorewire.v1.PutLabelsRequest,
      dev.scorewire.v1.PutLabelsResponse> getPutLabelsMethod() {
    io.grpc.MethodDescriptor<dev.scorewire.v1.PutLabelsRequest, dev.scorewire.v1.PutLabelsResponse> getPutLabelsMethod;
    if ((getPutLabelsMethod = LabelServiceGrpc.getPutLabelsMethod) == null) {
      synchronized (LabelServiceGrpc.class) {
        if ((getPutLabelsMethod = LabelServiceGrpc.getPutLabelsMethod) == null) {
          LabelServiceGrpc.getPutLabelsMethod = getPutLabelsMethod =
              io.grpc.MethodDescriptor.<dev.scorewire.v1.PutLabelsRequest, dev.scorewire.v1.PutLabelsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "PutLabels"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.PutLabelsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.PutLabelsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new LabelServiceMethodDescriptorSupplier("PutLabels"))
              .build();
        }
      }
    }
    return getPutLabelsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.scorewire.v1.ListLabelsRequest,
      dev.scorewire.v1.ListLabelsResponse> getListLabelsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListLabels",
      requestType = dev.scorewire.v1.ListLabelsRequest.class,
      responseType = dev.scorewire.v1.ListLabelsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.scorewire.v1.ListLabelsRequest,
      dev.scorewire.v1.ListLabelsResponse> getListLabelsMethod() {
    io.grpc.MethodDescriptor<dev.scorewire.v1.ListLabelsRequest, dev.scorewire.v1.ListLabelsResponse> getListLabelsMethod;
    if ((getListLabelsMethod = LabelServiceGrpc.getListLabelsMethod) == null) {
      synchronized (LabelServiceGrpc.class) {
        if ((getListLabelsMethod = LabelServiceGrpc.getListLabelsMethod) == null) {
          LabelServiceGrpc.getListLabelsMethod = getListLabelsMethod =
              io.grpc.MethodDescriptor.<dev.scorewire.v1.ListLabelsRequest, dev.scorewire.v1.ListLabelsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListLabels"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.ListLabelsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.ListLabelsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new LabelServiceMethodDescriptorSupplier("ListLabels"))
              .build();
        }
      }
    }
    return getListLabelsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.scorewire.v1.AgreementRequest,
      dev.scorewire.v1.AgreementResponse> getAgreementMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Agreement",
      requestType = dev.scorewire.v1.AgreementRequest.class,
      responseType = dev.scorewire.v1.AgreementResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.scorewire.v1.AgreementRequest,
      dev.scorewire.v1.AgreementResponse> getAgreementMethod() {
    io.grpc.MethodDescriptor<dev.scorewire.v1.AgreementRequest, dev.scorewire.v1.AgreementResponse> getAgreementMethod;
    if ((getAgreementMethod = LabelServiceGrpc.getAgreementMethod) == null) {
      synchronized (LabelServiceGrpc.class) {
        if ((getAgreementMethod = LabelServiceGrpc.getAgreementMethod) == null) {
          LabelServiceGrpc.getAgreementMethod = getAgreementMethod =
              io.grpc.MethodDescriptor.<dev.scorewire.v1.AgreementRequest, dev.scorewire.v1.AgreementResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Agreement"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.AgreementRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.AgreementResponse.getDefaultInstance()))
              .setSchemaDescriptor(new LabelServiceMethodDescriptorSupplier("Agreement"))
              .build();
        }
      }
    }
    return getAgreementMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.scorewire.v1.CalibrateRequest,
      dev.scorewire.v1.CalibrateResponse> getCalibrateMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Calibrate",
      requestType = dev.scorewire.v1.CalibrateRequest.class,
      responseType = dev.scorewire.v1.CalibrateResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.scorewire.v1.CalibrateRequest,
      dev.scorewire.v1.CalibrateResponse> getCalibrateMethod() {
    io.grpc.MethodDescriptor<dev.scorewire.v1.CalibrateRequest, dev.scorewire.v1.CalibrateResponse> getCalibrateMethod;
    if ((getCalibrateMethod = LabelServiceGrpc.getCalibrateMethod) == null) {
      synchronized (LabelServiceGrpc.class) {
        if ((getCalibrateMethod = LabelServiceGrpc.getCalibrateMethod) == null) {
          LabelServiceGrpc.getCalibrateMethod = getCalibrateMethod =
              io.grpc.MethodDescriptor.<dev.scorewire.v1.CalibrateRequest, dev.scorewire.v1.CalibrateResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Calibrate"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.CalibrateRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.CalibrateResponse.getDefaultInstance()))
              .setSchemaDescriptor(new LabelServiceMethodDescriptorSupplier("Calibrate"))
              .build();
        }
      }
    }
    return getCalibrateMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static LabelServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<LabelServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<LabelServiceStub>() {
        @java.lang.Override
        public LabelServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new LabelServiceStub(channel, callOptions);
        }
      };
    return LabelServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static LabelServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<LabelServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<LabelServiceBlockingStub>() {
        @java.lang.Override
        public LabelServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new LabelServiceBlockingStub(channel, callOptions);
        }
      };
    return LabelServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static LabelServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<LabelServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<LabelServiceFutureStub>() {
        @java.lang.Override
        public LabelServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new LabelServiceFutureStub(channel, callOptions);
        }
      };
    return LabelServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * LabelService stores human labels and lists them. The server keeps them in SQLite (one
   * file that survives restarts) or, when `SCOREWIRE_LABELS_URL` names one, in PostgreSQL
   * shared by every replica.
   * </pre>
   */
  public static abstract class LabelServiceImplBase implements io.grpc.BindableService {

    /**
     * <pre>
     * PutLabels stores labels, all or none. A label is acknowledged only once it is
     * committed to durable storage, so an acknowledged label survives a restart.
     * With bearer tokens on, a label belongs to a tenant (a token name) and records the
     * writing token's name as its labeller: a `caller` token writes only into its own
     * tenant, a `labeller` token into any tenant, an `admin` token into any tenant under
     * any labeller name; anything else is PERMISSION_DENIED naming the field.
     * Returns INVALID_ARGUMENT with a google.rpc.BadRequest naming every offending field
     * (for example `labels[2].output_hash`, or a `request_id` reused for other labels),
     * RESOURCE_EXHAUSTED for more than 1000 labels, and UNAVAILABLE when the label store
     * does not answer. The UNAVAILABLE message says either that nothing was stored, or
     * that the outcome is unknown; in both cases a retry with the same `request_id` is
     * safe: it stores the labels at most once.
     * </pre>
     */
    public void putLabels(dev.scorewire.v1.PutLabelsRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.PutLabelsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getPutLabelsMethod(), responseObserver);
    }

    /**
     * <pre>
     * ListLabels lists labels matching every filter that is set, ordered by when the
     * server stored them (oldest first), one page at a time. By default only the label
     * that counts (the latest per tenant, sample, output, check and labeller) is listed.
     * With bearer tokens on, a `caller` token lists only its own tenant's labels; a
     * `labeller` token also, naming another tenant, the labels it wrote there; an
     * `admin` token every tenant's. Naming a tenant the token may not read, or another
     * labeller's labels in such a tenant, is PERMISSION_DENIED.
     * Returns INVALID_ARGUMENT for a bad filter or page token, and UNAVAILABLE when the
     * label store does not answer.
     * </pre>
     */
    public void listLabels(dev.scorewire.v1.ListLabelsRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.ListLabelsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListLabelsMethod(), responseObserver);
    }

    /**
     * <pre>
     * Agreement scores the request's cases with its checks now (verdicts already in the
     * cache cost nothing), or with `run_id` reads a recorded run's judge-backed scores
     * (no judge call), and compares each judge-backed check's pass/fail with the
     * human labels of the same sample ids and exact outputs: pairs, accuracy, Cohen's
     * kappa with a bootstrap confidence interval, the confusion matrix, and the
     * disagreements, most confident first. Labels are read as ListLabels reads them:
     * a `caller` token sees only its own tenant's; runs as RunService.GetRun reads them.
     * Returns INVALID_ARGUMENT naming the field for bad cases, checks or options (no
     * judge-backed check among them, an unknown `check`, cases, checks or budget_usd
     * sent with `run_id`), RESOURCE_EXHAUSTED over a limit (the setting is named),
     * NOT_FOUND naming `run_id` for a run that does not exist or belongs to another
     * tenant, FAILED_PRECONDITION when a check has no labelled output to compare with
     * (zero pairs is never reported as a kappa) or the run recorded no judge-backed
     * score, and UNAVAILABLE when the label store or the run store does not answer
     * (or the server keeps no run store).
     * </pre>
     */
    public void agreement(dev.scorewire.v1.AgreementRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.AgreementResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getAgreementMethod(), responseObserver);
    }

    /**
     * <pre>
     * Calibrate scores like Agreement, once, then applies each candidate threshold to
     * the verdicts already given (no further judge calls) and reports the agreement
     * with the labels at each, recommending the threshold with the highest kappa, and
     * what the judge cost per labelled pair. Errors as for Agreement.
     * </pre>
     */
    public void calibrate(dev.scorewire.v1.CalibrateRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.CalibrateResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getCalibrateMethod(), responseObserver);
    }

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return io.grpc.ServerServiceDefinition.builder(getServiceDescriptor())
          .addMethod(
            getPutLabelsMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                dev.scorewire.v1.PutLabelsRequest,
                dev.scorewire.v1.PutLabelsResponse>(
                  this, METHODID_PUT_LABELS)))
          .addMethod(
            getListLabelsMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                dev.scorewire.v1.ListLabelsRequest,
                dev.scorewire.v1.ListLabelsResponse>(
                  this, METHODID_LIST_LABELS)))
          .addMethod(
            getAgreementMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                dev.scorewire.v1.AgreementRequest,
                dev.scorewire.v1.AgreementResponse>(
                  this, METHODID_AGREEMENT)))
          .addMethod(
            getCalibrateMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                dev.scorewire.v1.CalibrateRequest,
                dev.scorewire.v1.CalibrateResponse>(
                  this, METHODID_CALIBRATE)))
          .build();
    }
  }

  /**
   * <pre>
   * LabelService stores human labels and lists them. The server keeps them in SQLite (one
   * file that survives restarts) or, when `SCOREWIRE_LABELS_URL` names one, in PostgreSQL
   * shared by every replica.
   * </pre>
   */
  public static final class LabelServiceStub extends io.grpc.stub.AbstractAsyncStub<LabelServiceStub> {
    private LabelServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected LabelServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new LabelServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * PutLabels stores labels, all or none. A label is acknowledged only once it is
     * committed to durable storage, so an acknowledged label survives a restart.
     * With bearer tokens on, a label belongs to a tenant (a token name) and records the
     * writing token's name as its labeller: a `caller` token writes only into its own
     * tenant, a `labeller` token into any tenant, an `admin` token into any tenant under
     * any labeller name; anything else is PERMISSION_DENIED naming the field.
     * Returns INVALID_ARGUMENT with a google.rpc.BadRequest naming every offending field
     * (for example `labels[2].output_hash`, or a `request_id` reused for other labels),
     * RESOURCE_EXHAUSTED for more than 1000 labels, and UNAVAILABLE when the label store
     * does not answer. The UNAVAILABLE message says either that nothing was stored, or
     * that the outcome is unknown; in both cases a retry with the same `request_id` is
     * safe: it stores the labels at most once.
     * </pre>
     */
    public void putLabels(dev.scorewire.v1.PutLabelsRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.PutLabelsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getPutLabelsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * ListLabels lists labels matching every filter that is set, ordered by when the
     * server stored them (oldest first), one page at a time. By default only the label
     * that counts (the latest per tenant, sample, output, check and labeller) is listed.
     * With bearer tokens on, a `caller` token lists only its own tenant's labels; a
     * `labeller` token also, naming another tenant, the labels it wrote there; an
     * `admin` token every tenant's. Naming a tenant the token may not read, or another
     * labeller's labels in such a tenant, is PERMISSION_DENIED.
     * Returns INVALID_ARGUMENT for a bad filter or page token, and UNAVAILABLE when the
     * label store does not answer.
     * </pre>
     */
    public void listLabels(dev.scorewire.v1.ListLabelsRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.ListLabelsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListLabelsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Agreement scores the request's cases with its checks now (verdicts already in the
     * cache cost nothing), or with `run_id` reads a recorded run's judge-backed scores
     * (no judge call), and compares each judge-backed check's pass/fail with the
     * human labels of the same sample ids and exact outputs: pairs, accuracy, Cohen's
     * kappa with a bootstrap confidence interval, the confusion matrix, and the
     * disagreements, most confident first. Labels are read as ListLabels reads them:
     * a `caller` token sees only its own tenant's; runs as RunService.GetRun reads them.
     * Returns INVALID_ARGUMENT naming the field for bad cases, checks or options (no
     * judge-backed check among them, an unknown `check`, cases, checks or budget_usd
     * sent with `run_id`), RESOURCE_EXHAUSTED over a limit (the setting is named),
     * NOT_FOUND naming `run_id` for a run that does not exist or belongs to another
     * tenant, FAILED_PRECONDITION when a check has no labelled output to compare with
     * (zero pairs is never reported as a kappa) or the run recorded no judge-backed
     * score, and UNAVAILABLE when the label store or the run store does not answer
     * (or the server keeps no run store).
     * </pre>
     */
    public void agreement(dev.scorewire.v1.AgreementRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.AgreementResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getAgreementMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Calibrate scores like Agreement, once, then applies each candidate threshold to
     * the verdicts already given (no further judge calls) and reports the agreement
     * with the labels at each, recommending the threshold with the highest kappa, and
     * what the judge cost per labelled pair. Errors as for Agreement.
     * </pre>
     */
    public void calibrate(dev.scorewire.v1.CalibrateRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.CalibrateResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getCalibrateMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * <pre>
   * LabelService stores human labels and lists them. The server keeps them in SQLite (one
   * file that survives restarts) or, when `SCOREWIRE_LABELS_URL` names one, in PostgreSQL
   * shared by every replica.
   * </pre>
   */
  public static final class LabelServiceBlockingStub extends io.grpc.stub.AbstractBlockingStub<LabelServiceBlockingStub> {
    private LabelServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected LabelServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new LabelServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * PutLabels stores labels, all or none. A label is acknowledged only once it is
     * committed to durable storage, so an acknowledged label survives a restart.
     * With bearer tokens on, a label belongs to a tenant (a token name) and records the
     * writing token's name as its labeller: a `caller` token writes only into its own
     * tenant, a `labeller` token into any tenant, an `admin` token into any tenant under
     * any labeller name; anything else is PERMISSION_DENIED naming the field.
     * Returns INVALID_ARGUMENT with a google.rpc.BadRequest naming every offending field
     * (for example `labels[2].output_hash`, or a `request_id` reused for other labels),
     * RESOURCE_EXHAUSTED for more than 1000 labels, and UNAVAILABLE when the label store
     * does not answer. The UNAVAILABLE message says either that nothing was stored, or
     * that the outcome is unknown; in both cases a retry with the same `request_id` is
     * safe: it stores the labels at most once.
     * </pre>
     */
    public dev.scorewire.v1.PutLabelsResponse putLabels(dev.scorewire.v1.PutLabelsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getPutLabelsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ListLabels lists labels matching every filter that is set, ordered by when the
     * server stored them (oldest first), one page at a time. By default only the label
     * that counts (the latest per tenant, sample, output, check and labeller) is listed.
     * With bearer tokens on, a `caller` token lists only its own tenant's labels; a
     * `labeller` token also, naming another tenant, the labels it wrote there; an
     * `admin` token every tenant's. Naming a tenant the token may not read, or another
     * labeller's labels in such a tenant, is PERMISSION_DENIED.
     * Returns INVALID_ARGUMENT for a bad filter or page token, and UNAVAILABLE when the
     * label store does not answer.
     * </pre>
     */
    public dev.scorewire.v1.ListLabelsResponse listLabels(dev.scorewire.v1.ListLabelsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListLabelsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Agreement scores the request's cases with its checks now (verdicts already in the
     * cache cost nothing), or with `run_id` reads a recorded run's judge-backed scores
     * (no judge call), and compares each judge-backed check's pass/fail with the
     * human labels of the same sample ids and exact outputs: pairs, accuracy, Cohen's
     * kappa with a bootstrap confidence interval, the confusion matrix, and the
     * disagreements, most confident first. Labels are read as ListLabels reads them:
     * a `caller` token sees only its own tenant's; runs as RunService.GetRun reads them.
     * Returns INVALID_ARGUMENT naming the field for bad cases, checks or options (no
     * judge-backed check among them, an unknown `check`, cases, checks or budget_usd
     * sent with `run_id`), RESOURCE_EXHAUSTED over a limit (the setting is named),
     * NOT_FOUND naming `run_id` for a run that does not exist or belongs to another
     * tenant, FAILED_PRECONDITION when a check has no labelled output to compare with
     * (zero pairs is never reported as a kappa) or the run recorded no judge-backed
     * score, and UNAVAILABLE when the label store or the run store does not answer
     * (or the server keeps no run store).
     * </pre>
     */
    public dev.scorewire.v1.AgreementResponse agreement(dev.scorewire.v1.AgreementRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getAgreementMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Calibrate scores like Agreement, once, then applies each candidate threshold to
     * the verdicts already given (no further judge calls) and reports the agreement
     * with the labels at each, recommending the threshold with the highest kappa, and
     * what the judge cost per labelled pair. Errors as for Agreement.
     * </pre>
     */
    public dev.scorewire.v1.CalibrateResponse calibrate(dev.scorewire.v1.CalibrateRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getCalibrateMethod(), getCallOptions(), request);
    }
  }

  /**
   * <pre>
   * LabelService stores human labels and lists them. The server keeps them in SQLite (one
   * file that survives restarts) or, when `SCOREWIRE_LABELS_URL` names one, in PostgreSQL
   * shared by every replica.
   * </pre>
   */
  public static final class LabelServiceFutureStub extends io.grpc.stub.AbstractFutureStub<LabelServiceFutureStub> {
    private LabelServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected LabelServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new LabelServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * PutLabels stores labels, all or none. A label is acknowledged only once it is
     * committed to durable storage, so an acknowledged label survives a restart.
     * With bearer tokens on, a label belongs to a tenant (a token name) and records the
     * writing token's name as its labeller: a `caller` token writes only into its own
     * tenant, a `labeller` token into any tenant, an `admin` token into any tenant under
     * any labeller name; anything else is PERMISSION_DENIED naming the field.
     * Returns INVALID_ARGUMENT with a google.rpc.BadRequest naming every offending field
     * (for example `labels[2].output_hash`, or a `request_id` reused for other labels),
     * RESOURCE_EXHAUSTED for more than 1000 labels, and UNAVAILABLE when the label store
     * does not answer. The UNAVAILABLE message says either that nothing was stored, or
     * that the outcome is unknown; in both cases a retry with the same `request_id` is
     * safe: it stores the labels at most once.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.scorewire.v1.PutLabelsResponse> putLabels(
        dev.scorewire.v1.PutLabelsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getPutLabelsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * ListLabels lists labels matching every filter that is set, ordered by when the
     * server stored them (oldest first), one page at a time. By default only the label
     * that counts (the latest per tenant, sample, output, check and labeller) is listed.
     * With bearer tokens on, a `caller` token lists only its own tenant's labels; a
     * `labeller` token also, naming another tenant, the labels it wrote there; an
     * `admin` token every tenant's. Naming a tenant the token may not read, or another
     * labeller's labels in such a tenant, is PERMISSION_DENIED.
     * Returns INVALID_ARGUMENT for a bad filter or page token, and UNAVAILABLE when the
     * label store does not answer.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.scorewire.v1.ListLabelsResponse> listLabels(
        dev.scorewire.v1.ListLabelsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListLabelsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Agreement scores the request's cases with its checks now (verdicts already in the
     * cache cost nothing), or with `run_id` reads a recorded run's judge-backed scores
     * (no judge call), and compares each judge-backed check's pass/fail with the
     * human labels of the same sample ids and exact outputs: pairs, accuracy, Cohen's
     * kappa with a bootstrap confidence interval, the confusion matrix, and the
     * disagreements, most confident first. Labels are read as ListLabels reads them:
     * a `caller` token sees only its own tenant's; runs as RunService.GetRun reads them.
     * Returns INVALID_ARGUMENT naming the field for bad cases, checks or options (no
     * judge-backed check among them, an unknown `check`, cases, checks or budget_usd
     * sent with `run_id`), RESOURCE_EXHAUSTED over a limit (the setting is named),
     * NOT_FOUND naming `run_id` for a run that does not exist or belongs to another
     * tenant, FAILED_PRECONDITION when a check has no labelled output to compare with
     * (zero pairs is never reported as a kappa) or the run recorded no judge-backed
     * score, and UNAVAILABLE when the label store or the run store does not answer
     * (or the server keeps no run store).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.scorewire.v1.AgreementResponse> agreement(
        dev.scorewire.v1.AgreementRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getAgreementMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Calibrate scores like Agreement, once, then applies each candidate threshold to
     * the verdicts already given (no further judge calls) and reports the agreement
     * with the labels at each, recommending the threshold with the highest kappa, and
     * what the judge cost per labelled pair. Errors as for Agreement.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.scorewire.v1.CalibrateResponse> calibrate(
        dev.scorewire.v1.CalibrateRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getCalibrateMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_PUT_LABELS = 0;
  private static final int METHODID_LIST_LABELS = 1;
  private static final int METHODID_AGREEMENT = 2;
  private static final int METHODID_CALIBRATE = 3;

  private static final class MethodHandlers<Req, Resp> implements
      io.grpc.stub.ServerCalls.UnaryMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ServerStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ClientStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.BidiStreamingMethod<Req, Resp> {
    private final LabelServiceImplBase serviceImpl;
    private final int methodId;

    MethodHandlers(LabelServiceImplBase serviceImpl, int methodId) {
      this.serviceImpl = serviceImpl;
      this.methodId = methodId;
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public void invoke(Req request, io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        case METHODID_PUT_LABELS:
          serviceImpl.putLabels((dev.scorewire.v1.PutLabelsRequest) request,
              (io.grpc.stub.StreamObserver<dev.scorewire.v1.PutLabelsResponse>) responseObserver);
          break;
        case METHODID_LIST_LABELS:
          serviceImpl.listLabels((dev.scorewire.v1.ListLabelsRequest) request,
              (io.grpc.stub.StreamObserver<dev.scorewire.v1.ListLabelsResponse>) responseObserver);
          break;
        case METHODID_AGREEMENT:
          serviceImpl.agreement((dev.scorewire.v1.AgreementRequest) request,
              (io.grpc.stub.StreamObserver<dev.scorewire.v1.AgreementResponse>) responseObserver);
          break;
        case METHODID_CALIBRATE:
          serviceImpl.calibrate((dev.scorewire.v1.CalibrateRequest) request,
              (io.grpc.stub.StreamObserver<dev.scorewire.v1.CalibrateResponse>) responseObserver);
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

  private static abstract class LabelServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    LabelServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return dev.scorewire.v1.LabelsProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("LabelService");
    }
  }

  private static final class LabelServiceFileDescriptorSupplier
      extends LabelServiceBaseDescriptorSupplier {
    LabelServiceFileDescriptorSupplier() {}
  }

  private static final class LabelServiceMethodDescriptorSupplier
      extends LabelServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final String methodName;

    LabelServiceMethodDescriptorSupplier(String methodName) {
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
      synchronized (LabelServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new LabelServiceFileDescriptorSupplier())
              .addMethod(getPutLabelsMethod())
              .addMethod(getListLabelsMethod())
              .addMethod(getAgreementMethod())
              .addMethod(getCalibrateMethod())
              .build();
        }
      }
    }
    return result;
  }
}
