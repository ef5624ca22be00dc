package scorewire

import (
	"google.golang.org/protobuf/types/known/structpb"

	scorewirev1 "github.com/scorewire/scorewire/clients/go/gen/scorewire/v1"
)

// Check builds a structured check of the given type from plain Go parameters
// (map[string]any holding JSON-compatible values).
func Check(checkType string, params map[string]any) (*scorewirev1.CheckSpec, error) {
	spec := &scorewirev1.CheckSpec{Type: checkType}
	if params != nil {
		s, err := structpb.NewStruct(params)
		if err != nil {
			return nil, err
		}
		spec.Params = s
	}
	return spec, nil
}

// Value converts a JSON-compatible Go value (nil, bool, numbers, string,
// map[string]any, []any) into a google.protobuf.Value for Sample.Input,
// Sample.Expected or Output.Value.
func Value(v any) (*structpb.Value, error) { return structpb.NewValue(v) }

// Text is an Output holding only its text.
func Text(text string) *scorewirev1.Output { return &scorewirev1.Output{Text: text} }
