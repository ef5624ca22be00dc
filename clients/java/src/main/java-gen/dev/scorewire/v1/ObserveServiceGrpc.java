package dev.scorewire.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * ObserveService takes production outputs for online evaluation and lists the rules that
 * score them.
 * Observe is unary with a batch rather than client streaming: a batch is queued in one
 * write (one round trip to the queue), its answer says what became of each observation,
 * and a caller that retries a batch after a lost answer resends it whole (observation ids
 * make that harmless). A stream would acknowledge nothing until it ends, or need an answer
 * stream to say so. Bad input is INVALID_ARGUMENT with a google.rpc.BadRequest naming each
 * offending field, and nothing of the batch is queued; a full queue, or a tenant's full
 * share of it (`SCOREWIRE_OBSERVE_QUEUE_MAX_PER_TENANT`), is RESOURCE_EXHAUSTED naming the
 * setting, and nothing of the batch is queued; a queue that does not answer is UNAVAILABLE.
 * </pre>
 */
@javax.annotation.Generated(
    value = "by gRPC proto compiler",
    comments = "Source: scorewire/v1/observe.proto")
@io.grpc.stub.annotations.GrpcGenerated
public final class ObserveServiceGrpc {

  private ObserveServiceGrpc() {}

  public static final String SERVICE_NAME = "scorewire.v1.ObserveService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<dev.scorewire.v1.ObserveRequest,
      dev.scorewire.v1.ObserveResponse> getObserveMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Observe",
      requestType = dev.scorewire.v1.ObserveRequest.class,
      responseType = dev.scorewire.v1.ObserveResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.scorewire.v1.ObserveRequest,
      dev.scorewire.v1.ObserveResponse> getObserveMethod() {
    io.grpc.MethodDescriptor<dev.scorewire.v1.ObserveRequest, dev.scorewire.v1.ObserveResponse> getObserveMethod;
    if ((getObserveMethod = ObserveServiceGrpc.getObserveMethod) == null) {
      synchronized (ObserveServiceGrpc.class) {
        if ((getObserveMethod = ObserveServiceGrpc.getObserveMethod) == null) {
          ObserveServiceGrpc.getObserveMethod = getObserveMethod =
              io.grpc.MethodDescriptor.<dev.scorewire.v1.ObserveRequest, dev.scorewire.v1.ObserveResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Observe"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.ObserveRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.ObserveResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ObserveServiceMethodDescriptorSupplier("Observe"))
              .build();
        }
      }
    }
    return getObserveMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.scorewire.v1.ListRulesRequest,
      dev.scorewire.v1.ListRulesResponse> getListRulesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListRules",
      requestType = dev.scorewire.v1.ListRulesRequest.class,
      responseType = dev.scorewire.v1.ListRulesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.scorewire.v1.ListRulesRequest,
      dev.scorewire.v1.ListRulesResponse> getListRulesMethod() {
    io.grpc.MethodDescriptor<dev.scorewire.v1.ListRulesRequest, dev.scorewire.v1.ListRulesResponse> getListRulesMethod;
    if ((getListRulesMethod = ObserveServiceGrpc.getListRulesMethod) == null) {
      synchronized (ObserveServiceGrpc.class) {
        if ((getListRulesMethod = ObserveServiceGrpc.getListRulesMethod) == null) {
          ObserveServiceGrpc.getListRulesMethod = getListRulesMethod =
              io.grpc.MethodDescriptor.<dev.scorewire.v1.ListRulesRequest, dev.scorewire.v1.ListRulesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListRules"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.ListRulesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.ListRulesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ObserveServiceMethodDescriptorSupplier("ListRules"))
              .build();
        }
      }
    }
    return getListRulesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.scorewire.v1.CreateRuleRequest,
      dev.scorewire.v1.CreateRuleResponse> getCreateRuleMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "CreateRule",
      requestType = dev.scorewire.v1.CreateRuleRequest.class,
      responseType = dev.scorewire.v1.CreateRuleResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.scorewire.v1.CreateRuleRequest,
      dev.scorewire.v1.CreateRuleResponse> getCreateRuleMethod() {
    io.grpc.MethodDescriptor<dev.scorewire.v1.CreateRuleRequest, dev.scorewire.v1.CreateRuleResponse> getCreateRuleMethod;
    if ((getCreateRuleMethod = ObserveServiceGrpc.getCreateRuleMethod) == null) {
      synchronized (ObserveServiceGrpc.class) {
        if ((getCreateRuleMethod = ObserveServiceGrpc.getCreateRuleMethod) == null) {
          ObserveServiceGrpc.getCreateRuleMethod = getCreateRuleMethod =
              io.grpc.MethodDescriptor.<dev.scorewire.v1.CreateRuleRequest, dev.scorewire.v1.CreateRuleResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "CreateRule"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.CreateRuleRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.CreateRuleResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ObserveServiceMethodDescriptorSupplier("CreateRule"))
              .build();
        }
      }
    }
    return getCreateRuleMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.scorewire.v1.UpdateRuleRequest,
      dev.scorewire.v1.UpdateRuleResponse> getUpdateRuleMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "UpdateRule",
      requestType = dev.scorewire.v1.UpdateRuleRequest.class,
      responseType = dev.scorewire.v1.UpdateRuleResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.scorewire.v1.UpdateRuleRequest,
      dev.scorewire.v1.UpdateRuleResponse> getUpdateRuleMethod() {
    io.grpc.MethodDescriptor<dev.scorewire.v1.UpdateRuleRequest, dev.scorewire.v1.UpdateRuleResponse> getUpdateRuleMethod;
    if ((getUpdateRuleMethod = ObserveServiceGrpc.getUpdateRuleMethod) == null) {
      synchronized (ObserveServiceGrpc.class) {
        if ((getUpdateRuleMethod = ObserveServiceGrpc.getUpdateRuleMethod) == null) {
          ObserveServiceGrpc.getUpdateRuleMethod = getUpdateRuleMethod =
              io.grpc.MethodDescriptor.<dev.scorewire.v1.UpdateRuleRequest, dev.scorewire.v1.UpdateRuleResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "UpdateRule"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.UpdateRuleRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.UpdateRuleResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ObserveServiceMethodDescriptorSupplier("UpdateRule"))
              .build();
        }
      }
    }
    return getUpdateRuleMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.scorewire.v1.DeleteRuleRequest,
      dev.scorewire.v1.DeleteRuleResponse> getDeleteRuleMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeleteRule",
      requestType = dev.scorewire.v1.DeleteRuleRequest.class,
      responseType = dev.scorewire.v1.DeleteRuleResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.scorewire.v1.DeleteRuleRequest,
      dev.scorewire.v1.DeleteRuleResponse> getDeleteRuleMethod() {
    io.grpc.MethodDescriptor<dev.scorewire.v1.DeleteRuleRequest, dev.scorewire.v1.DeleteRuleResponse> getDeleteRuleMethod;
    if ((getDeleteRuleMethod = ObserveServiceGrpc.getDeleteRuleMethod) == null) {
      synchronized (ObserveServiceGrpc.class) {
        if ((getDeleteRuleMethod = ObserveServiceGrpc.getDeleteRuleMethod) == null) {
          ObserveServiceGrpc.getDeleteRuleMethod = getDeleteRuleMethod =
              io.grpc.MethodDescriptor.<dev.scorewire.v1.DeleteRuleRequest, dev.scorewire.v1.DeleteRuleResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeleteRule"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.DeleteRuleRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.DeleteRuleResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ObserveServiceMethodDescriptorSupplier("DeleteRule"))
              .build();
        }
      }
    }
    return getDeleteRuleMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static ObserveServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<ObserveServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<ObserveServiceStub>() {
        @java.lang.Override
        public ObserveServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new ObserveServiceStub(channel, callOptions);
        }
      };
    return ObserveServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static ObserveServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<ObserveServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<ObserveServiceBlockingStub>() {
        @java.lang.Override
        public ObserveServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new ObserveServiceBlockingStub(channel, callOptions);
        }
      };
    return ObserveServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static ObserveServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<ObserveServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<ObserveServiceFutureStub>() {
        @java.lang.Override
        public ObserveServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new ObserveServiceFutureStub(channel, callOptions);
        }
      };
    return ObserveServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * ObserveService takes production outputs for online evaluation and lists the rules that
   * score them.
   * Observe is unary with a batch rather than client streaming: a batch is queued in one
   * write (one round trip to the queue), its answer says what became of each observation,
   * and a caller that retries a batch after a lost answer resends it whole (observation ids
   * make that harmless). A stream would acknowledge nothing until it ends, or need an answer
   * stream to say so. Bad input is INVALID_ARGUMENT with a google.rpc.BadRequest naming each
   * offending field, and nothing of the batch is queued; a full queue, or a tenant's full
   * share of it (`SCOREWIRE_OBSERVE_QUEUE_MAX_PER_TENANT`), is RESOURCE_EXHAUSTED naming the
   * setting, and nothing of the batch is queued; a queue that does not answer is UNAVAILABLE.
   * </pre>
   */
  public static abstract class ObserveServiceImplBase implements io.grpc.BindableService {

    /**
     * <pre>
     * Observe queues a batch of observations and returns once every accepted one is durably
     * queued (committed to SQLite, or written by Redis). The batch is queued whole or not at
     * all.
     * </pre>
     */
    public void observe(dev.scorewire.v1.ObserveRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.ObserveResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getObserveMethod(), responseObserver);
    }

    /**
     * <pre>
     * ListRules returns the evaluation rules this server applies: those of its rules file
     * (`SCOREWIRE_OBSERVE_RULES_FILE`) in file order, then those created over gRPC by name.
     * </pre>
     */
    public void listRules(dev.scorewire.v1.ListRulesRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.ListRulesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListRulesMethod(), responseObserver);
    }

    /**
     * <pre>
     * CreateRule adds an evaluation rule, stored durably beside the observation queue (its
     * SQLite file or its Redis), so that every replica applies it within a few seconds.
     * Admin tokens only (PERMISSION_DENIED otherwise; anyone with auth off). A bad rule (an
     * unknown check type, a bad parameter, a rate out of range, a judge under a cost cap whose
     * model has no price) is INVALID_ARGUMENT naming the field (`rule.checks[0].type`); a
     * name taken by another rule is ALREADY_EXISTS.
     * </pre>
     */
    public void createRule(dev.scorewire.v1.CreateRuleRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.CreateRuleResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getCreateRuleMethod(), responseObserver);
    }

    /**
     * <pre>
     * UpdateRule replaces a rule created over gRPC, checked as CreateRule. NOT_FOUND when no
     * such rule was created; a rule of the rules file is FAILED_PRECONDITION (edit the file).
     * </pre>
     */
    public void updateRule(dev.scorewire.v1.UpdateRuleRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.UpdateRuleResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getUpdateRuleMethod(), responseObserver);
    }

    /**
     * <pre>
     * DeleteRule removes a rule created over gRPC; its rolling runs stay. NOT_FOUND and
     * FAILED_PRECONDITION as UpdateRule.
     * </pre>
     */
    public void deleteRule(dev.scorewire.v1.DeleteRuleRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.DeleteRuleResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeleteRuleMethod(), responseObserver);
    }

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return io.grpc.ServerServiceDefinition.builder(getServiceDescriptor())
          .addMethod(
            getObserveMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                dev.scorewire.v1.ObserveRequest,
                dev.scorewire.v1.ObserveResponse>(
                  this, METHODID_OBSERVE)))
          .addMethod(
            getListRulesMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                dev.scorewire.v1.ListRulesRequest,
                dev.scorewire.v1.ListRulesResponse>(
                  this, METHODID_LIST_RULES)))
          .addMethod(
            getCreateRuleMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                dev.scorewire.v1.CreateRuleRequest,
                dev.scorewire.v1.CreateRuleResponse>(
                  this, METHODID_CREATE_RULE)))
          .addMethod(
            getUpdateRuleMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                dev.scorewire.v1.UpdateRuleRequest,
                dev.scorewire.v1.UpdateRuleResponse>(
                  this, METHODID_UPDATE_RULE)))
          .addMethod(
            getDeleteRuleMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                dev.scorewire.v1.DeleteRuleRequest,
                dev.scorewire.v1.DeleteRuleResponse>(
                  this, METHODID_DELETE_RULE)))
          .build();
    }
  }

  /**
   * <pre>
   * ObserveService takes production outputs for online evaluation and lists the rules that
   * score them.
   * Observe is unary with a batch rather than client streaming: a batch is queued in one
   * write (one round trip to the queue), its answer says what became of each observation,
   * and a caller that retries a batch after a lost answer resends it whole (observation ids
   * make that harmless). A stream would acknowledge nothing until it ends, or need an answer
   * stream to say so. Bad input is INVALID_ARGUMENT with a google.rpc.BadRequest naming each
   * offending field, and nothing of the batch is queued; a full queue, or a tenant's full
   * share of it (`SCOREWIRE_OBSERVE_QUEUE_MAX_PER_TENANT`), is RESOURCE_EXHAUSTED naming the
   * setting, and nothing of the batch is queued; a queue that does not answer is UNAVAILABLE.
   * </pre>
   */
  public static final class ObserveServiceStub extends io.grpc.stub.AbstractAsyncStub<ObserveServiceStub> {
    private ObserveServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected ObserveServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new ObserveServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * Observe queues a batch of observations and returns once every accepted one is durably
     * queued (committed to SQLite, or written by Redis). The batch is queued whole or not at
     * all.
     * </pre>
     */
    public void observe(dev.scorewire.v1.ObserveRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.ObserveResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getObserveMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * ListRules returns the evaluation rules this server applies: those of its rules file
     * (`SCOREWIRE_OBSERVE_RULES_FILE`) in file order, then those created over gRPC by name.
     * </pre>
     */
    public void listRules(dev.scorewire.v1.ListRulesRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.ListRulesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListRulesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * CreateRule adds an evaluation rule, stored durably beside the observation queue (its
     * SQLite file or its Redis), so that every replica applies it within a few seconds.
     * Admin tokens only (PERMISSION_DENIED otherwise; anyone with auth off). A bad rule (an
     * unknown check type, a bad parameter, a rate out of range, a judge under a cost cap whose
     * model has no price) is INVALID_ARGUMENT naming the field (`rule.checks[0].type`); a
     * name taken by another rule is ALREADY_EXISTS.
     * </pre>
     */
    public void createRule(dev.scorewire.v1.CreateRuleRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.CreateRuleResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getCreateRuleMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * UpdateRule replaces a rule created over gRPC, checked as CreateRule. NOT_FOUND when no
     * such rule was created; a rule of the rules file is FAILED_PRECONDITION (edit the file).
     * </pre>
     */
    public void updateRule(dev.scorewire.v1.UpdateRuleRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.UpdateRuleResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getUpdateRuleMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * DeleteRule removes a rule created over gRPC; its rolling runs stay. NOT_FOUND and
     * FAILED_PRECONDITION as UpdateRule.
     * </pre>
     */
    public void deleteRule(dev.scorewire.v1.DeleteRuleRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.DeleteRuleResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeleteRuleMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * <pre>
   * ObserveService takes production outputs for online evaluation and lists the rules that
   * score them.
   * Observe is unary with a batch rather than client streaming: a batch is queued in one
   * write (one round trip to the queue), its answer says what became of each observation,
   * and a caller that retries a batch after a lost answer resends it whole (observation ids
   * make that harmless). A stream would acknowledge nothing until it ends, or need an answer
   * stream to say so. Bad input is INVALID_ARGUMENT with a google.rpc.BadRequest naming each
   * offending field, and nothing of the batch is queued; a full queue, or a tenant's full
   * share of it (`SCOREWIRE_OBSERVE_QUEUE_MAX_PER_TENANT`), is RESOURCE_EXHAUSTED naming the
   * setting, and nothing of the batch is queued; a queue that does not answer is UNAVAILABLE.
   * </pre>
   */
  public static final class ObserveServiceBlockingStub extends io.grpc.stub.AbstractBlockingStub<ObserveServiceBlockingStub> {
    private ObserveServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected ObserveServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new ObserveServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * Observe queues a batch of observations and returns once every accepted one is durably
     * queued (committed to SQLite, or written by Redis). The batch is queued whole or not at
     * all.
     * </pre>
     */
    public dev.scorewire.v1.ObserveResponse observe(dev.scorewire.v1.ObserveRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getObserveMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ListRules returns the evaluation rules this server applies: those of its rules file
     * (`SCOREWIRE_OBSERVE_RULES_FILE`) in file order, then those created over gRPC by name.
     * </pre>
     */
    public dev.scorewire.v1.ListRulesResponse listRules(dev.scorewire.v1.ListRulesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListRulesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * CreateRule adds an evaluation rule, stored durably beside the observation queue (its
     * SQLite file or its Redis), so that every replica applies it within a few seconds.
     * Admin tokens only (PERMISSION_DENIED otherwise; anyone with auth off). A bad rule (an
     * unknown check type, a bad parameter, a rate out of range, a judge under a cost cap whose
     * model has no price) is INVALID_ARGUMENT naming the field (`rule.checks[0].type`); a
     * name taken by another rule is ALREADY_EXISTS.
     * </pre>
     */
    public dev.scorewire.v1.CreateRuleResponse createRule(dev.scorewire.v1.CreateRuleRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getCreateRuleMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * UpdateRule replaces a rule created over gRPC, checked as CreateRule. NOT_FOUND when no
     * such rule was created; a rule of the rules file is FAILED_PRECONDITION (edit the file).
     * </pre>
     */
    public dev.scorewire.v1.UpdateRuleResponse updateRule(dev.scorewire.v1.UpdateRuleRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getUpdateRuleMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * DeleteRule removes a rule created over gRPC; its rolling runs stay. NOT_FOUND and
     * FAILED_PRECONDITION as UpdateRule.
     * </pre>
     */
    public dev.scorewire.v1.DeleteRuleResponse deleteRule(dev.scorewire.v1.DeleteRuleRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeleteRuleMethod(), getCallOptions(), request);
    }
  }

  /**
   * <pre>
   * ObserveService takes production outputs for online evaluation and lists the rules that
   * score them.
   * Observe is unary with a batch rather than client streaming: a batch is queued in one
   * write (one round trip to the queue), its answer says what became of each observation,
   * and a caller that retries a batch after a lost answer resends it whole (observation ids
   * make that harmless). A stream would acknowledge nothing until it ends, or need an answer
   * stream to say so. Bad input is INVALID_ARGUMENT with a google.rpc.BadRequest naming each
   * offending field, and nothing of the batch is queued; a full queue, or a tenant's full
   * share of it (`SCOREWIRE_OBSERVE_QUEUE_MAX_PER_TENANT`), is RESOURCE_EXHAUSTED naming the
   * setting, and nothing of the batch is queued; a queue that does not answer is UNAVAILABLE.
   * </pre>
   */
  public static final class ObserveServiceFutureStub extends io.grpc.stub.AbstractFutureStub<ObserveServiceFutureStub> {
    private ObserveServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected ObserveServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new ObserveServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * Observe queues a batch of observations and returns once every accepted one is durably
     * queued (committed to SQLite, or written by Redis). The batch is queued whole or not at
     * all.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.scorewire.v1.ObserveResponse> observe(
        dev.scorewire.v1.ObserveRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getObserveMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * ListRules returns the evaluation rules this server applies: those of its rules file
     * (`SCOREWIRE_OBSERVE_RULES_FILE`) in file order, then those created over gRPC by name.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.scorewire.v1.ListRulesResponse> listRules(
        dev.scorewire.v1.ListRulesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListRulesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * CreateRule adds an evaluation rule, stored durably beside the observation queue (its
     * SQLite file or its Redis), so that every replica applies it within a few seconds.
     * Admin tokens only (PERMISSION_DENIED otherwise; anyone with auth off). A bad rule (an
     * unknown check type, a bad parameter, a rate out of range, a judge under a cost cap whose
     * model has no price) is INVALID_ARGUMENT naming the field (`rule.checks[0].type`); a
     * name taken by another rule is ALREADY_EXISTS.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.scorewire.v1.CreateRuleResponse> createRule(
        dev.scorewire.v1.CreateRuleRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getCreateRuleMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * UpdateRule replaces a rule created over gRPC, checked as CreateRule. NOT_FOUND when no
     * such rule was created; a rule of the rules file is FAILED_PRECONDITION (edit the file).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.scorewire.v1.UpdateRuleResponse> updateRule(
        dev.scorewire.v1.UpdateRuleRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getUpdateRuleMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * DeleteRule removes a rule created over gRPC; its rolling runs stay. NOT_FOUND and
     * FAILED_PRECONDITION as UpdateRule.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.scorewire.v1.DeleteRuleResponse> deleteRule(
        dev.scorewire.v1.DeleteRuleRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeleteRuleMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_OBSERVE = 0;
  private static final int METHODID_LIST_RULES = 1;
  private static final int METHODID_CREATE_RULE = 2;
  private static final int METHODID_UPDATE_RULE = 3;
  private static final int METHODID_DELETE_RULE = 4;

  private static final class MethodHandlers<Req, Resp> implements
      io.grpc.stub.ServerCalls.UnaryMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ServerStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ClientStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.BidiStreamingMethod<Req, Resp> {
    private final ObserveServiceImplBase serviceImpl;
    private final int methodId;

    MethodHandlers(ObserveServiceImplBase serviceImpl, int methodId) {
      this.serviceImpl = serviceImpl;
      this.methodId = methodId;
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public void invoke(Req request, io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        case METHODID_OBSERVE:
          serviceImpl.observe((dev.scorewire.v1.ObserveRequest) request,
              (io.grpc.stub.StreamObserver<dev.scorewire.v1.ObserveResponse>) responseObserver);
          break;
        case METHODID_LIST_RULES:
          serviceImpl.listRules((dev.scorewire.v1.ListRulesRequest) request,
              (io.grpc.stub.StreamObserver<dev.scorewire.v1.ListRulesResponse>) responseObserver);
          break;
        case METHODID_CREATE_RULE:
          serviceImpl.createRule((dev.scorewire.v1.CreateRuleRequest) request,
              (io.grpc.stub.StreamObserver<dev.scorewire.v1.CreateRuleResponse>) responseObserver);
          break;
        case METHODID_UPDATE_RULE:
          serviceImpl.updateRule((dev.scorewire.v1.UpdateRuleRequest) request,
              (io.grpc.stub.StreamObserver<dev.scorewire.v1.UpdateRuleResponse>) responseObserver);
          break;
        case METHODID_DELETE_RULE:
          serviceImpl.deleteRule((dev.scorewire.v1.DeleteRuleRequest) request,
              (io.grpc.stub.StreamObserver<dev.scorewire.v1.DeleteRuleResponse>) responseObserver);
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

  private static abstract class ObserveServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    ObserveServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return dev.scorewire.v1.ObserveProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("ObserveService");
    }
  }

  private static final class ObserveServiceFileDescriptorSupplier
      extends ObserveServiceBaseDescriptorSupplier {
    ObserveServiceFileDescriptorSupplier() {}
  }

  private static final class ObserveServiceMethodDescriptorSupplier
      extends ObserveServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final String methodName;

    ObserveServiceMethodDescriptorSupplier(String methodName) {
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
      synchronized (ObserveServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new ObserveServiceFileDescriptorSupplier())
              .addMethod(getObserveMethod())
              .addMethod(getListRulesMethod())
              .addMethod(getCreateRuleMethod())
              .addMethod(getUpdateRuleMethod())
              .addMethod(getDeleteRuleMethod())
              .build();
        }
      }
    }
    return result;
  }
}
