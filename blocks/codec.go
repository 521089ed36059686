package blocks

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// ErrInvalid reports a line or stored value that is not a block: not a JSON
// object, a field of the wrong JSON type, or a missing or empty kind.
var ErrInvalid = errors.New("blocks: invalid block")

// AppendNDJSON appends b in the compact wire form followed by '\n' and
// returns the extended buffer. It does not allocate when dst has room.
//
// Empty fields are omitted; ok is always written on tool_result blocks.
// Strings are escaped as encoding/json escapes them (without HTML escaping).
// Data is written compacted; if it is not one valid JSON value it is written
// as a JSON string instead, so the output is always valid JSON.
func AppendNDJSON(dst []byte, b *Block) []byte {
	return append(appendBlock(dst, b, wireForm), '\n')
}

// ParseNDJSON decodes one line of the compact wire form. A trailing newline
// is allowed and unknown keys are ignored. Errors wrap ErrInvalid.
func ParseNDJSON(line []byte) (Block, error) {
	var b Block
	if err := decodeBlock(&b, line, wireForm); err != nil {
		return Block{}, err
	}
	return b, nil
}

// MarshalJSON encodes b in the verbose stored form, with the same rules as
// AppendNDJSON but with the stored keys and no trailing newline.
func (b Block) MarshalJSON() ([]byte, error) {
	return appendBlock(make([]byte, 0, 64+len(b.Content)+len(b.Data)), &b, storedForm), nil
}

// UnmarshalJSON decodes the verbose stored form. As encoding/json expects
// of Unmarshalers, the literal null leaves b unchanged. Errors wrap ErrInvalid.
func (b *Block) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	var nb Block
	if err := decodeBlock(&nb, data, storedForm); err != nil {
		return err
	}
	*b = nb
	return nil
}

// An Encoder writes blocks as NDJSON lines to a writer, reusing one buffer.
// It is not safe for concurrent use.
type Encoder struct {
	w   io.Writer
	buf []byte
}

// NewEncoder returns an Encoder that writes to w.
func NewEncoder(w io.Writer) *Encoder { return &Encoder{w: w} }

// Encode writes b as one line with a single Write call and returns the
// writer's error, if any.
func (e *Encoder) Encode(b *Block) error {
	e.buf = AppendNDJSON(e.buf[:0], b)
	_, err := e.w.Write(e.buf)
	return err
}

// appendBlock is the one encoder behind both forms.
func appendBlock(dst []byte, b *Block, f form) []byte {
	dst = append(dst, '{')
	for i := range fields {
		fd := &fields[i]
		switch fd.typ {
		case stringField:
			s := *fd.str(b)
			if fd.out != nil {
				s = fd.out(b)
			}
			if s == "" && i != 0 { // the kind is always written
				continue
			}
			dst = appendKey(dst, fd.keys[f], i == 0)
			dst = appendString(dst, s)
		case boolField:
			v := *fd.flag(b)
			if !v && (fd.always == "" || b.Kind != fd.always) {
				continue
			}
			dst = appendKey(dst, fd.keys[f], false)
			dst = strconv.AppendBool(dst, v)
		case dataField:
			if len(b.Data) == 0 {
				continue
			}
			dst = appendKey(dst, fd.keys[f], false)
			if out, ok := appendData(dst, b.Data); ok {
				dst = out
			} else {
				dst = appendString(dst, b.Data)
			}
		case metaField:
			if b.Meta == nil {
				continue
			}
			dst = appendKey(dst, fd.keys[f], false)
			dst = appendMeta(dst, b.Meta)
		}
	}
	return append(dst, '}')
}

// appendKey appends `"key":`, preceded by a comma unless it is the first.
// Keys are plain ASCII and need no escaping.
func appendKey(dst []byte, key string, first bool) []byte {
	if !first {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, key...)
	return append(dst, '"', ':')
}

func appendMeta(dst []byte, m *MetaInfo) []byte {
	dst = append(dst, '{')
	first := true
	for i := range metaFields {
		mf := &metaFields[i]
		if mf.str != nil {
			s := *mf.str(m)
			if s == "" {
				continue
			}
			dst = appendKey(dst, mf.key, first)
			dst = appendString(dst, s)
		} else {
			n := *mf.num(m)
			if n == 0 {
				continue
			}
			dst = appendKey(dst, mf.key, first)
			dst = strconv.AppendInt(dst, n, 10)
		}
		first = false
	}
	return append(dst, '}')
}

// decodeBlock is the one decoder behind both forms. Decoding is not on the
// streaming hot path, so it leans on encoding/json for string unescaping.
func decodeBlock(b *Block, data []byte, f form) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	for i := range fields {
		fd := &fields[i]
		raw, ok := obj[fd.keys[f]]
		if !ok {
			continue
		}
		var err error
		switch fd.typ {
		case stringField:
			err = json.Unmarshal(raw, fd.str(b))
		case boolField:
			err = json.Unmarshal(raw, fd.flag(b))
		case dataField:
			// Canonicalize so that decode(encode(decode(x))) == decode(x).
			d, ok := appendData(nil, raw)
			if !ok {
				err = fmt.Errorf("data nested deeper than %d levels", maxDataDepth)
				break
			}
			b.Data = d
		case metaField:
			err = json.Unmarshal(raw, &b.Meta)
		}
		if err != nil {
			return fmt.Errorf("%w: key %q: %w", ErrInvalid, fd.keys[f], err)
		}
	}
	if b.Kind == "" {
		return fmt.Errorf("%w: missing kind (key %q)", ErrInvalid, fields[0].keys[f])
	}
	b.upgrade()
	return nil
}
