package sim

import (
	"reflect"
	"testing"
)

// TestCollStateReset: reset leaves every field of a collective's state
// (the call's included) at its zero value, its slices empty: a field
// added to collState or collCall and not to reset fails here.
func TestCollStateReset(t *testing.T) {
	var st collState
	fill(t, reflect.ValueOf(&st).Elem())
	st.reset()
	checkReset(t, "collState", reflect.ValueOf(st))
}

// fill sets every field of struct v to a value other than its zero.
func fill(t *testing.T, v reflect.Value) {
	for i := range v.NumField() {
		f := v.Field(i)
		f = reflect.NewAt(f.Type(), f.Addr().UnsafePointer()).Elem() // unexported fields too
		switch f.Kind() {
		case reflect.Struct:
			fill(t, f)
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		case reflect.Map:
			f.Set(reflect.MakeMap(f.Type()))
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			f.SetInt(1)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			f.SetUint(1)
		case reflect.Float64:
			f.SetFloat(1)
		default:
			t.Fatalf("%s.%s: a field of kind %s the test cannot fill", v.Type(), v.Type().Field(i).Name, f.Kind())
		}
	}
}

// checkReset reports the fields of struct v that are not zero (slices:
// not empty).
func checkReset(t *testing.T, path string, v reflect.Value) {
	for i := range v.NumField() {
		f, name := v.Field(i), path+"."+v.Type().Field(i).Name
		switch {
		case f.Kind() == reflect.Struct:
			checkReset(t, name, f)
		case f.Kind() == reflect.Slice:
			if f.Len() != 0 {
				t.Errorf("%s: %d elements left by reset", name, f.Len())
			}
		case !f.IsZero():
			t.Errorf("%s: not reset", name)
		}
	}
}
