package scorewire

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	scorewirev1 "github.com/scorewire/scorewire/clients/go/gen/scorewire/v1"
)

// DropReason says why an Observer dropped an observation.
type DropReason string

// Why an observation was dropped instead of queued by the server.
const (
	// DropBufferFull: the buffer held BufferSize observations (the server slow or down).
	DropBufferFull DropReason = "buffer_full"
	// DropInvalid: nil, or a trace or span id that is not 32 or 16 lowercase hex digits.
	DropInvalid DropReason = "invalid"
	// DropRejected: the server refused it with a code that a retry cannot change
	// (INVALID_ARGUMENT, FAILED_PRECONDITION, PERMISSION_DENIED, ...). When an
	// INVALID_ARGUMENT names the bad observations of a batch, only those are dropped and
	// the rest are sent again, once.
	DropRejected DropReason = "rejected"
	// DropRetriesExhausted: UNAVAILABLE, RESOURCE_EXHAUSTED or DEADLINE_EXCEEDED on
	// every one of MaxAttempts.
	DropRetriesExhausted DropReason = "retries_exhausted"
	// DropClosed: observed after Close, or still unsent when Close's deadline passed.
	DropClosed DropReason = "closed"
)

var dropReasons = [...]DropReason{DropBufferFull, DropInvalid, DropRejected, DropRetriesExhausted, DropClosed}

// ObserverOptions configures an Observer; a zero field takes its default.
type ObserverOptions struct {
	// BufferSize is the most observations held in memory, waiting or being sent
	// (default 10,000); past it Observe drops and counts DropBufferFull.
	BufferSize int
	// BatchSize is the most observations per Observe call, 1 to 1,000 (default 500).
	// A full batch is sent at once.
	BatchSize int
	// FlushInterval is the longest an observation waits for its batch to fill
	// (default 1 s).
	FlushInterval time.Duration
	// CallTimeout is the deadline of each Observe call (default 5 s).
	CallTimeout time.Duration
	// MaxAttempts is how many times a batch is sent before it is dropped (default 5).
	MaxAttempts int
	// InitialBackoff is the wait before the first retry, doubled (with jitter) for
	// each next one up to MaxBackoff (defaults 100 ms and 5 s).
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
}

func (o ObserverOptions) withDefaults() ObserverOptions {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.BufferSize, 10_000)
	def(&o.BatchSize, 500)
	o.BatchSize = min(o.BatchSize, 1000)
	def(&o.MaxAttempts, 5)
	defDur(&o.FlushInterval, time.Second)
	defDur(&o.CallTimeout, 5*time.Second)
	defDur(&o.InitialBackoff, 100*time.Millisecond)
	defDur(&o.MaxBackoff, 5*time.Second)
	return o
}

// ObserverStats counts what an Observer did with the observations it was given.
type ObserverStats struct {
	// Accepted is how many observations were taken into the buffer.
	Accepted uint64
	// Queued is how many the server acknowledged as QUEUED.
	Queued uint64
	// Duplicate is how many the server acknowledged as DUPLICATE (queued before).
	Duplicate uint64
	// Dropped counts the observations dropped, by reason (every reason present).
	Dropped map[DropReason]uint64
	// Buffered is how many are waiting or being sent now.
	Buffered int
	// Retries is how many Observe calls were sent again after a retryable error.
	Retries uint64
}

// Observer sends observations of production traffic to ObserveService in the
// background: Observe never blocks on the network and never fails the caller. It
// buffers up to BufferSize observations, sends them in batches (BatchSize, or whatever
// waited FlushInterval), retries UNAVAILABLE, RESOURCE_EXHAUSTED and DEADLINE_EXCEEDED
// with exponential backoff, and drops (and counts, see Stats) what it cannot send.
// It is safe for concurrent use. Close it before the Client.
type Observer struct {
	rpc  scorewirev1.ObserveServiceClient
	opts ObserverOptions

	mu       sync.Mutex
	buf      []*scorewirev1.Observation
	inFlight int
	closed   bool
	accepted uint64 // taken into buf, ever
	resolved uint64 // of those, queued, duplicate or dropped
	stats    ObserverStats
	dropped  [len(dropReasons)]uint64
	changed  chan struct{} // closed and replaced whenever resolved grows

	kick   chan struct{}      // wakes the sender: a full batch, a flush, Close
	ctx    context.Context    // cancelled when Close's deadline passes
	cancel context.CancelFunc //
	done   chan struct{}      // closed when the sender has returned
}

// NewObserver starts an Observer sending through c's connection.
func (c *Client) NewObserver(opts ObserverOptions) *Observer {
	ctx, cancel := context.WithCancel(context.Background())
	o := &Observer{
		rpc:     scorewirev1.NewObserveServiceClient(c.conn),
		opts:    opts.withDefaults(),
		changed: make(chan struct{}),
		kick:    make(chan struct{}, 1),
		ctx:     ctx,
		cancel:  cancel,
		done:    make(chan struct{}),
	}
	go o.run()
	return o
}

// Observe buffers obs to be sent, and reports whether it was taken (false: dropped and
// counted). It returns at once and never panics on bad input. The Observer owns obs
// from here on: do not change it afterwards.
//
// When obs has no trace id and ctx carries a valid OpenTelemetry span, the span's
// trace and span ids are used; an unset ObservedAt is set to now.
func (o *Observer) Observe(ctx context.Context, obs *scorewirev1.Observation) bool {
	if obs == nil {
		o.drop(DropInvalid, 1)
		return false
	}
	if obs.GetTrace().GetTraceId() == "" && ctx != nil {
		if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
			obs.Trace = &scorewirev1.TraceContext{TraceId: sc.TraceID().String(), SpanId: sc.SpanID().String()}
		}
	}
	if !isHex(obs.GetTrace().GetTraceId(), 32) || !isHex(obs.GetTrace().GetSpanId(), 16) {
		o.drop(DropInvalid, 1)
		return false
	}
	if obs.ObservedAt == nil {
		obs.ObservedAt = timestamppb.Now()
	}
	o.mu.Lock()
	switch {
	case o.closed:
		o.dropped[indexOf(DropClosed)]++
		o.mu.Unlock()
		return false
	case len(o.buf)+o.inFlight >= o.opts.BufferSize:
		o.dropped[indexOf(DropBufferFull)]++
		o.mu.Unlock()
		return false
	}
	o.buf = append(o.buf, obs)
	o.accepted++
	full := len(o.buf) >= o.opts.BatchSize
	o.mu.Unlock()
	if full {
		o.wake()
	}
	return true
}

// Stats returns a snapshot of the counters.
func (o *Observer) Stats() ObserverStats {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.stats
	s.Accepted = o.accepted
	s.Buffered = len(o.buf) + o.inFlight
	s.Dropped = make(map[DropReason]uint64, len(dropReasons))
	for i, r := range dropReasons {
		s.Dropped[r] = o.dropped[i]
	}
	return s
}

// Flush sends everything observed before it was called and waits until the server has
// acknowledged it or it was dropped; it returns ctx's error if ctx ends first (the
// observations stay buffered and are still sent).
func (o *Observer) Flush(ctx context.Context) error {
	o.mu.Lock()
	target := o.accepted
	o.mu.Unlock()
	o.wake()
	for {
		o.mu.Lock()
		if o.resolved >= target {
			o.mu.Unlock()
			return nil
		}
		changed := o.changed
		o.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Close stops taking observations, sends what is buffered until ctx ends, then drops
// what is left (DropClosed) and stops the sender. It returns ctx's error when it had to
// drop. Later calls return nil at once.
func (o *Observer) Close(ctx context.Context) error {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return nil
	}
	o.closed = true
	o.mu.Unlock()
	o.wake()
	select {
	case <-o.done:
		return nil
	case <-ctx.Done():
		o.cancel() // ends the call or backoff in progress; the sender drops the rest
		<-o.done
		return ctx.Err()
	}
}

func (o *Observer) wake() {
	select {
	case o.kick <- struct{}{}:
	default:
	}
}

// run is the sender: it sends batches whenever woken or every FlushInterval, and
// returns once closed and empty, or cancelled.
func (o *Observer) run() {
	defer close(o.done)
	defer o.cancel()
	ticker := time.NewTicker(o.opts.FlushInterval)
	defer ticker.Stop()
	for {
		select {
		case <-o.kick:
		case <-ticker.C:
		case <-o.ctx.Done():
		}
		for o.ctx.Err() == nil {
			batch := o.take()
			if len(batch) == 0 {
				break
			}
			o.send(batch)
		}
		o.mu.Lock()
		closed, left := o.closed, o.buf
		if o.ctx.Err() != nil {
			o.buf, o.inFlight = nil, o.inFlight+len(left)
		}
		o.mu.Unlock()
		if o.ctx.Err() != nil {
			o.resolve(nil, DropClosed, len(left))
			return
		}
		if closed && len(left) == 0 {
			return
		}
	}
}

// take moves up to BatchSize observations from the buffer to in flight.
func (o *Observer) take() []*scorewirev1.Observation {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := min(len(o.buf), o.opts.BatchSize)
	batch := make([]*scorewirev1.Observation, n)
	copy(batch, o.buf)
	o.buf = o.buf[n:]
	if len(o.buf) == 0 {
		o.buf = nil // let the backing array go
	}
	o.inFlight += n
	return batch
}

// send calls Observe with retries, then resolves the batch.
func (o *Observer) send(batch []*scorewirev1.Observation) {
	req := &scorewirev1.ObserveRequest{Observations: batch}
	backoff := o.opts.InitialBackoff
	split := false
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(o.ctx, o.opts.CallTimeout)
		resp, err := o.rpc.Observe(ctx, req)
		cancel()
		if err == nil {
			o.resolve(resp.GetAcks(), "", len(batch))
			return
		}
		switch {
		case o.ctx.Err() != nil:
			o.resolve(nil, DropClosed, len(batch))
			return
		case !retryable(status.Code(err)):
			// The server refuses a batch whole, naming each bad observation: those are
			// dropped and the rest sent again, once.
			if bad := refused(err, len(batch)); !split && len(bad) > 0 && len(bad) < len(batch) {
				split = true
				keep := make([]*scorewirev1.Observation, 0, len(batch)-len(bad))
				for i, obs := range batch {
					if !bad[i] {
						keep = append(keep, obs)
					}
				}
				o.resolve(nil, DropRejected, len(bad))
				batch, req = keep, &scorewirev1.ObserveRequest{Observations: keep}
				continue
			}
			o.resolve(nil, DropRejected, len(batch))
			return
		case attempt >= o.opts.MaxAttempts:
			o.resolve(nil, DropRetriesExhausted, len(batch))
			return
		}
		o.mu.Lock()
		o.stats.Retries++
		o.mu.Unlock()
		// Full jitter: replicas of the caller do not retry in step.
		timer := time.NewTimer(time.Duration(rand.Int64N(int64(backoff)) + 1))
		select {
		case <-timer.C:
		case <-o.ctx.Done():
			timer.Stop()
		}
		backoff = min(2*backoff, o.opts.MaxBackoff)
	}
}

// resolve counts a finished batch of n: its acks, or n drops for reason.
func (o *Observer) resolve(acks []*scorewirev1.ObservationAck, reason DropReason, n int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if reason != "" {
		o.dropped[indexOf(reason)] += uint64(n)
	} else {
		for _, a := range acks {
			if a.GetStatus() == scorewirev1.ObservationStatus_OBSERVATION_STATUS_DUPLICATE {
				o.stats.Duplicate++
			} else {
				o.stats.Queued++
			}
		}
	}
	o.inFlight -= n
	o.resolved += uint64(n)
	close(o.changed)
	o.changed = make(chan struct{})
}

func (o *Observer) drop(reason DropReason, n uint64) {
	o.mu.Lock()
	o.dropped[indexOf(reason)] += n
	o.mu.Unlock()
}

// refused returns the positions of the observations an INVALID_ARGUMENT names
// (`observations[3].metadata.route`), or nil unless every violation names one below n.
func refused(err error, n int) map[int]bool {
	st, _ := status.FromError(err)
	if st.Code() != codes.InvalidArgument {
		return nil
	}
	bad := map[int]bool{}
	for _, d := range st.Details() {
		br, ok := d.(*errdetails.BadRequest)
		if !ok {
			continue
		}
		for _, v := range br.GetFieldViolations() {
			rest, ok := strings.CutPrefix(v.GetField(), "observations[")
			end := strings.IndexByte(rest, ']')
			if !ok || end < 0 {
				return nil
			}
			i, err := strconv.Atoi(rest[:end])
			if err != nil || i < 0 || i >= n {
				return nil
			}
			bad[i] = true
		}
	}
	return bad
}

func retryable(c codes.Code) bool {
	return c == codes.Unavailable || c == codes.ResourceExhausted || c == codes.DeadlineExceeded
}

func indexOf(r DropReason) int {
	for i, x := range dropReasons {
		if x == r {
			return i
		}
	}
	panic("scorewire: unknown drop reason " + string(r))
}

// isHex reports whether s is empty or n lowercase hex digits (the server's rule for
// trace and span ids: one bad id would get its whole batch refused).
func isHex(s string, n int) bool {
	if s == "" {
		return true
	}
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
