package opic

import "unsafe"

// Names interns page names (URLs or any strings) as dense uint32 ids. The
// bytes of the names are copied into large chunks that are never moved, and
// the index map and the id table share them, so a name is stored once and a
// page costs no allocation of its own.
type Names struct {
	names []string
	index map[string]uint32
	chunk []byte // free room of the current chunk
}

const nameChunk = 1 << 20

// Len returns the number of names.
func (ns *Names) Len() int { return len(ns.names) }

// Name returns the name of id.
func (ns *Names) Name(id uint32) string { return ns.names[id] }

// Lookup returns the id of name and whether it is known.
func (ns *Names) Lookup(name string) (uint32, bool) {
	id, ok := ns.index[name]
	return id, ok
}

// Intern returns the id of name, adding it if it is new.
func (ns *Names) Intern(name []byte) (id uint32, added bool) {
	if id, ok := ns.index[string(name)]; ok { // no allocation for the lookup
		return id, false
	}
	if ns.index == nil {
		ns.index = make(map[string]uint32)
	}
	s := ns.store(name)
	id = uint32(len(ns.names))
	ns.names = append(ns.names, s)
	ns.index[s] = id
	return id, true
}

// store copies b into the arena and returns it as a string that shares it.
func (ns *Names) store(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > nameChunk/8 {
		return string(b)
	}
	if len(ns.chunk) < len(b) {
		ns.chunk = make([]byte, nameChunk)
	}
	n := copy(ns.chunk, b)
	s := unsafe.String(&ns.chunk[0], n)
	ns.chunk = ns.chunk[n:]
	return s
}
