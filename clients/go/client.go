// Package scorewire is a thin client for the scorewire.v1 scoring and label services:
// Dial with sensible defaults, then Score, RunSuite, ScoreStream, PutLabels,
// ListLabels and the evaluation jobs' CreateJob, WatchJob and WaitJob with the generated
// messages of package scorewirev1. Failed calls return *Error, which carries the gRPC code and
// the BadRequest field violations.
package scorewire

import (
	"context"
	"errors"
	"strings"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"

	scorewirev1 "github.com/scorewire/scorewire/clients/go/gen/scorewire/v1"
)

// Defaults applied by Dial unless an Option changes them.
const (
	// DefaultTimeout is the deadline of Score, RunSuite, ListChecks and ValidateSuite
	// when the caller's context has none. ScoreStream gets no default deadline.
	DefaultTimeout = 30 * time.Second
	// DefaultKeepalive is the interval of keepalive pings while calls are open: 30 s in
	// every scorewire client, the server's own keepalive_time_s; the server accepts
	// one every 5 s.
	DefaultKeepalive = 30 * time.Second
	// DefaultKeepaliveTimeout is how long a ping may go unanswered before the
	// connection is considered dead.
	DefaultKeepaliveTimeout = 10 * time.Second
	// MaxMessageBytes is the largest message sent or received (the server's default).
	MaxMessageBytes = 64 << 20
)

// serviceConfig balances calls over every address the target's name resolves to, and
// retries on UNAVAILABLE (a replica lost, a proxy answering 502 for it), up to 3
// attempts, sending the call again to the replica round_robin (or the proxy) picks:
//   - PutLabels: a retry resends the same message, so the same request_id, which the
//     server stores at most once;
//   - Score, RunSuite, RunSuiteStream (RunSuite's batches over StreamChunkCases),
//     ListChecks and ValidateSuite: scoring is idempotent (a Score retried after its
//     replica called a judge model may pay for that call twice). gRPC retries only
//     until the first response message, and only while what the call has sent fits
//     its retry buffer (grpc.MaxRetryRPCBufferSize, 256 KiB by default): a RunSuite
//     stream that breaks later, or a big RunSuite or RunSuiteStream, is not retried
//     here (RunSuiteSharded retries its chunk).
//
// ScoreStream is never retried: the caller's cases cannot be sent twice.
const serviceConfig = `{
  "loadBalancingConfig": [{"round_robin": {}}],
  "methodConfig": [{
    "name": [{"service": "scorewire.v1.LabelService", "method": "PutLabels"}],
    "retryPolicy": {
      "maxAttempts": 3, "initialBackoff": "0.2s", "maxBackoff": "2s",
      "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]
    }
  }, {
    "name": [
      {"service": "scorewire.v1.ScoringService", "method": "Score"},
      {"service": "scorewire.v1.ScoringService", "method": "RunSuite"},
      {"service": "scorewire.v1.ScoringService", "method": "RunSuiteStream"},
      {"service": "scorewire.v1.ScoringService", "method": "ListChecks"},
      {"service": "scorewire.v1.ScoringService", "method": "ValidateSuite"}
    ],
    "retryPolicy": {
      "maxAttempts": 3, "initialBackoff": "0.2s", "maxBackoff": "2s",
      "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]
    }
  }]
}`

type config struct {
	timeout          time.Duration
	keepalive        time.Duration
	keepaliveTimeout time.Duration
	creds            credentials.TransportCredentials
	tracerProvider   trace.TracerProvider
	dialOptions      []grpc.DialOption
}

// Option changes a default of Dial.
type Option func(*config)

// WithTimeout sets the default deadline of calls whose context has none; 0 means none.
func WithTimeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// WithKeepalive sets the keepalive ping interval and ack timeout.
func WithKeepalive(interval, timeout time.Duration) Option {
	return func(c *config) { c.keepalive, c.keepaliveTimeout = interval, timeout }
}

// WithTransportCredentials uses TLS (or other credentials) instead of plaintext.
func WithTransportCredentials(creds credentials.TransportCredentials) Option {
	return func(c *config) { c.creds = creds }
}

// WithTracerProvider makes the client's spans (one per call) with tp instead of the
// global OpenTelemetry tracer provider. Either way every call carries the caller's W3C
// trace context (`traceparent`), so the server's spans join the caller's trace.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tracerProvider = tp }
}

// WithDialOptions appends raw gRPC dial options; they override the defaults.
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(c *config) { c.dialOptions = append(c.dialOptions, opts...) }
}

// Client calls a scorewire server. It is safe for concurrent use.
type Client struct {
	conn    *grpc.ClientConn
	rpc     scorewirev1.ScoringServiceClient
	labels  scorewirev1.LabelServiceClient
	runs    scorewirev1.RunServiceClient
	jobs    scorewirev1.JobServiceClient
	timeout time.Duration
}

// DialAddresses creates a client balanced round-robin, per call, over a fixed list of
// replica addresses (`host:port` each), as Dial does over the addresses a name
// resolves to. It takes the same options.
func DialAddresses(addresses []string, opts ...Option) (*Client, error) {
	if len(addresses) == 0 {
		return nil, errors.New("scorewire: DialAddresses needs at least one address")
	}
	r := manual.NewBuilderWithScheme("scorewire-replicas")
	state := resolver.State{}
	for _, a := range addresses {
		state.Addresses = append(state.Addresses, resolver.Address{Addr: a})
	}
	r.InitialState(state)
	return Dial(r.Scheme()+":///replicas", append([]Option{WithDialOptions(grpc.WithResolvers(r))}, opts...)...)
}

// Dial creates a client for target: `host:port` is resolved through DNS and calls are
// balanced round-robin over every address; a target with a scheme (`dns:///`,
// `unix:`, `ipv4:`) is used as given. The connection is made lazily, on the first call.
func Dial(target string, opts ...Option) (*Client, error) {
	cfg := config{
		timeout:          DefaultTimeout,
		keepalive:        DefaultKeepalive,
		keepaliveTimeout: DefaultKeepaliveTimeout,
		creds:            insecure.NewCredentials(),
	}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.tracerProvider == nil {
		cfg.tracerProvider = otel.GetTracerProvider()
	}
	dialOpts := append([]grpc.DialOption{
		grpc.WithTransportCredentials(cfg.creds),
		// W3C trace context always, whatever global propagator the program set (the
		// default one sends nothing); spans with the tracer provider (no-op by default).
		grpc.WithStatsHandler(otelgrpc.NewClientHandler(
			otelgrpc.WithTracerProvider(cfg.tracerProvider),
			otelgrpc.WithPropagators(propagation.TraceContext{}),
		)),
		grpc.WithDefaultServiceConfig(serviceConfig),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{
			Time:    cfg.keepalive,
			Timeout: cfg.keepaliveTimeout,
			// Idle channels need no pings, and servers reject them by default.
			PermitWithoutStream: false,
		}),
		grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(MaxMessageBytes),
			grpc.MaxCallSendMsgSize(MaxMessageBytes),
		),
	}, cfg.dialOptions...)
	conn, err := grpc.NewClient(normalizeTarget(target), dialOpts...)
	if err != nil {
		return nil, err
	}
	return &Client{
		conn:    conn,
		rpc:     scorewirev1.NewScoringServiceClient(conn),
		labels:  scorewirev1.NewLabelServiceClient(conn),
		runs:    scorewirev1.NewRunServiceClient(conn),
		jobs:    scorewirev1.NewJobServiceClient(conn),
		timeout: cfg.timeout,
	}, nil
}

// Close closes the connection; open calls fail.
func (c *Client) Close() error { return c.conn.Close() }

// Conn returns the underlying gRPC connection.
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// Raw returns the generated stub, for calls the wrapper does not cover.
func (c *Client) Raw() scorewirev1.ScoringServiceClient { return c.rpc }

var schemes = []string{"dns:", "unix:", "unix-abstract:", "ipv4:", "ipv6:", "passthrough:", "xds:", "scorewire-replicas:"}

// normalizeTarget puts `host:port` behind the DNS resolver so round_robin sees every
// address; a target that names its resolver scheme is kept.
func normalizeTarget(target string) string {
	for _, s := range schemes {
		if strings.HasPrefix(target, s) {
			return target
		}
	}
	return "dns:///" + target
}

// withDefaultDeadline applies the client's timeout when ctx has no deadline.
func (c *Client) withDefaultDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok || c.timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, c.timeout)
}

// Score scores one output against the request's checks: one score per check,
// structured checks first, then compact ones.
func (c *Client) Score(ctx context.Context, req *scorewirev1.ScoreRequest, opts ...grpc.CallOption) (*scorewirev1.ScoreResponse, error) {
	ctx, cancel := c.withDefaultDeadline(ctx)
	defer cancel()
	resp, err := c.rpc.Score(ctx, req, opts...)
	return resp, wrap(err)
}

// ListChecks returns the server's catalog of check types.
func (c *Client) ListChecks(ctx context.Context, opts ...grpc.CallOption) (*scorewirev1.ListChecksResponse, error) {
	ctx, cancel := c.withDefaultDeadline(ctx)
	defer cancel()
	resp, err := c.rpc.ListChecks(ctx, &scorewirev1.ListChecksRequest{}, opts...)
	return resp, wrap(err)
}

// ValidateSuite returns every problem of a suite without running it; an invalid suite
// is an answer (Valid false), not an error.
func (c *Client) ValidateSuite(ctx context.Context, req *scorewirev1.ValidateSuiteRequest, opts ...grpc.CallOption) (*scorewirev1.ValidateSuiteResponse, error) {
	ctx, cancel := c.withDefaultDeadline(ctx)
	defer cancel()
	resp, err := c.rpc.ValidateSuite(ctx, req, opts...)
	return resp, wrap(err)
}
