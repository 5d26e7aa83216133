// Package bincode encodes Go values in a compact binary form, by
// reflection, for caches a program writes and reads back itself: the
// scan cache of the issues (engine/issues). It stands in for
// encoding/gob, whose start-up work (type registrations, at package
// initialisation) every command paid, used or not.
//
// A Codec is made for one type and checks it once: every field exported,
// every kind one it knows (bool, integers, floats, strings, pointers,
// slices, maps, structs, time.Time, and an empty interface holding a
// bool, int, float64 or string). The data starts with a fingerprint of
// the type's shape, its fields' names and kinds: data of a type that has
// changed since it was written is ErrShape, never decoded into the wrong
// fields. Nil and empty slices and maps stay apart, as do nil pointers.
package bincode

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"
)

var (
	// ErrShape is data written from a type of another shape, or not
	// written by a Codec at all.
	ErrShape = errors.New("bincode: data of another type or format")
	// ErrData is data cut short or damaged.
	ErrData = errors.New("bincode: data cut short or damaged")
)

// magic starts every encoding; a change to the encoding changes it.
const magic = "bincode1"

// Codec encodes and decodes values of type T.
type Codec[T any] struct {
	c      *codec
	header []byte
}

// New checks T and makes its codec. A type it cannot encode is an error
// naming the field.
func New[T any]() (*Codec[T], error) {
	var shape strings.Builder
	c, err := compile(reflect.TypeFor[T](), &shape, map[reflect.Type]*codec{}, "")
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(shape.String()))
	return &Codec[T]{c: c, header: append([]byte(magic), sum[:8]...)}, nil
}

// Marshal encodes v.
func (c *Codec[T]) Marshal(v *T) ([]byte, error) {
	e := &encoder{buf: append(make([]byte, 0, 4096), c.header...)}
	c.c.enc(e, reflect.ValueOf(v).Elem())
	if e.err != nil {
		return nil, e.err
	}
	return e.buf, nil
}

// Unmarshal decodes data, which Marshal made, into v.
func (c *Codec[T]) Unmarshal(data []byte, v *T) error {
	if !bytes.HasPrefix(data, c.header) {
		return ErrShape
	}
	d := &decoder{data: data[len(c.header):]}
	c.c.dec(d, reflect.ValueOf(v).Elem())
	if d.err == nil && len(d.data) != 0 {
		d.err = ErrData
	}
	return d.err
}

type encoder struct {
	buf []byte
	err error
}

func (e *encoder) uint(x uint64) { e.buf = binary.AppendUvarint(e.buf, x) }
func (e *encoder) int(x int64)   { e.buf = binary.AppendVarint(e.buf, x) }
func (e *encoder) str(s string) {
	e.uint(uint64(len(s)))
	e.buf = append(e.buf, s...)
}

type decoder struct {
	data []byte
	err  error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = ErrData
	}
	d.data = nil
}

func (d *decoder) uint() uint64 {
	x, n := binary.Uvarint(d.data)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.data = d.data[n:]
	return x
}

func (d *decoder) int() int64 {
	x, n := binary.Varint(d.data)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.data = d.data[n:]
	return x
}

func (d *decoder) bytes(n uint64) []byte {
	if n > uint64(len(d.data)) {
		d.fail()
		return nil
	}
	b := d.data[:n]
	d.data = d.data[n:]
	return b
}

func (d *decoder) str() string { return string(d.bytes(d.uint())) }

// length reads the length of a slice or map, written plus one (0: nil);
// ok is false for nil. A length past what is left of the data is damage,
// not an allocation to make.
func (d *decoder) length() (n int, ok bool) {
	x := d.uint()
	if x == 0 {
		return 0, false
	}
	if x-1 > uint64(len(d.data)) {
		d.fail()
		return 0, false
	}
	return int(x - 1), true
}

// codec is the encoder and decoder of one type. A pointer to it is
// shared before its functions are set, so that a type can hold itself.
type codec struct {
	enc func(*encoder, reflect.Value)
	dec func(*decoder, reflect.Value)
}

func compile(t reflect.Type, shape *strings.Builder, seen map[reflect.Type]*codec, at string) (*codec, error) {
	if c, ok := seen[t]; ok {
		fmt.Fprintf(shape, "@%s", t)
		return c, nil
	}
	c := &codec{}
	seen[t] = c
	if t == reflect.TypeFor[time.Time]() {
		shape.WriteString("time")
		c.enc = func(e *encoder, v reflect.Value) {
			b, err := v.Interface().(time.Time).MarshalBinary()
			if err != nil && e.err == nil {
				e.err = fmt.Errorf("bincode: %w", err)
			}
			e.uint(uint64(len(b)))
			e.buf = append(e.buf, b...)
		}
		c.dec = func(d *decoder, v reflect.Value) {
			b := d.bytes(d.uint())
			if d.err != nil {
				return
			}
			if err := v.Addr().Interface().(*time.Time).UnmarshalBinary(b); err != nil {
				d.fail()
			}
		}
		return c, nil
	}
	shape.WriteString(t.Kind().String())
	switch t.Kind() {
	case reflect.Bool:
		c.enc = func(e *encoder, v reflect.Value) {
			e.buf = append(e.buf, boolByte(v.Bool()))
		}
		c.dec = func(d *decoder, v reflect.Value) { v.SetBool(d.uint() != 0) }
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		c.enc = func(e *encoder, v reflect.Value) { e.int(v.Int()) }
		c.dec = func(d *decoder, v reflect.Value) { v.SetInt(d.int()) }
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		c.enc = func(e *encoder, v reflect.Value) { e.uint(v.Uint()) }
		c.dec = func(d *decoder, v reflect.Value) { v.SetUint(d.uint()) }
	case reflect.Float32, reflect.Float64:
		c.enc = func(e *encoder, v reflect.Value) {
			e.buf = binary.LittleEndian.AppendUint64(e.buf, math.Float64bits(v.Float()))
		}
		c.dec = func(d *decoder, v reflect.Value) {
			if b := d.bytes(8); b != nil {
				v.SetFloat(math.Float64frombits(binary.LittleEndian.Uint64(b)))
			}
		}
	case reflect.String:
		c.enc = func(e *encoder, v reflect.Value) { e.str(v.String()) }
		c.dec = func(d *decoder, v reflect.Value) { v.SetString(d.str()) }
	case reflect.Interface:
		if t.NumMethod() != 0 {
			return nil, fmt.Errorf("bincode: %s: interface %s: only an empty interface can be encoded", at, t)
		}
		c.enc, c.dec = encodeScalar, decodeScalar
	case reflect.Pointer:
		shape.WriteByte('(')
		elem, err := compile(t.Elem(), shape, seen, at)
		if err != nil {
			return nil, err
		}
		shape.WriteByte(')')
		c.enc = func(e *encoder, v reflect.Value) {
			e.buf = append(e.buf, boolByte(!v.IsNil()))
			if !v.IsNil() {
				elem.enc(e, v.Elem())
			}
		}
		c.dec = func(d *decoder, v reflect.Value) {
			if d.uint() != 0 && d.err == nil {
				v.Set(reflect.New(t.Elem()))
				elem.dec(d, v.Elem())
			}
		}
	case reflect.Slice:
		shape.WriteByte('(')
		elem, err := compile(t.Elem(), shape, seen, at+"[]")
		if err != nil {
			return nil, err
		}
		shape.WriteByte(')')
		c.enc = func(e *encoder, v reflect.Value) {
			if v.IsNil() {
				e.uint(0)
				return
			}
			e.uint(uint64(v.Len()) + 1)
			for i := range v.Len() {
				elem.enc(e, v.Index(i))
			}
		}
		c.dec = func(d *decoder, v reflect.Value) {
			n, ok := d.length()
			if !ok {
				return
			}
			s := reflect.MakeSlice(t, n, n)
			for i := 0; i < n && d.err == nil; i++ {
				elem.dec(d, s.Index(i))
			}
			v.Set(s)
		}
	case reflect.Map:
		shape.WriteByte('(')
		key, err := compile(t.Key(), shape, seen, at+"[key]")
		if err != nil {
			return nil, err
		}
		shape.WriteByte(',')
		val, err := compile(t.Elem(), shape, seen, at+"[value]")
		if err != nil {
			return nil, err
		}
		shape.WriteByte(')')
		c.enc = func(e *encoder, v reflect.Value) {
			if v.IsNil() {
				e.uint(0)
				return
			}
			e.uint(uint64(v.Len()) + 1)
			for it := v.MapRange(); it.Next(); {
				key.enc(e, it.Key())
				val.enc(e, it.Value())
			}
		}
		c.dec = func(d *decoder, v reflect.Value) {
			n, ok := d.length()
			if !ok {
				return
			}
			m := reflect.MakeMapWithSize(t, n)
			k, x := reflect.New(t.Key()).Elem(), reflect.New(t.Elem()).Elem()
			for i := 0; i < n && d.err == nil; i++ {
				k.SetZero()
				x.SetZero()
				key.dec(d, k)
				val.dec(d, x)
				m.SetMapIndex(k, x)
			}
			v.Set(m)
		}
	case reflect.Struct:
		shape.WriteByte('{')
		fields := make([]*codec, t.NumField())
		for i := range fields {
			f := t.Field(i)
			if !f.IsExported() {
				return nil, fmt.Errorf("bincode: %s.%s: unexported fields cannot be encoded", t, f.Name)
			}
			fmt.Fprintf(shape, "%s ", f.Name)
			fc, err := compile(f.Type, shape, seen, t.String()+"."+f.Name)
			if err != nil {
				return nil, err
			}
			shape.WriteByte(';')
			fields[i] = fc
		}
		shape.WriteByte('}')
		c.enc = func(e *encoder, v reflect.Value) {
			for i, f := range fields {
				f.enc(e, v.Field(i))
			}
		}
		c.dec = func(d *decoder, v reflect.Value) {
			for i, f := range fields {
				f.dec(d, v.Field(i))
			}
		}
	default:
		return nil, fmt.Errorf("bincode: %s: %s cannot be encoded", at, t)
	}
	return c, nil
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// The scalars an empty interface may hold, as a YAML or JSON parser
// gives them.
const (
	scalarNil = iota
	scalarFalse
	scalarTrue
	scalarInt
	scalarFloat
	scalarString
)

func encodeScalar(e *encoder, v reflect.Value) {
	if v.IsNil() {
		e.buf = append(e.buf, scalarNil)
		return
	}
	switch x := v.Elem().Interface().(type) {
	case bool:
		e.buf = append(e.buf, scalarFalse+boolByte(x))
	case int:
		e.buf = append(e.buf, scalarInt)
		e.int(int64(x))
	case float64:
		e.buf = append(e.buf, scalarFloat)
		e.buf = binary.LittleEndian.AppendUint64(e.buf, math.Float64bits(x))
	case string:
		e.buf = append(e.buf, scalarString)
		e.str(x)
	default:
		if e.err == nil {
			e.err = fmt.Errorf("bincode: an interface holding %T cannot be encoded (only bool, int, float64 and string)", x)
		}
	}
}

func decodeScalar(d *decoder, v reflect.Value) {
	tag := d.bytes(1)
	if tag == nil {
		return
	}
	var x any
	switch tag[0] {
	case scalarNil:
		return
	case scalarFalse, scalarTrue:
		x = tag[0] == scalarTrue
	case scalarInt:
		x = int(d.int())
	case scalarFloat:
		b := d.bytes(8)
		if b == nil {
			return
		}
		x = math.Float64frombits(binary.LittleEndian.Uint64(b))
	case scalarString:
		x = d.str()
	default:
		d.fail()
		return
	}
	v.Set(reflect.ValueOf(x))
}
