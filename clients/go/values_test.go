package scorewire_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	scorewire "github.com/scorewire/scorewire/clients/go"
	scorewirev1 "github.com/scorewire/scorewire/clients/go/gen/scorewire/v1"
)

// The Go values people write convert: []string (structpb.NewStruct refused it with
// `proto: invalid type: []string`), []int, nested maps and structs with json tags.
func TestCheckAcceptsTheGoValuesPeopleWrite(t *testing.T) {
	type lengthParams struct {
		Minimum int `json:"minimum"`
		Maximum int `json:"maximum,omitempty"`
	}
	cases := []struct {
		name   string
		params any
		key    string
		want   string // the key's value, as protojson writes it
	}{
		{"string slice", map[string]any{"needles": []string{"Paris", "Lyon"}}, "needles", `["Paris","Lyon"]`},
		{"int slice", map[string]any{"ns": []int{1, 2}}, "ns", `[1,2]`},
		{"nested map", map[string]any{"a": map[string][]string{"b": {"c"}}}, "a", `{"b":["c"]}`},
		{"struct with json tags", lengthParams{Minimum: 1}, "minimum", `1`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := scorewire.Check("x", tc.params)
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			got, err := spec.GetParams().GetFields()[tc.key].MarshalJSON()
			if err != nil || strings.ReplaceAll(string(got), " ", "") != tc.want {
				t.Errorf("params[%q] = %s, want %s (%v)", tc.key, got, tc.want, err)
			}
		})
	}
	// omitempty is honoured: the struct's zero Maximum is not sent.
	spec := scorewire.MustCheck("output_length", lengthParams{Minimum: 1})
	if _, ok := spec.GetParams().GetFields()["maximum"]; ok {
		t.Error("omitempty field was sent")
	}
}

// A value that is not a JSON object is an error naming the check, and MustCheck panics.
func TestCheckRefusesNonObjectParamsNamingTheCheck(t *testing.T) {
	_, err := scorewire.Check("contains", []string{"a"})
	if err == nil || !strings.Contains(err.Error(), `"contains"`) {
		t.Fatalf("Check with a slice: err = %v", err)
	}
	_, err = scorewire.Check("contains", map[string]any{"f": func() {}})
	if err == nil {
		t.Fatal("Check with a func value: no error")
	}
	defer func() {
		if recover() == nil {
			t.Error("MustCheck did not panic")
		}
	}()
	scorewire.MustCheck("contains", 3)
}

func TestValueAcceptsSlicesAndStructs(t *testing.T) {
	v := scorewire.MustValue(map[string]any{"tags": []string{"a"}, "n": []int{1}})
	if got := v.GetStructValue().GetFields()["tags"].GetListValue().GetValues()[0].GetStringValue(); got != "a" {
		t.Errorf("tags[0] = %q", got)
	}
	if scorewire.MustValue(nil).GetNullValue() != 0 || scorewire.MustValue("s").GetStringValue() != "s" {
		t.Error("nil or string did not convert")
	}
}

// MustCheck inline with []string params, scored by the real server (the README's form).
func TestMustCheckInlineIsScoredByTheServer(t *testing.T) {
	c := dial(t)
	resp, err := c.Score(context.Background(), &scorewirev1.ScoreRequest{
		Output: scorewire.Text("Paris and Lyon"),
		Checks: []*scorewirev1.CheckSpec{scorewire.MustCheck("contains", map[string]any{"needles": []string{"Paris", "Lyon"}})},
	})
	if err != nil || !resp.GetPassed() {
		t.Fatalf("Score = %v, %v", resp, err)
	}
}

// The error string states each field violation once, though the server's message
// already lists the first few.
func TestErrorStringNamesEachViolationOnce(t *testing.T) {
	c := dial(t)
	_, err := c.Score(context.Background(), &scorewirev1.ScoreRequest{Output: scorewire.Text("x"), Checks: badChecks})
	var swErr *scorewire.Error
	if !errors.As(err, &swErr) || len(swErr.FieldViolations) < 2 {
		t.Fatalf("err = %v", err)
	}
	msg := err.Error()
	for _, v := range swErr.FieldViolations {
		if n := strings.Count(msg, v.Field+":"); n != 1 {
			t.Errorf("%q appears %d times in %q", v.Field, n, msg)
		}
	}
}

func TestCheckWithNilMapHasNoParams(t *testing.T) {
	var none map[string]any
	if spec := scorewire.MustCheck("x", none); spec.GetParams() != nil {
		t.Errorf("params = %v", spec.GetParams())
	}
}
