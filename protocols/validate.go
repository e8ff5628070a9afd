package protocols

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

//go:embed schema/capsule.schema.json
var capsuleSchemaJSON []byte

// CapsuleSchema returns the JSON Schema (draft 2020-12) of the result capsule.
func CapsuleSchema() []byte { return append([]byte(nil), capsuleSchemaJSON...) }

var capsuleSchema = sync.OnceValue(func() *schemaValidator {
	v, err := compileSchema(capsuleSchemaJSON)
	if err != nil {
		panic("protocols: embedded capsule schema: " + err.Error())
	}
	return v
})

// ValidateCapsuleJSON checks raw JSON against the capsule schema and returns one message per
// violation, each naming the JSON pointer of the offending value.
func ValidateCapsuleJSON(raw []byte) []string {
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return []string{"capsule is not valid JSON: " + err.Error()}
	}
	return capsuleSchema().violations(doc, "capsule ")
}

// schemaValidator is a compiled JSON Schema (draft 2020-12, or draft-07 where $schema says
// so). The schemas are validated with github.com/google/jsonschema-go, the library the MCP SDK
// already brings: one JSON Schema implementation in the binary, and one whose package
// initialises nothing (the previous one compiled every draft's meta-schemas at start-up, 4 ms
// of every summit command). That validator stops at the first violation and names it by
// schema path, so violations walks the schema to name each violation by the JSON pointer of
// the offending value instead.
type schemaValidator struct {
	root *jsonschema.Schema
	res  *jsonschema.Resolved
}

// compileSchema compiles a JSON Schema document. References that leave the document are
// refused (there is no loader: a manifest never makes summit fetch anything).
func compileSchema(raw []byte) (*schemaValidator, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	res, err := s.Resolve(nil)
	if err != nil {
		return nil, err
	}
	return &schemaValidator{root: &s, res: res}, nil
}

// violations returns nil for a valid instance (decoded JSON: maps, slices, float64, string,
// bool, nil), else one message per violation, "PREFIX/pointer: what is wrong", in document
// order.
func (v *schemaValidator) violations(inst any, prefix string) []string {
	err := v.res.Validate(inst)
	if err == nil {
		return nil
	}
	var out []string
	w := walker{draft: v.root.Schema, out: &out, compiled: map[*jsonschema.Schema]*compiled{}}
	w.locate(v.root, v.res, inst, "", err)
	for i, m := range out {
		if strings.HasPrefix(m, ": ") && strings.HasSuffix(prefix, " ") { // the document itself
			m = "/" + m
		}
		out[i] = prefix + m
	}
	return out
}

// walker places violations: where a schema's properties or items fail, it descends into them
// and reports there; what is left is the value's own (required, enum, type, a combinator).
type walker struct {
	draft    string // the root's $schema, given to each sub-schema compiled on its own
	out      *[]string
	compiled map[*jsonschema.Schema]*compiled // each sub-schema is compiled once per walk
}

// compiled is a sub-schema as compiled on its own (res nil: it does not compile alone).
type compiled struct {
	s   *jsonschema.Schema
	res *jsonschema.Resolved
}

func (w walker) full() bool { return len(*w.out) >= maxViolations }

// maxViolations bounds what one instance can report (a model can send an array of a million
// wrong items).
const maxViolations = 20

func (w walker) add(loc, msg string) {
	if len(*w.out) < maxViolations {
		*w.out = append(*w.out, loc+": "+msg)
	}
}

// locate reports the violations of inst, which failed s (compiled as res) with err, at loc.
func (w walker) locate(s *jsonschema.Schema, res *jsonschema.Resolved, inst any, loc string, err error) {
	n := len(*w.out)
	switch x := inst.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if w.full() {
				return
			}
			kloc := loc + "/" + pointerToken(k)
			if sub := s.Properties[k]; sub != nil {
				w.check(sub, x[k], kloc)
				continue
			}
			if s.AdditionalProperties == nil || matchesPattern(s, k) {
				continue
			}
			if isFalse(s.AdditionalProperties) {
				w.add(kloc, "not allowed (no such property)")
			} else {
				w.check(s.AdditionalProperties, x[k], kloc)
			}
		}
	case []any:
		if s.Items != nil {
			for i, e := range x[min(len(x), len(s.PrefixItems)):] {
				if w.full() {
					return
				}
				w.check(s.Items, e, loc+"/"+strconv.Itoa(i+len(s.PrefixItems)))
			}
		}
	}
	if own := w.own(s, inst); own != "" {
		w.add(loc, own)
	} else if len(*w.out) == n {
		// Nothing could be placed deeper (a $ref out of a sub-schema, say): the failure as
		// the validator said it.
		w.add(loc, leafMessage(err))
	}
}

// check compiles sub on its own and, when inst fails it, places the failure. A sub-schema that
// does not compile alone (it refers to the root's $defs) is left to its parent's report.
func (w walker) check(sub *jsonschema.Schema, inst any, loc string) {
	c := w.compiled[sub]
	if c == nil {
		cp := *sub
		if cp.Schema == "" {
			cp.Schema = w.draft
		}
		c = &compiled{s: &cp}
		c.res, _ = cp.Resolve(nil)
		w.compiled[sub] = c
	}
	if c.res == nil {
		return
	}
	if err := c.res.Validate(inst); err != nil {
		w.locate(c.s, c.res, inst, loc, err)
	}
}

// own is what inst breaks of s itself, its properties and items left out: "" when nothing.
func (w walker) own(s *jsonschema.Schema, inst any) string {
	c := *s
	c.Properties, c.PatternProperties, c.AdditionalProperties = nil, nil, nil
	c.Items, c.PrefixItems, c.AdditionalItems, c.ItemsArray = nil, nil, nil, nil
	c.UnevaluatedProperties, c.UnevaluatedItems = nil, nil
	if c.Schema == "" {
		c.Schema = w.draft
	}
	res, err := c.Resolve(nil)
	if err != nil {
		return ""
	}
	if err := res.Validate(inst); err != nil {
		return leafMessage(err)
	}
	return ""
}

// leafMessage is the validator's message without its chain of "validating <schema path>: "
// prefixes, and clipped: it can quote the offending value, which may be long.
func leafMessage(err error) string {
	m := err.Error()
	for strings.HasPrefix(m, "validating ") {
		_, rest, ok := strings.Cut(m, ": ")
		if !ok {
			break
		}
		m = rest
	}
	// Numbers as a person writes them: the validator prints bounds as %f and values as
	// fractions (0/1 is less than 1.000000).
	m = numberREs().whole.ReplaceAllString(m, "$1")
	m = numberREs().zeros.ReplaceAllString(m, "$1")
	if r := []rune(m); len(r) > 200 {
		m = string(r[:200]) + "…"
	}
	return m
}

// numberREs are compiled on first use: nothing in this package costs a command's start-up.
var numberREs = sync.OnceValue(func() struct{ whole, zeros *regexp.Regexp } {
	return struct{ whole, zeros *regexp.Regexp }{regexp.MustCompile(`\b(-?\d+)/1\b`), regexp.MustCompile(`\b(-?\d+)\.0{6}\b`)}
})

func matchesPattern(s *jsonschema.Schema, key string) bool {
	for p := range s.PatternProperties {
		if re, err := regexp.Compile(p); err == nil && re.MatchString(key) {
			return true
		}
	}
	return false
}

// isFalse reports whether s is the schema false (which jsonschema-go reads as {"not": {}}).
func isFalse(s *jsonschema.Schema) bool {
	return s.Not != nil && reflect.ValueOf(*s.Not).IsZero()
}

// pointerToken escapes a key for a JSON pointer (RFC 6901).
func pointerToken(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// Severities are the finding severities a capsule may use.
var Severities = []string{"critical", "high", "medium", "low", "info"}

var timestampRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2})?`) })

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
		if ts := timestampRE().FindString(text); ts != "" {
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
