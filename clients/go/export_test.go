package scorewire

import (
	scorewirev1 "github.com/scorewire/scorewire/clients/go/gen/scorewire/v1"
)

// NormalizeTarget exposes normalizeTarget to the external tests.
var NormalizeTarget = normalizeTarget

// SplitChunks exposes splitChunks to the external tests: each chunk's request and the
// offset of its first case in req.Cases.
func SplitChunks(req *scorewirev1.RunSuiteRequest, opts ShardOptions) ([]*scorewirev1.RunSuiteRequest, []int32, error) {
	chunks, err := splitChunks(req, opts)
	if err != nil {
		return nil, nil, err
	}
	reqs, offsets := make([]*scorewirev1.RunSuiteRequest, len(chunks)), make([]int32, len(chunks))
	for i, ch := range chunks {
		reqs[i], offsets[i] = ch.req, ch.offset
	}
	return reqs, offsets, nil
}

// JobMessages exposes jobMessages to the external tests.
var JobMessages = jobMessages
