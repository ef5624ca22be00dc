package scorewire

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	scorewirev1 "github.com/scorewire/scorewire/clients/go/gen/scorewire/v1"
)

// Defaults of RunSuiteSharded.
const (
	// DefaultChunkCases is the most cases in one chunk (one RunSuite call).
	DefaultChunkCases = 5000
	// DefaultChunkAttempts is how many times a chunk is sent, the first included,
	// before the run fails.
	DefaultChunkAttempts = 3
)

// ShardOptions says how RunSuiteSharded splits a batch.
type ShardOptions struct {
	// Shards is how many chunks are in flight at once (at least 1); the batch is split
	// into at least this many chunks, but for a checkllm batch or a request without
	// cases, which is one chunk (see RunSuiteSharded).
	Shards int
	// ChunkCases is the most cases in one chunk; 0 means DefaultChunkCases.
	ChunkCases int
	// ChunkAttempts is how many times a chunk is sent in all; 0 means
	// DefaultChunkAttempts.
	ChunkAttempts int
	// OnChunk, when set, receives each chunk's results as the chunk finishes (one call
	// at a time), indexes already those of the request's cases.
	OnChunk func([]*scorewirev1.CaseResult)
}

// ShardedResult is a batch run as chunks: every case's result once, and the merged
// summary.
type ShardedResult struct {
	// Results holds one result per case, chunk by chunk in completion order; Index is
	// the case's position in the request's Cases.
	Results []*scorewirev1.CaseResult
	// Summary is the chunks' summaries merged (MergeSummaries): one chunk's summary as
	// the server sent it (its run_id, generation spending and matrix included), or
	// several added up, the gate judged again on the merged totals and run_id empty.
	Summary *scorewirev1.RunSummary
	// RunIDs are the ids of the runs the server recorded for the batch (with
	// req.Record), one per chunk, in the order of the chunks' cases (by their offset in
	// req.Cases, not completion order): read each back with GetRun or ListRunResults,
	// since the merged Summary of several chunks has no run_id. Empty when nothing was
	// recorded; for a batch sent as one chunk, exactly Summary's run_id. When the run
	// fails, those of the chunks whose results are in Results.
	RunIDs []string
	// Retries counts chunk attempts that failed and were sent again.
	Retries int
}

// RunSuiteSharded runs one large batch over several replicas: req.Cases is split into
// chunks of consecutive cases sent as separate RunSuite calls, opts.Shards at a time,
// over the client's connection, whose round_robin policy (DialAddresses, or a name
// resolving to several addresses) or an L7 proxy spreads them over the replicas.
//
// A chunk whose call fails with UNAVAILABLE or whose stream breaks (the transport lost
// it: a replica killed behind nginx or HAProxy shows as INTERNAL or UNKNOWN) is sent
// again whole, to the replica the connection picks next; any other error fails the
// run and cancels the other chunks. A chunk's results count only once its summary
// has arrived, so every case is reported once and agrees with the merged summary.
// req.BudgetUsd, when set, is divided among the chunks in proportion to their cases,
// so the batch never spends more than it. A request without cases (a suite document
// with its own, such as a checkllm suite whose outputs the server generates) runs as
// one chunk, and so does a checkllm batch of recorded outputs (req.Format
// SUITE_FORMAT_CHECKLLM, or any case naming its Test, Prompt or Provider) whatever
// opts says, since the server scores a checkllm batch only with every combination
// present: its whole budget, its results and the server's summary as they come. A
// batch that fits one chunk is one RunSuite: the summary is then the server's own, its
// gate, generation cost, matrix and run_id as reported. Merged over several chunks it
// sums the generation spending and the matrix cells too, and its run_id is empty,
// since a recorded request records each chunk as a run of its own: the result's
// RunIDs lists those runs' ids, in the order of the chunks' cases.
func (c *Client) RunSuiteSharded(ctx context.Context, req *scorewirev1.RunSuiteRequest, opts ShardOptions, callOpts ...grpc.CallOption) (*ShardedResult, error) {
	chunks, err := splitChunks(req, opts)
	if err != nil {
		return nil, err
	}
	attempts := opts.ChunkAttempts
	if attempts <= 0 {
		attempts = DefaultChunkAttempts
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu        sync.Mutex
		out       ShardedResult
		summaries []*scorewirev1.RunSummary
		runIDs    = map[int32]string{} // by chunk offset
		firstErr  error
		wg        sync.WaitGroup
	)
	todo := make(chan chunk)
	for range min(opts.Shards, len(chunks)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ch := range todo {
				results, summary, retries, err := c.runChunk(ctx, ch, attempts, callOpts)
				mu.Lock()
				out.Retries += retries
				if err != nil && firstErr == nil {
					firstErr = err
					cancel()
				}
				if err == nil && firstErr == nil {
					out.Results = append(out.Results, results...)
					summaries = append(summaries, summary)
					if id := summary.GetRunId(); id != "" {
						runIDs[ch.offset] = id
					}
					if opts.OnChunk != nil {
						opts.OnChunk(results)
					}
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for _, ch := range chunks {
		select {
		case todo <- ch:
		case <-ctx.Done():
			break feed
		}
	}
	close(todo)
	wg.Wait()
	out.RunIDs = make([]string, 0, len(runIDs))
	for _, ch := range chunks {
		if id, ok := runIDs[ch.offset]; ok {
			out.RunIDs = append(out.RunIDs, id)
		}
	}
	if firstErr != nil {
		return &out, firstErr
	}
	if err := ctx.Err(); err != nil {
		return &out, wrap(err)
	}
	out.Summary, err = MergeSummaries(summaries)
	return &out, err
}

type chunk struct {
	offset int32
	req    *scorewirev1.RunSuiteRequest
}

// runChunk sends one chunk until it succeeds, fails for good or runs out of attempts.
func (c *Client) runChunk(ctx context.Context, ch chunk, attempts int, callOpts []grpc.CallOption) ([]*scorewirev1.CaseResult, *scorewirev1.RunSummary, int, error) {
	retries := 0
	for attempt := 1; ; attempt++ {
		results, summary, err := c.runChunkOnce(ctx, ch, callOpts)
		if err == nil {
			return results, summary, retries, nil
		}
		if attempt >= attempts || ctx.Err() != nil || !Retryable(err) {
			return nil, nil, retries, err
		}
		retries++
	}
}

func (c *Client) runChunkOnce(ctx context.Context, ch chunk, callOpts []grpc.CallOption) ([]*scorewirev1.CaseResult, *scorewirev1.RunSummary, error) {
	run, err := c.RunSuite(ctx, ch.req, callOpts...)
	if err != nil {
		return nil, nil, err
	}
	defer run.Close()
	results, summary, err := run.Collect()
	if err != nil {
		return nil, nil, err
	}
	for _, r := range results {
		r.Index += ch.offset
	}
	return results, summary, nil
}

// brokenStream holds what gRPC transports say when they lost a stream, as opposed to
// a status the server chose.
var brokenStream = []string{"RST_STREAM", "Stream removed", "without sending trailers", "ended without a summary"}

// Retryable reports whether a chunk that failed with err is worth sending to another
// replica: UNAVAILABLE, or INTERNAL/UNKNOWN when the transport lost the stream.
func Retryable(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Code {
	case codes.Unavailable:
		return true
	case codes.Internal, codes.Unknown:
		for _, mark := range brokenStream {
			if strings.Contains(e.Message, mark) {
				return true
			}
		}
	}
	return false
}

// splitChunks cuts req's cases into consecutive chunks: at least opts.Shards of them
// (fewer only when there are fewer cases), at most opts.ChunkCases cases each. A
// checkllm batch (wholeBatch) is one chunk, the request itself.
func splitChunks(req *scorewirev1.RunSuiteRequest, opts ShardOptions) ([]chunk, error) {
	if opts.Shards < 1 {
		return nil, fmt.Errorf("scorewire: ShardOptions.Shards must be at least 1, not %d", opts.Shards)
	}
	if wholeBatch(req) {
		return []chunk{{req: proto.Clone(req).(*scorewirev1.RunSuiteRequest)}}, nil
	}
	size := opts.ChunkCases
	if size <= 0 {
		size = DefaultChunkCases
	}
	n := len(req.GetCases())
	count := max(min(opts.Shards, n), (n+size-1)/size, 1)
	per := max((n+count-1)/count, 1)
	template := proto.Clone(req).(*scorewirev1.RunSuiteRequest)
	template.Cases = nil
	var chunks []chunk
	for offset := 0; offset < max(n, 1); offset += per {
		part := req.GetCases()[offset:min(offset+per, n)]
		r := proto.Clone(template).(*scorewirev1.RunSuiteRequest)
		r.Cases = part
		if req.BudgetUsd != nil && n > 0 {
			share := req.GetBudgetUsd() * float64(len(part)) / float64(n)
			r.BudgetUsd = &share
		}
		chunks = append(chunks, chunk{offset: int32(offset), req: r})
	}
	return chunks, nil
}

// wholeBatch reports whether req is a checkllm batch, which the server scores only with
// every prompt x provider x test combination present (a part of one is INVALID_ARGUMENT
// "cases: no case for ..."): its format is SUITE_FORMAT_CHECKLLM, or one of its cases
// names a combination (a test, prompt or provider).
func wholeBatch(req *scorewirev1.RunSuiteRequest) bool {
	if req.GetFormat() == scorewirev1.SuiteFormat_SUITE_FORMAT_CHECKLLM {
		return true
	}
	for _, c := range req.GetCases() {
		if c.GetTest() != "" || c.GetPrompt() != "" || c.GetProvider() != "" {
			return true
		}
	}
	return false
}
