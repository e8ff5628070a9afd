package protocols

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed schema/capsule.schema.json
var capsuleSchemaJSON []byte

// CapsuleSchema returns the JSON Schema (draft 2020-12) of the result capsule.
func CapsuleSchema() []byte { return append([]byte(nil), capsuleSchemaJSON...) }

var capsuleSchema = sync.OnceValue(func() *jsonschema.Schema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(capsuleSchemaJSON))
	if err != nil {
		panic("protocols: embedded capsule schema: " + err.Error())
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("summit:capsule.schema.json", doc); err != nil {
		panic("protocols: embedded capsule schema: " + err.Error())
	}
	return c.MustCompile("summit:capsule.schema.json")
})

// ValidateCapsuleJSON checks raw JSON against the capsule schema and returns one message per
// violation, each naming the JSON pointer of the offending value.
func ValidateCapsuleJSON(raw []byte) []string {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return []string{"capsule is not valid JSON: " + err.Error()}
	}
	err = capsuleSchema().Validate(doc)
	if err == nil {
		return nil
	}
	return violations(err, "capsule ")
}

// violations turns a schema validation error into one message per failing leaf, each naming
// the JSON pointer of the offending value after prefix.
func violations(err error, prefix string) []string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{err.Error()}
	}
	var out []string
	var walk func(u *jsonschema.OutputUnit)
	walk = func(u *jsonschema.OutputUnit) {
		if u.Error != nil && len(u.Errors) == 0 {
			loc := u.InstanceLocation
			if loc == "" {
				loc = "/"
			}
			out = append(out, prefix+loc+": "+u.Error.String())
		}
		for i := range u.Errors {
			walk(&u.Errors[i])
		}
	}
	walk(ve.BasicOutput())
	if len(out) == 0 {
		out = append(out, ve.Error())
	}
	return out
}

// Severities are the finding severities a capsule may use.
var Severities = []string{"critical", "high", "medium", "low", "info"}

var timestampRE = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2})?`)

// CheckCapsule applies the contract's rules beyond the schema's shape (seed 000): the schema
// itself, findings that cite no evidence id or file, and timestamps (outputs must be
// deterministic). It returns warnings; the capsule is kept either way.
func CheckCapsule(c Capsule) []string {
	var out []string
	if raw, err := json.Marshal(c); err == nil {
		out = append(out, ValidateCapsuleJSON(raw)...)
	}
	for i, f := range c.Findings {
		if len(f.EvidenceIDs) == 0 && len(f.FileRefs) == 0 {
			out = append(out, fmt.Sprintf("finding %d (%q) cites no evidence id or file (evidence first)", i+1, clip(f.Summary)))
		}
	}
	stamp := func(where, text string) {
		if ts := timestampRE.FindString(text); ts != "" {
			out = append(out, fmt.Sprintf("%s contains a timestamp (%s): outputs must be deterministic", where, ts))
		}
	}
	stamp("summary", c.Summary)
	for i, f := range c.Findings {
		stamp(fmt.Sprintf("finding %d", i+1), f.Summary)
	}
	return out
}

func clip(s string) string {
	if len(s) > 40 {
		return strings.TrimSpace(s[:40]) + "…"
	}
	return s
}
