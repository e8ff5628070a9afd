package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// param declares one argument of a tool: its JSON key, its JSON Schema type ("string" or
// "integer") and whether it is required. The tool's spec and the checks of decode both come
// from this one declaration, so what the model is told is what is enforced.
type param struct {
	name, typ, desc string
	required        bool
}

// args is a decoded argument object. decode has checked every value, so a present key holds a
// string or an int as its param says, and an absent optional key reads as the zero value.
type args map[string]any

func (a args) str(k string) string { v, _ := a[k].(string); return v }

func (a args) int(k string) (int, bool) { v, ok := a[k].(int); return v, ok }

// decode parses the argument text against the tool's params. Empty text is an empty object.
// Every problem is reported precisely: text that is not one JSON object, an unknown key, a
// value of the wrong type, a missing required key. A null optional value counts as absent
// (some providers send null for every optional parameter).
func decode(text string, params []param) (args, error) {
	if strings.TrimSpace(text) == "" {
		text = "{}"
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("arguments are not valid JSON: %v", err)
	}
	if err := dec.Decode(new(any)); !errors.Is(err, io.EOF) {
		return nil, errors.New("arguments are not valid JSON: data after the object")
	}
	raw, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("arguments must be a JSON object, got %s", jsonType(v))
	}
	known := make([]string, len(params))
	for i, p := range params {
		known[i] = p.name
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the first problem reported does not depend on map order
	a := args{}
	for _, k := range keys {
		i := slices.Index(known, k)
		if i < 0 {
			return nil, fmt.Errorf("unknown argument %q (known: %s)", k, strings.Join(known, ", "))
		}
		p, val := params[i], raw[k]
		if val == nil && !p.required {
			continue
		}
		got, ok := convert(p.typ, val)
		if !ok {
			return nil, fmt.Errorf("argument %q must be %s, got %s", k, article(p.typ), jsonType(val))
		}
		a[k] = got
	}
	for _, p := range params {
		if _, ok := a[p.name]; p.required && !ok {
			return nil, fmt.Errorf("missing required argument %q", p.name)
		}
	}
	return a, nil
}

// convert checks v against a param type and returns it as the Go value args holds. Integers
// may be written as integral floats (10.0) but must be exact in a float64.
func convert(typ string, v any) (any, bool) {
	switch typ {
	case "string":
		s, ok := v.(string)
		return s, ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return nil, false
		}
		f, err := n.Float64()
		if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return nil, false
		}
		return int(f), true
	}
	panic("tools: unknown param type " + typ) // a bug in the registry, not bad input
}

func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "the number " + v.String()
	case []any:
		return "an array"
	}
	return "an object"
}

func article(typ string) string {
	if typ == "integer" {
		return "an integer"
	}
	return "a " + typ
}
