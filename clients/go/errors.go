package scorewire

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// FieldViolation is one offending field of a request, as the server named it.
type FieldViolation struct {
	// Field is the field's path, such as `checks[2].params.pattern`.
	Field string
	// Description says what is wrong with it.
	Description string
}

// Error is a failed scorewire call: its gRPC code and message, and for
// INVALID_ARGUMENT (or RESOURCE_EXHAUSTED) the google.rpc.BadRequest field violations.
// Match it with errors.As; status.Code(err) also works on it.
type Error struct {
	// Code is the gRPC status code.
	Code codes.Code
	// Message is the status message.
	Message string
	// FieldViolations lists every offending field, in the server's order.
	FieldViolations []FieldViolation
	status          *status.Status
}

// Error describes the failure once: the server's message, then each field violation
// the message does not already state (the server's INVALID_ARGUMENT message lists the
// first few itself).
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "scorewire: %s: %s", e.Code, e.Message)
	for _, v := range e.FieldViolations {
		if strings.Contains(e.Message, v.Description) && strings.Contains(e.Message, v.Field) {
			continue
		}
		fmt.Fprintf(&b, "; %s: %s", v.Field, v.Description)
	}
	return b.String()
}

// GRPCStatus returns the status the server sent, details included.
func (e *Error) GRPCStatus() *status.Status {
	if e.status == nil {
		return status.New(e.Code, e.Message)
	}
	return e.status
}

// wrap turns a gRPC error into *Error; nil and io.EOF pass through unchanged.
func wrap(err error) error {
	if err == nil {
		return nil
	}
	var already *Error
	if errors.As(err, &already) {
		return err
	}
	st, ok := status.FromError(err)
	if !ok {
		return err // io.EOF, or a local error that is not a status
	}
	return fromStatus(st)
}

func fromStatus(st *status.Status) *Error {
	e := &Error{Code: st.Code(), Message: st.Message(), status: st}
	for _, d := range st.Details() {
		if bad, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range bad.GetFieldViolations() {
				e.FieldViolations = append(e.FieldViolations, FieldViolation{Field: v.GetField(), Description: v.GetDescription()})
			}
		}
	}
	return e
}
