package session

import (
	"reflect"
	"testing"
	"time"
	"unsafe"
)

// TestSameSubagentCoversEveryField: changing any one field of a Subagent makes sameSubagent
// see a change, so a checkpoint never shares a subagent that changed (a field added to
// Subagent without a line in sameSubagent fails here).
func TestSameSubagentCoversEveryField(t *testing.T) {
	base := Subagent{Tools: []string{"a"}, ArtifactPaths: []string{"b"}, Transcript: &Transcript{}}
	if !sameSubagent(&base, &base) {
		t.Fatal("a subagent differs from itself")
	}
	typ := reflect.TypeOf(base)
	for i := 0; i < typ.NumField(); i++ {
		c := base
		f := reflect.NewAt(typ.Field(i).Type, unsafe.Add(unsafe.Pointer(&c), typ.Field(i).Offset)).Elem()
		switch f.Kind() {
		case reflect.String:
			f.SetString("x")
		case reflect.Int, reflect.Int64:
			f.SetInt(f.Int() + 1)
		case reflect.Uint64:
			f.SetUint(f.Uint() + 1)
		case reflect.Bool:
			f.SetBool(!f.Bool())
		case reflect.Pointer:
			if f.Type() == reflect.TypeOf(&Transcript{}) {
				tr := &Transcript{}
				tr.add(Item{Kind: TranscriptMessage}, "x", textRef{})
				f.Set(reflect.ValueOf(tr))
			} else {
				f.Set(reflect.New(f.Type().Elem()))
			}
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		case reflect.Struct:
			switch v := f.Addr().Interface().(type) {
			case *time.Time:
				*v = time.Unix(1, 0)
			case *Tokens:
				v.Input++
			default:
				t.Fatalf("field %s: no way to change a %s here", typ.Field(i).Name, f.Type())
			}
		default:
			t.Fatalf("field %s: no way to change a %s here", typ.Field(i).Name, f.Type())
		}
		if sameSubagent(&c, &base) {
			t.Errorf("sameSubagent misses a change of %s", typ.Field(i).Name)
		}
	}
}
