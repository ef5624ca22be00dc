package dev.scorewire.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * JobService creates, reads, watches, cancels and lists evaluation jobs.
 * Every RPC returns INVALID_ARGUMENT with a google.rpc.BadRequest naming each offending
 * field, RESOURCE_EXHAUSTED naming the field and the setting a request goes past,
 * NOT_FOUND for a job id that does not exist or that the caller may not see, and
 * UNAVAILABLE when the job store does not answer.
 * </pre>
 */
@javax.annotation.Generated(
    value = "by gRPC proto compiler",
    comments = "Source: scorewire/v1/jobs.proto")
@io.grpc.stub.annotations.GrpcGenerated
public final class JobServiceGrpc {

  private JobServiceGrpc() {}

  public static final String SERVICE_NAME = "scorewire.v1.JobService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<dev.scorewire.v1.CreateJobRequest,
      dev.scorewire.v1.CreateJobResponse> getCreateJobMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "CreateJob",
      requestType = dev.scorewire.v1.CreateJobRequest.class,
      responseType = dev.scorewire.v1.CreateJobResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.CLIENT_STREAMING)
  public static io.grpc.MethodDescriptor<dev.scorewire.v1.CreateJobRequest,
      dev.scorewire.v1.CreateJobResponse> getCreateJobMethod() {
    io.grpc.MethodDescriptor<dev.scorewire.v1.CreateJobRequest, dev.scorewire.v1.CreateJobResponse> getCreateJobMethod;
    if ((getCreateJobMethod = JobServiceGrpc.getCreateJobMethod) == null) {
      synchronized (JobServiceGrpc.class) {
        if ((getCreateJobMethod = JobServiceGrpc.getCreateJobMethod) == null) {
          JobServiceGrpc.getCreateJobMethod = getCreateJobMethod =
              io.grpc.MethodDescriptor.<dev.scorewire.v1.CreateJobRequest, dev.scorewire.v1.CreateJobResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.CLIENT_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "CreateJob"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.CreateJobRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.CreateJobResponse.getDefaultInstance()))
              .setSchemaDescriptor(new JobServiceMethodDescriptorSupplier("CreateJob"))
              .build();
        }
      }
    }
    return getCreateJobMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.scorewire.v1.GetJobRequest,
      dev.scorewire.v1.GetJobResponse> getGetJobMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetJob",
      requestType = dev.scorewire.v1.GetJobRequest.class,
      responseType = dev.scorewire.v1.GetJobResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.scorewire.v1.GetJobRequest,
      dev.scorewire.v1.GetJobResponse> getGetJobMethod() {
    io.grpc.MethodDescriptor<dev.scorewire.v1.GetJobRequest, dev.scorewire.v1.GetJobResponse> getGetJobMethod;
    if ((getGetJobMethod = JobServiceGrpc.getGetJobMethod) == null) {
      synchronized (JobServiceGrpc.class) {
        if ((getGetJobMethod = JobServiceGrpc.getGetJobMethod) == null) {
          JobServiceGrpc.getGetJobMethod = getGetJobMethod =
              io.grpc.MethodDescriptor.<dev.scorewire.v1.GetJobRequest, dev.scorewire.v1.GetJobResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetJob"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.GetJobRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.GetJobResponse.getDefaultInstance()))
              .setSchemaDescriptor(new JobServiceMethodDescriptorSupplier("GetJob"))
              .build();
        }
      }
    }
    return getGetJobMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.scorewire.v1.WatchJobRequest,
      dev.scorewire.v1.WatchJobResponse> getWatchJobMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "WatchJob",
      requestType = dev.scorewire.v1.WatchJobRequest.class,
      responseType = dev.scorewire.v1.WatchJobResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
  public static io.grpc.MethodDescriptor<dev.scorewire.v1.WatchJobRequest,
      dev.scorewire.v1.WatchJobResponse> getWatchJobMethod() {
    io.grpc.MethodDescriptor<dev.scorewire.v1.WatchJobRequest, dev.scorewire.v1.WatchJobResponse> getWatchJobMethod;
    if ((getWatchJobMethod = JobServiceGrpc.getWatchJobMethod) == null) {
      synchronized (JobServiceGrpc.class) {
        if ((getWatchJobMethod = JobServiceGrpc.getWatchJobMethod) == null) {
          JobServiceGrpc.getWatchJobMethod = getWatchJobMethod =
              io.grpc.MethodDescriptor.<dev.scorewire.v1.WatchJobRequest, dev.scorewire.v1.WatchJobResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "WatchJob"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.WatchJobRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.WatchJobResponse.getDefaultInstance()))
              .setSchemaDescriptor(new JobServiceMethodDescriptorSupplier("WatchJob"))
              .build();
        }
      }
    }
    return getWatchJobMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.scorewire.v1.CancelJobRequest,
      dev.scorewire.v1.CancelJobResponse> getCancelJobMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "CancelJob",
      requestType = dev.scorewire.v1.CancelJobRequest.class,
      responseType = dev.scorewire.v1.CancelJobResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.scorewire.v1.CancelJobRequest,
      dev.scorewire.v1.CancelJobResponse> getCancelJobMethod() {
    io.grpc.MethodDescriptor<dev.scorewire.v1.CancelJobRequest, dev.scorewire.v1.CancelJobResponse> getCancelJobMethod;
    if ((getCancelJobMethod = JobServiceGrpc.getCancelJobMethod) == null) {
      synchronized (JobServiceGrpc.class) {
        if ((getCancelJobMethod = JobServiceGrpc.getCancelJobMethod) == null) {
          JobServiceGrpc.getCancelJobMethod = getCancelJobMethod =
              io.grpc.MethodDescriptor.<dev.scorewire.v1.CancelJobRequest, dev.scorewire.v1.CancelJobResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "CancelJob"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.CancelJobRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.CancelJobResponse.getDefaultInstance()))
              .setSchemaDescriptor(new JobServiceMethodDescriptorSupplier("CancelJob"))
              .build();
        }
      }
    }
    return getCancelJobMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.scorewire.v1.ListJobsRequest,
      dev.scorewire.v1.ListJobsResponse> getListJobsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListJobs",
      requestType = dev.scorewire.v1.ListJobsRequest.class,
      responseType = dev.scorewire.v1.ListJobsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.scorewire.v1.ListJobsRequest,
      dev.scorewire.v1.ListJobsResponse> getListJobsMethod() {
    io.grpc.MethodDescriptor<dev.scorewire.v1.ListJobsRequest, dev.scorewire.v1.ListJobsResponse> getListJobsMethod;
    if ((getListJobsMethod = JobServiceGrpc.getListJobsMethod) == null) {
      synchronized (JobServiceGrpc.class) {
        if ((getListJobsMethod = JobServiceGrpc.getListJobsMethod) == null) {
          JobServiceGrpc.getListJobsMethod = getListJobsMethod =
              io.grpc.MethodDescriptor.<dev.scorewire.v1.ListJobsRequest, dev.scorewire.v1.ListJobsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListJobs"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.ListJobsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.scorewire.v1.ListJobsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new JobServiceMethodDescriptorSupplier("ListJobs"))
              .build();
        }
      }
    }
    return getListJobsMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static JobServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<JobServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<JobServiceStub>() {
        @java.lang.Override
        public JobServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new JobServiceStub(channel, callOptions);
        }
      };
    return JobServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static JobServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<JobServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<JobServiceBlockingStub>() {
        @java.lang.Override
        public JobServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new JobServiceBlockingStub(channel, callOptions);
        }
      };
    return JobServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static JobServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<JobServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<JobServiceFutureStub>() {
        @java.lang.Override
        public JobServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new JobServiceFutureStub(channel, callOptions);
        }
      };
    return JobServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * JobService creates, reads, watches, cancels and lists evaluation jobs.
   * Every RPC returns INVALID_ARGUMENT with a google.rpc.BadRequest naming each offending
   * field, RESOURCE_EXHAUSTED naming the field and the setting a request goes past,
   * NOT_FOUND for a job id that does not exist or that the caller may not see, and
   * UNAVAILABLE when the job store does not answer.
   * </pre>
   */
  public static abstract class JobServiceImplBase implements io.grpc.BindableService {

    /**
     * <pre>
     * CreateJob takes a config (the plan, the declared case count) then the cases in one
     * or more messages, and answers once the job and every case are committed to the job
     * store. Returns INVALID_ARGUMENT naming a bad check, case or field (nothing is stored),
     * RESOURCE_EXHAUSTED for more cases than `SCOREWIRE_JOBS_MAX_CASES` or more open jobs
     * than `SCOREWIRE_JOBS_MAX_OPEN_PER_TENANT`, and FAILED_PRECONDITION for a webhook URL
     * when the server has no `SCOREWIRE_JOBS_WEBHOOK_SECRET` to sign it with.
     * </pre>
     */
    public io.grpc.stub.StreamObserver<dev.scorewire.v1.CreateJobRequest> createJob(
        io.grpc.stub.StreamObserver<dev.scorewire.v1.CreateJobResponse> responseObserver) {
      return io.grpc.stub.ServerCalls.asyncUnimplementedStreamingCall(getCreateJobMethod(), responseObserver);
    }

    /**
     * <pre>
     * GetJob returns a job's state and progress; its summary once it succeeded.
     * </pre>
     */
    public void getJob(dev.scorewire.v1.GetJobRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.GetJobResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetJobMethod(), responseObserver);
    }

    /**
     * <pre>
     * WatchJob streams the job as it is now, then again each time its progress or state
     * changes, and ends after the job reaches a terminal state.
     * </pre>
     */
    public void watchJob(dev.scorewire.v1.WatchJobRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.WatchJobResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getWatchJobMethod(), responseObserver);
    }

    /**
     * <pre>
     * CancelJob cancels a queued or running job: it is scored no further, and its run
     * ends incomplete with the chunks already recorded. Returns FAILED_PRECONDITION for a
     * job that already ended.
     * </pre>
     */
    public void cancelJob(dev.scorewire.v1.CancelJobRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.CancelJobResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getCancelJobMethod(), responseObserver);
    }

    /**
     * <pre>
     * ListJobs returns the caller's jobs, newest first, paged.
     * </pre>
     */
    public void listJobs(dev.scorewire.v1.ListJobsRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.ListJobsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListJobsMethod(), responseObserver);
    }

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return io.grpc.ServerServiceDefinition.builder(getServiceDescriptor())
          .addMethod(
            getCreateJobMethod(),
            io.grpc.stub.ServerCalls.asyncClientStreamingCall(
              new MethodHandlers<
                dev.scorewire.v1.CreateJobRequest,
                dev.scorewire.v1.CreateJobResponse>(
                  this, METHODID_CREATE_JOB)))
          .addMethod(
            getGetJobMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                dev.scorewire.v1.GetJobRequest,
                dev.scorewire.v1.GetJobResponse>(
                  this, METHODID_GET_JOB)))
          .addMethod(
            getWatchJobMethod(),
            io.grpc.stub.ServerCalls.asyncServerStreamingCall(
              new MethodHandlers<
                dev.scorewire.v1.WatchJobRequest,
                dev.scorewire.v1.WatchJobResponse>(
                  this, METHODID_WATCH_JOB)))
          .addMethod(
            getCancelJobMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                dev.scorewire.v1.CancelJobRequest,
                dev.scorewire.v1.CancelJobResponse>(
                  this, METHODID_CANCEL_JOB)))
          .addMethod(
            getListJobsMethod(),
            io.grpc.stub.ServerCalls.asyncUnaryCall(
              new MethodHandlers<
                dev.scorewire.v1.ListJobsRequest,
                dev.scorewire.v1.ListJobsResponse>(
                  this, METHODID_LIST_JOBS)))
          .build();
    }
  }

  /**
   * <pre>
   * JobService creates, reads, watches, cancels and lists evaluation jobs.
   * Every RPC returns INVALID_ARGUMENT with a google.rpc.BadRequest naming each offending
   * field, RESOURCE_EXHAUSTED naming the field and the setting a request goes past,
   * NOT_FOUND for a job id that does not exist or that the caller may not see, and
   * UNAVAILABLE when the job store does not answer.
   * </pre>
   */
  public static final class JobServiceStub extends io.grpc.stub.AbstractAsyncStub<JobServiceStub> {
    private JobServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected JobServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new JobServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * CreateJob takes a config (the plan, the declared case count) then the cases in one
     * or more messages, and answers once the job and every case are committed to the job
     * store. Returns INVALID_ARGUMENT naming a bad check, case or field (nothing is stored),
     * RESOURCE_EXHAUSTED for more cases than `SCOREWIRE_JOBS_MAX_CASES` or more open jobs
     * than `SCOREWIRE_JOBS_MAX_OPEN_PER_TENANT`, and FAILED_PRECONDITION for a webhook URL
     * when the server has no `SCOREWIRE_JOBS_WEBHOOK_SECRET` to sign it with.
     * </pre>
     */
    public io.grpc.stub.StreamObserver<dev.scorewire.v1.CreateJobRequest> createJob(
        io.grpc.stub.StreamObserver<dev.scorewire.v1.CreateJobResponse> responseObserver) {
      return io.grpc.stub.ClientCalls.asyncClientStreamingCall(
          getChannel().newCall(getCreateJobMethod(), getCallOptions()), responseObserver);
    }

    /**
     * <pre>
     * GetJob returns a job's state and progress; its summary once it succeeded.
     * </pre>
     */
    public void getJob(dev.scorewire.v1.GetJobRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.GetJobResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetJobMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * WatchJob streams the job as it is now, then again each time its progress or state
     * changes, and ends after the job reaches a terminal state.
     * </pre>
     */
    public void watchJob(dev.scorewire.v1.WatchJobRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.WatchJobResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncServerStreamingCall(
          getChannel().newCall(getWatchJobMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * CancelJob cancels a queued or running job: it is scored no further, and its run
     * ends incomplete with the chunks already recorded. Returns FAILED_PRECONDITION for a
     * job that already ended.
     * </pre>
     */
    public void cancelJob(dev.scorewire.v1.CancelJobRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.CancelJobResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getCancelJobMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * ListJobs returns the caller's jobs, newest first, paged.
     * </pre>
     */
    public void listJobs(dev.scorewire.v1.ListJobsRequest request,
        io.grpc.stub.StreamObserver<dev.scorewire.v1.ListJobsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListJobsMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * <pre>
   * JobService creates, reads, watches, cancels and lists evaluation jobs.
   * Every RPC returns INVALID_ARGUMENT with a google.rpc.BadRequest naming each offending
   * field, RESOURCE_EXHAUSTED naming the field and the setting a request goes past,
   * NOT_FOUND for a job id that does not exist or that the caller may not see, and
   * UNAVAILABLE when the job store does not answer.
   * </pre>
   */
  public static final class JobServiceBlockingStub extends io.grpc.stub.AbstractBlockingStub<JobServiceBlockingStub> {
    private JobServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected JobServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new JobServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * GetJob returns a job's state and progress; its summary once it succeeded.
     * </pre>
     */
    public dev.scorewire.v1.GetJobResponse getJob(dev.scorewire.v1.GetJobRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetJobMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * WatchJob streams the job as it is now, then again each time its progress or state
     * changes, and ends after the job reaches a terminal state.
     * </pre>
     */
    public java.util.Iterator<dev.scorewire.v1.WatchJobResponse> watchJob(
        dev.scorewire.v1.WatchJobRequest request) {
      return io.grpc.stub.ClientCalls.blockingServerStreamingCall(
          getChannel(), getWatchJobMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * CancelJob cancels a queued or running job: it is scored no further, and its run
     * ends incomplete with the chunks already recorded. Returns FAILED_PRECONDITION for a
     * job that already ended.
     * </pre>
     */
    public dev.scorewire.v1.CancelJobResponse cancelJob(dev.scorewire.v1.CancelJobRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getCancelJobMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * ListJobs returns the caller's jobs, newest first, paged.
     * </pre>
     */
    public dev.scorewire.v1.ListJobsResponse listJobs(dev.scorewire.v1.ListJobsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListJobsMethod(), getCallOptions(), request);
    }
  }

  /**
   * <pre>
   * JobService creates, reads, watches, cancels and lists evaluation jobs.
   * Every RPC returns INVALID_ARGUMENT with a google.rpc.BadRequest naming each offending
   * field, RESOURCE_EXHAUSTED naming the field and the setting a request goes past,
   * NOT_FOUND for a job id that does not exist or that the caller may not see, and
   * UNAVAILABLE when the job store does not answer.
   * </pre>
   */
  public static final class JobServiceFutureStub extends io.grpc.stub.AbstractFutureStub<JobServiceFutureStub> {
    private JobServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected JobServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new JobServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * GetJob returns a job's state and progress; its summary once it succeeded.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.scorewire.v1.GetJobResponse> getJob(
        dev.scorewire.v1.GetJobRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetJobMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * CancelJob cancels a queued or running job: it is scored no further, and its run
     * ends incomplete with the chunks already recorded. Returns FAILED_PRECONDITION for a
     * job that already ended.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.scorewire.v1.CancelJobResponse> cancelJob(
        dev.scorewire.v1.CancelJobRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getCancelJobMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * ListJobs returns the caller's jobs, newest first, paged.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.scorewire.v1.ListJobsResponse> listJobs(
        dev.scorewire.v1.ListJobsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListJobsMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_GET_JOB = 0;
  private static final int METHODID_WATCH_JOB = 1;
  private static final int METHODID_CANCEL_JOB = 2;
  private static final int METHODID_LIST_JOBS = 3;
  private static final int METHODID_CREATE_JOB = 4;

  private static final class MethodHandlers<Req, Resp> implements
      io.grpc.stub.ServerCalls.UnaryMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ServerStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ClientStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.BidiStreamingMethod<Req, Resp> {
    private final JobServiceImplBase serviceImpl;
    private final int methodId;

    MethodHandlers(JobServiceImplBase serviceImpl, int methodId) {
      this.serviceImpl = serviceImpl;
      this.methodId = methodId;
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public void invoke(Req request, io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        case METHODID_GET_JOB:
          serviceImpl.getJob((dev.scorewire.v1.GetJobRequest) request,
              (io.grpc.stub.StreamObserver<dev.scorewire.v1.GetJobResponse>) responseObserver);
          break;
        case METHODID_WATCH_JOB:
          serviceImpl.watchJob((dev.scorewire.v1.WatchJobRequest) request,
              (io.grpc.stub.StreamObserver<dev.scorewire.v1.WatchJobResponse>) responseObserver);
          break;
        case METHODID_CANCEL_JOB:
          serviceImpl.cancelJob((dev.scorewire.v1.CancelJobRequest) request,
              (io.grpc.stub.StreamObserver<dev.scorewire.v1.CancelJobResponse>) responseObserver);
          break;
        case METHODID_LIST_JOBS:
          serviceImpl.listJobs((dev.scorewire.v1.ListJobsRequest) request,
              (io.grpc.stub.StreamObserver<dev.scorewire.v1.ListJobsResponse>) responseObserver);
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
        case METHODID_CREATE_JOB:
          return (io.grpc.stub.StreamObserver<Req>) serviceImpl.createJob(
              (io.grpc.stub.StreamObserver<dev.scorewire.v1.CreateJobResponse>) responseObserver);
        default:
          throw new AssertionError();
      }
    }
  }

  private static abstract class JobServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    JobServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return dev.scorewire.v1.JobsProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("JobService");
    }
  }

  private static final class JobServiceFileDescriptorSupplier
      extends JobServiceBaseDescriptorSupplier {
    JobServiceFileDescriptorSupplier() {}
  }

  private static final class JobServiceMethodDescriptorSupplier
      extends JobServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final String methodName;

    JobServiceMethodDescriptorSupplier(String methodName) {
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
      synchronized (JobServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new JobServiceFileDescriptorSupplier())
              .addMethod(getCreateJobMethod())
              .addMethod(getGetJobMethod())
              .addMethod(getWatchJobMethod())
              .addMethod(getCancelJobMethod())
              .addMethod(getListJobsMethod())
              .build();
        }
      }
    }
    return result;
  }
}
