package nldev

// Fields is embedded in every message: it records which attributes the
// kernel sent (iproute2 prints many fields only when present, so presence is
// part of the value) and keeps, as received, those the message type does not
// model.
type Fields struct {
	present attrSet
	Unknown []Attribute
}

// Has reports whether the message carried attribute a.
func (f *Fields) Has(a Attr) bool { return f.present.has(a) }

// Set marks attribute a as present, for building messages by hand.
func (f *Fields) Set(a Attr) { f.present.add(a) }

func (f *Fields) keep(a Attribute) { f.Unknown = append(f.Unknown, a) }

// encoder builds the attribute list of a message: a field is written when
// it was present or is non-zero.
type encoder struct {
	f   *Fields
	out []Attribute
}

func (e *encoder) want(t Attr, zero bool) bool { return !zero || e.f.Has(t) }

func (e *encoder) u8(t Attr, v uint8) {
	if e.want(t, v == 0) {
		e.out = append(e.out, U8(t, v))
	}
}

func (e *encoder) u32(t Attr, v uint32) {
	if e.want(t, v == 0) {
		e.out = append(e.out, U32(t, v))
	}
}

func (e *encoder) u64(t Attr, v uint64) {
	if e.want(t, v == 0) {
		e.out = append(e.out, U64(t, v))
	}
}

func (e *encoder) str(t Attr, v string) {
	if e.want(t, v == "") {
		e.out = append(e.out, String(t, v))
	}
}

func (e *encoder) bytes(t Attr, v []byte) {
	if e.want(t, v == nil) {
		e.out = append(e.out, Binary(t, v))
	}
}

func (e *encoder) add(a ...Attribute) { e.out = append(e.out, a...) }

func (e *encoder) done() []Attribute { return append(e.out, e.f.Unknown...) }

// unmarshaler is implemented by every message type.
type unmarshaler interface{ unmarshal([]Attribute) error }

func unmarshalBinary(m unmarshaler, b []byte) error {
	attrs, err := UnmarshalAttributes(b)
	if err != nil {
		return err
	}
	return m.unmarshal(attrs)
}

// need returns an error naming the first of attrs that f lacks.
func need(what string, f *Fields, attrs ...Attr) error {
	for _, a := range attrs {
		if !f.Has(a) {
			return malformed("%s without %v", what, a)
		}
	}
	return nil
}
